//! [`Graph`] of the run-time tier.

use kiln_core::Result;

use super::{Device, Graph, Stream, Tier, describe, dispatch, handle_basics, mismatch};

handle_basics!(Graph, graph, "graph");

impl Graph {
    /// The number of copies, fills, launches and products the graph holds.
    pub fn len(&self) -> usize {
        dispatch!(self, Graph, g => g.len())
    }

    /// Whether the graph holds no work.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of kernel launches and products among its steps.
    pub fn kernels(&self) -> usize {
        dispatch!(self, Graph, g => g.kernels())
    }

    /// Whether the backend runs the graph in a form of its own (a CUDA
    /// graph; on wgpu, launches checked and bound once).
    pub fn is_native(&self) -> bool {
        dispatch!(self, Graph, g => g.is_native())
    }

    /// Enqueue one replay of the graph on `stream`, a stream of the graph's
    /// device: see [`kiln_core::Graph::launch`]. A stream of another backend
    /// or device is an error naming both.
    ///
    /// # Examples
    /// ```
    /// use kiln::kernels::map::{map, MapOp};
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let s = dev.stream();
    /// let mut x = s.upload(&[1.0f32, 4.0])?;
    /// let mut y = s.alloc::<f32>(2)?;
    /// s.begin_capture()?;
    /// map(&s, MapOp::Sqrt, &x, &mut y)?;
    /// let graph = s.end_capture()?;
    /// graph.launch(&s)?;
    /// assert_eq!(y.to_vec()?, [1.0, 2.0]);
    /// x.copy_from_host(&[9.0, 16.0])?;             // a replay reads what the buffers hold then
    /// graph.launch(&s)?;
    /// assert_eq!(y.to_vec()?, [3.0, 4.0]);
    /// # Ok(()) }
    /// ```
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        dispatch!(self, Graph, g => match B::stream(stream) {
            Some(s) => g.launch(s),
            None => Err(mismatch("Graph::launch", describe(g.device()), stream.describe())),
        })
    }
}
