//! [`Stream`] of the run-time tier.

use kiln_core::{Element, LaunchConfig, Priority, Result};

use super::buffer::{typed_view, typed_view_mut};
use super::{
    Args, Buffer, Device, Event, Graph, HostBuffer, Kernel, Stream, Tier, View, ViewMut, describe, dispatch,
    handle_basics, mismatch,
};

handle_basics!(Stream, stream, "stream");

impl Stream {
    /// The priority after clamping to the device's range.
    pub fn priority(&self) -> Priority {
        dispatch!(self, Stream, s => s.priority())
    }

    /// "cpu:0 name", for errors.
    pub(crate) fn describe(&self) -> String {
        dispatch!(self, Stream, s => describe(s.device()))
    }

    /// Allocate `len` elements on this stream; the contents are unspecified until written.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        dispatch!(self, Stream, s => s.alloc(len).map(B::wrap_buffer))
    }

    /// Allocate `len` elements set to zero.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        dispatch!(self, Stream, s => s.alloc_zeroed(len).map(B::wrap_buffer))
    }

    /// Allocate a buffer holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        dispatch!(self, Stream, s => s.upload(data).map(B::wrap_buffer))
    }

    /// Copy host memory into a device range of the same length; `src` can
    /// be reused as soon as this returns.
    pub fn copy_to_device<T: Element>(&self, src: &[T], dst: &mut impl ViewMut<T>) -> Result<()> {
        let dst = dst.view_mut();
        dispatch!(self, Stream, s => {
            let mut dst = typed_view_mut("Stream::copy_to_device", s, dst)?;
            s.copy_to_device(src, &mut dst)
        })
    }

    /// Copy a device range into host memory of the same length; blocks
    /// until the data has arrived.
    pub fn copy_to_host<T: Element>(&self, src: &impl View<T>, dst: &mut [T]) -> Result<()> {
        let src = src.view();
        dispatch!(self, Stream, s => s.copy_to_host(&typed_view("Stream::copy_to_host", s, src)?, dst))
    }

    /// Enqueue a copy from a host buffer to a device range of the same
    /// length; returns at once. The host buffer's accessors wait for the copy.
    pub fn copy_to_device_async<T: Element>(&self, src: &HostBuffer<T>, dst: &mut impl ViewMut<T>) -> Result<()> {
        let dst = dst.view_mut();
        dispatch!(self, Stream, s => {
            let host = B::host(src)
                .ok_or_else(|| mismatch("Stream::copy_to_device_async", describe(s.device()), src.describe()))?;
            let mut dst = typed_view_mut("Stream::copy_to_device_async", s, dst)?;
            s.copy_to_device_async(host, &mut dst)
        })
    }

    /// Enqueue a copy from a device range to a host buffer of the same
    /// length; returns at once. The host buffer's accessors wait for the copy.
    pub fn copy_to_host_async<T: Element>(&self, src: &impl View<T>, dst: &mut HostBuffer<T>) -> Result<()> {
        let src = src.view();
        let other = dst.describe();
        dispatch!(self, Stream, s => {
            let src = typed_view("Stream::copy_to_host_async", s, src)?;
            let host = B::host_mut(dst)
                .ok_or_else(|| mismatch("Stream::copy_to_host_async", describe(s.device()), other))?;
            s.copy_to_host_async(&src, host)
        })
    }

    /// Enqueue a device-to-device copy between ranges of the same length.
    pub fn copy<T: Element>(&self, src: &impl View<T>, dst: &mut impl ViewMut<T>) -> Result<()> {
        let (src, dst) = (src.view(), dst.view_mut());
        dispatch!(self, Stream, s => {
            let src = typed_view("Stream::copy (source)", s, src)?;
            let mut dst = typed_view_mut("Stream::copy (destination)", s, dst)?;
            s.copy(&src, &mut dst)
        })
    }

    /// Enqueue a copy from a range on another device of this stream's
    /// backend into a range of this stream's device, of the same length
    /// (peer to peer on CUDA, staged through host memory elsewhere): see
    /// [`kiln_core::Stream::copy_from_peer`]. A source of another backend is
    /// an error naming both devices.
    pub fn copy_from_peer<T: Element>(&self, src: &impl View<T>, dst: &mut impl ViewMut<T>) -> Result<()> {
        let (src, dst) = (src.view(), dst.view_mut());
        dispatch!(self, Stream, s => {
            let src = B::view(src).map_err(|v| {
                mismatch("Stream::copy_from_peer (source)", describe(s.device()), v.describe())
            })?;
            let mut dst = typed_view_mut("Stream::copy_from_peer (destination)", s, dst)?;
            s.copy_from_peer(&src, &mut dst)
        })
    }

    /// Start capturing this stream's work into a graph: see
    /// [`kiln_core::Stream::begin_capture`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let s = dev.stream();
    /// let mut x = s.upload(&[1.0f32, 2.0])?;
    /// s.begin_capture()?;
    /// s.fill(&mut x, 3.0)?;
    /// let graph = s.end_capture()?;
    /// graph.launch(&s)?;
    /// assert_eq!(x.to_vec()?, [3.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn begin_capture(&self) -> Result<()> {
        dispatch!(self, Stream, s => s.begin_capture())
    }

    /// Whether this stream records its work into a graph.
    pub fn is_capturing(&self) -> bool {
        dispatch!(self, Stream, s => s.is_capturing())
    }

    /// End the capture begun on this stream and make its graph: see
    /// [`kiln_core::Stream::end_capture`].
    pub fn end_capture(&self) -> Result<Graph> {
        dispatch!(self, Stream, s => s.end_capture().map(B::wrap_graph))
    }

    /// Enqueue setting every element of a device range to `value`.
    pub fn fill<T: Element>(&self, dst: &mut impl ViewMut<T>, value: T) -> Result<()> {
        let dst = dst.view_mut();
        dispatch!(self, Stream, s => s.fill(&mut typed_view_mut("Stream::fill", s, dst)?, value))
    }

    /// Enqueue a launch of `kernel` over `config` with `args`.
    ///
    /// The kernel, every buffer argument and this stream must be of one
    /// device; otherwise the error names the two that differ. The shape is
    /// checked against the device's limits, and each buffer range against
    /// its buffer.
    ///
    /// # Safety
    /// - The kernel reads and writes only inside the ranges of its buffer
    ///   arguments and writes only those passed writable (`&mut`).
    /// - `args` match the kernel's parameters in order and type.
    ///
    /// # Examples
    /// ```
    /// use kiln::{Args, HostArgs, LaunchConfig, Program};
    ///
    /// fn double(args: &mut HostArgs<'_>) -> kiln::Result<()> {
    ///     for v in args.output::<f32>(0)? {
    ///         *v *= 2.0;
    ///     }
    ///     Ok(())
    /// }
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let kernel = dev.kernel(&Program::new("double").host(double))?;
    /// let s = dev.stream();
    /// let mut x = s.upload(&[1.0f32, 2.5])?;
    /// // SAFETY: `double` writes only inside its one argument.
    /// unsafe { s.launch(&kernel, LaunchConfig::for_elements(2, 64), Args::new().arg(&mut x))? };
    /// assert_eq!(x.to_vec()?, [2.0, 5.0]);
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch(&self, kernel: &Kernel, config: LaunchConfig, args: Args<'_>) -> Result<()> {
        // Formatted only for an error: a launch allocates nothing of its own.
        let what = || format!("launch of kernel `{}`", kernel.name());
        dispatch!(self, Stream, s => {
            let Some(k) = B::kernel(kernel) else {
                return Err(mismatch(&what(), describe(s.device()), format!("the {} kernel", kernel.kind())));
            };
            let args = args.into_typed::<B>(what, s)?;
            // SAFETY: the caller's contract is the typed launch's.
            unsafe { s.launch(k, config, args) }
        })
    }

    /// Record `event` at the current end of this stream.
    pub fn record(&self, event: &Event) -> Result<()> {
        dispatch!(self, Stream, s => match B::event(event) {
            Some(e) => s.record(e),
            None => Err(mismatch("Stream::record", describe(s.device()), event.describe())),
        })
    }

    /// A new event recorded at the current end of this stream.
    pub fn record_event(&self) -> Result<Event> {
        dispatch!(self, Stream, s => s.record_event().map(B::wrap_event))
    }

    /// Make work enqueued later on this stream wait until `event` completes
    /// (a cross-stream dependency). Does not block the calling thread.
    pub fn wait(&self, event: &Event) -> Result<()> {
        dispatch!(self, Stream, s => match B::event(event) {
            Some(e) => s.wait(e),
            None => Err(mismatch("Stream::wait", describe(s.device()), event.describe())),
        })
    }

    /// Block until everything enqueued on this stream so far has run;
    /// reports errors kept from earlier asynchronous work.
    pub fn synchronize(&self) -> Result<()> {
        dispatch!(self, Stream, s => s.synchronize())
    }
}
