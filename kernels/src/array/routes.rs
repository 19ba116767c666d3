//! Array operations that are whole kiln patterns: `dot`, `matmul` and
//! `cumsum` run the typed patterns on the array's elements (copied
//! into row-major order first where the array is a strided view).

use kiln_core::{Backend, Error, Result};

use super::Array;
use crate::Number;
use crate::matmul::{MatmulElement, MatmulShape, matmul};
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

impl<B: Backend, T: MatmulElement> Array<B, T> {
    /// The matrix product of an `m x k` and a `k x n` array (kiln's
    /// `matmul`, the strategy chosen for the device: cuBLAS where there is
    /// one, tiled kernels otherwise), `m x n` of the accumulator type.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// let c = a.matmul(&a.t())?; // a times its transpose
    /// assert_eq!(c.to_ndarray()?, array![[14.0f32, 32.0], [32.0, 77.0]].into_dyn());
    /// assert!(a.matmul(&a).is_err()); // 2 x 3 times 2 x 3
    /// # Ok(()) }
    /// ```
    pub fn matmul(&self, other: &Array<B, T>) -> Result<Array<B, T::Acc>> {
        self.want_ndim("Array::matmul", 2)?;
        other.want_ndim("Array::matmul", 2)?;
        let (m, k, n) = (self.shape()[0], self.shape()[1], other.shape()[1]);
        if other.shape()[0] != k {
            return Err(Error::invalid(
                "Array::matmul",
                format!(
                    "shapes {:?} and {:?} do not multiply: {k} columns against {} rows",
                    self.shape(),
                    other.shape(),
                    other.shape()[0]
                ),
            ));
        }
        let len = super::layout::checked_len(
            &[m, n],
            &format!("Array::matmul of {:?} by {:?}", self.shape(), other.shape()),
        )?;
        let (a, b) = (self.row_major()?, other.row_major()?);
        let mut c = self.stream().alloc::<T::Acc>(len)?;
        if len > 0 {
            matmul(self.stream(), &a.elements()?, &b.elements()?, &mut c, MatmulShape::new(m, n, k))?;
        }
        Array::from_buffer(c, &[m, n])
    }
}
