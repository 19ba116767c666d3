//! Arrays of random values from a [`Philox`] stream: uniform and normal.

use kiln_core::{Backend, Result, Stream};

use super::{Array, layout};
use crate::random::{Normal, Philox, Uniform};

impl Philox {
    /// A new array of `shape` holding the stream's next uniform values of
    /// `T` (row-major; see [`random`](crate::random) for the values); the
    /// stream moves past them.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::random::Philox;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let mut rng = Philox::new(7);
    /// let x = rng.uniform::<_, f64>(&s, &[1000, 2])?;
    /// let mean = x.mean()?;
    /// assert!((mean - 0.5).abs() < 0.05);
    /// assert_eq!(rng.counter(), 1000); // two f64 values per block
    /// # Ok(()) }
    /// ```
    pub fn uniform<B: Backend, T: Uniform>(&mut self, stream: &Stream<B>, shape: &[usize]) -> Result<Array<B, T>> {
        let n = layout::checked_len(shape, "Philox::uniform")?;
        let mut buffer = stream.alloc::<T>(n)?;
        self.fill_uniform(stream, &mut buffer)?;
        Array::from_buffer(buffer, shape)
    }

    /// A new array of `shape` holding the stream's next standard normal
    /// values of `T` (row-major; the same bits on every backend, see
    /// [`fill_normal`](Philox::fill_normal)); the stream moves past them.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::random::Philox;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let z = Philox::new(7).normal::<_, f32>(&s, &[1000, 4])?;
    /// let x = (&z * 2.0 + 10.0).eval()?; // mean 10, standard deviation 2
    /// assert!((x.mean()? - 10.0).abs() < 0.2 && (x.expr().std()? - 2.0).abs() < 0.1);
    /// # Ok(()) }
    /// ```
    pub fn normal<B: Backend, T: Normal>(&mut self, stream: &Stream<B>, shape: &[usize]) -> Result<Array<B, T>> {
        let n = layout::checked_len(shape, "Philox::normal")?;
        let mut buffer = stream.alloc::<T>(n)?;
        self.fill_normal(stream, &mut buffer)?;
        Array::from_buffer(buffer, shape)
    }
}
