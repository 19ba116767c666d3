//! Array operations that are whole kiln patterns: `dot` and `cumsum` run
//! the typed patterns on the array's elements (copied into row-major order
//! first where the array is a strided view). `matmul` is in matmul.rs.

use kiln_core::{Backend, Error, Result};

use super::Array;
use crate::Number;
use crate::reduce::dot;
use crate::scan::{ScanKind, scan};

impl<B: Backend, T: kiln_core::Element> Array<B, T> {
    /// This array in row-major order (itself when it already is).
    pub(super) fn row_major(&self) -> Result<Array<B, T>> {
        if self.is_standard_layout() { Ok(self.clone()) } else { self.to_contiguous() }
    }

    fn want_ndim(&self, what: &str, ndim: usize) -> Result<()> {
        if self.ndim() == ndim {
            return Ok(());
        }
        Err(Error::invalid(what, format!("takes {ndim}-d arrays, not one of shape {:?}", self.shape())))
    }
}

impl<B: Backend, T: Number> Array<B, T> {
    /// The inner product of two 1-d arrays of one length (kiln's `dot`,
    /// summed as its reduction does); blocks until the value is on the host.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::s;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::arange(&s, 0.0f64, 6.0, 1.0)?;
    /// assert_eq!(a.dot(&a)?, 55.0);
    /// assert_eq!(a.slice(s![..;2])?.dot(&a.slice(s![1..;2])?)?, 0.0 * 1.0 + 2.0 * 3.0 + 4.0 * 5.0);
    /// assert!(a.dot(&a.slice(s![1..])?).is_err()); // 6 and 5 elements
    /// # Ok(()) }
    /// ```
    pub fn dot(&self, other: &Array<B, T>) -> Result<T> {
        self.want_ndim("Array::dot", 1)?;
        other.want_ndim("Array::dot", 1)?;
        if self.len() != other.len() {
            return Err(Error::invalid(
                "Array::dot",
                format!("shapes {:?} and {:?} differ in length", self.shape(), other.shape()),
            ));
        }
        let (x, y) = (self.row_major()?, other.row_major()?);
        dot(self.stream(), &x.elements()?, &y.elements()?)
    }

    /// The running sum of the elements in row-major order, as a 1-d array
    /// (NumPy's `cumsum` without an axis; kiln's inclusive scan: integers
    /// wrap).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[1, 2], [3, 4]])?;
    /// assert_eq!(a.cumsum()?.to_vec()?, [1, 3, 6, 10]);
    /// assert_eq!(a.t().cumsum()?.to_vec()?, [1, 4, 6, 10]);
    /// # Ok(()) }
    /// ```
    pub fn cumsum(&self) -> Result<Array<B, T>> {
        let x = self.row_major()?;
        let mut out = self.stream().alloc::<T>(self.len())?;
        if !self.is_empty() {
            scan(self.stream(), ScanKind::Inclusive, &x.elements()?, &mut out)?;
        }
        Array::from_buffer(out, &[self.len()])
    }
}
