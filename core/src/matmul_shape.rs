//! What a matrix product computes: its sizes, how each operand lies in its
//! buffer (transposed or not, leading dimension, batch stride), how many
//! products a batch holds, and the arithmetic the caller allows
//! ([`Precision`]). kiln-kernels' `matmul` and a backend's vendor GEMM
//! ([`Gemm`](crate::Gemm)) both take it.

use crate::DType;

/// The arithmetic a product may use, chosen by the caller; never lowered
/// behind the caller's back.
///
/// A mode is a permission, not a demand: a backend with no faster path for
/// it computes the product exactly (as [`Exact`](Precision::Exact)), which
/// is inside every mode's bound. The modes other than `Exact` change `f32`
/// products only: `f64`, `f16`, `bf16` and integer inputs are always
/// computed as [`Exact`](Precision::Exact) describes.
///
/// [`error_bound`](Precision::error_bound) gives each mode's bound on
/// `|c - a . b|` for one element.
///
/// # Examples
/// ```
/// use kiln_core::{DType, Precision};
/// assert_eq!(Precision::default(), Precision::Exact);
/// assert_eq!(Precision::parse("tf32"), Some(Precision::Tf32));
/// // The bound of one element of an f32 product with k = 1024, per unit of sum |a||b|:
/// let exact = Precision::Exact.error_bound(DType::F32, 1024);
/// let tf32 = Precision::Tf32.error_bound(DType::F32, 1024);
/// assert!(exact < 1e-4 && tf32 > exact);
/// // f64 is exact whatever the mode.
/// assert_eq!(Precision::Tf32.error_bound(DType::F64, 8), Precision::Exact.error_bound(DType::F64, 8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// Every product and sum in the accumulator type's own arithmetic
    /// (fp32 FMA for `f32`, fp64 for `f64`; `f16` and `bf16` inputs are
    /// multiplied exactly and summed in f32).
    #[default]
    Exact,
    /// `f32` inputs may be rounded to TF32 (10 mantissa bits) before they
    /// are multiplied, sums kept in f32: the tensor cores' TF32 path, as
    /// PyTorch's `allow_tf32` and CuPy's `CUPY_TF32=1` allow.
    Tf32,
    /// `f32` inputs may be rounded to bf16 (7 mantissa bits) before they are
    /// multiplied, sums kept in f32: the tensor cores' bf16 path.
    Bf16,
}

impl Precision {
    /// Every mode.
    pub const ALL: [Precision; 3] = [Precision::Exact, Precision::Tf32, Precision::Bf16];

    /// Lower-case name ("tf32").
    pub const fn name(self) -> &'static str {
        match self {
            Precision::Exact => "exact",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
        }
    }

    /// The mode named `name`, as [`name`](Self::name) writes it.
    pub fn parse(name: &str) -> Option<Precision> {
        Precision::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The relative error of rounding one `input` operand under this mode:
    /// 2^-10 for TF32 and 2^-7 for bf16 (the rounding may truncate), 0
    /// where inputs are used as they are.
    pub fn input_roundoff(self, input: DType) -> f64 {
        match (self, input) {
            (Precision::Tf32, DType::F32) => 2f64.powi(-10),
            (Precision::Bf16, DType::F32) => 2f64.powi(-7),
            _ => 0.0,
        }
    }

    /// The bound on `|c[i][j] - sum_p a[i][p] b[p][j]|` of a product of
    /// `input` matrices with inner size `k`, per unit of
    /// `sum_p |a[i][p]| |b[p][j]|`:
    /// `2 u_in + (k + 2) u_acc`, with `u_in` the input rounding of the
    /// mode ([`input_roundoff`](Self::input_roundoff)) and `u_acc` the
    /// accumulator's unit roundoff (2^-24 for f32, 2^-53 for f64; twice
    /// that where the inputs are rounded, as tensor cores may sum with
    /// truncation). 0 for integers, which are exact (modulo 2^32).
    pub fn error_bound(self, input: DType, k: usize) -> f64 {
        let acc = match input {
            DType::F64 => f64::EPSILON / 2.0,
            DType::F32 | DType::F16 | DType::BF16 => f32::EPSILON as f64 / 2.0,
            _ => return 0.0,
        };
        let u_in = self.input_roundoff(input);
        let u_acc = if u_in > 0.0 { 2.0 * acc } else { acc };
        2.0 * u_in + (k as f64 + 2.0) * u_acc
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How one operand's matrices lie in their buffer: each is stored
/// row-major, with `ld` elements from one stored row to the next, and the
/// matrices of a batch `stride` elements apart.
///
/// # Examples
/// ```
/// use kiln_core::MatrixLayout;
/// // A 3 x 4 operand held as a row-major 4 x 3 matrix (its transpose):
/// let t = MatrixLayout::dense(3, 4, true);
/// assert_eq!((t.ld, t.stride), (3, 12));
/// assert_eq!(t.stored(3, 4), (4, 3));
/// assert_eq!(t.span(3, 4, 2), Some(24)); // two of them, one after the other
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatrixLayout {
    /// The operand is stored transposed: an `r x c` operand held as a
    /// row-major `c x r` matrix (BLAS's `T`). Not allowed for the product.
    pub transposed: bool,
    /// Elements from one stored row to the next: at least the stored
    /// matrix's column count (its leading dimension).
    pub ld: usize,
    /// Elements from one matrix of a batch to the next; 0 where every
    /// product of the batch uses the same matrix (a broadcast operand).
    pub stride: usize,
}

impl MatrixLayout {
    /// A dense `rows x cols` operand (stored transposed when `transposed`),
    /// the matrices of a batch one after the other.
    pub const fn dense(rows: usize, cols: usize, transposed: bool) -> Self {
        let ld = if transposed { rows } else { cols };
        MatrixLayout { transposed, ld, stride: rows.saturating_mul(cols) }
    }

    /// The stored matrix's (rows, columns) for an `rows x cols` operand.
    pub const fn stored(&self, rows: usize, cols: usize) -> (usize, usize) {
        if self.transposed {
            (cols, rows)
        } else {
            (rows, cols)
        }
    }

    /// Elements from the first element of the first matrix to one past the
    /// last element of the last of `batch` `rows x cols` operands; 0 when
    /// there are none; `None` when it overflows `usize`.
    pub fn span(&self, rows: usize, cols: usize, batch: usize) -> Option<usize> {
        let (r, c) = self.stored(rows, cols);
        if r == 0 || c == 0 || batch == 0 {
            return Some(0);
        }
        (batch - 1).checked_mul(self.stride)?.checked_add((r - 1).checked_mul(self.ld)?)?.checked_add(c)
    }
}

/// The shape of a matrix product, `c = a . b` for each of `batch`
/// products, with `a` of `m x k`, `b` of `k x n` and `c` of `m x n`
/// elements, and the arithmetic allowed.
///
/// [`new`](MatmulShape::new) gives one dense row-major product computed
/// exactly; the builder methods change one thing each.
///
/// # Examples
/// ```
/// use kiln_core::{MatmulShape, Precision};
/// let s = MatmulShape::new(2, 3, 4);
/// assert_eq!(s.flops(), 48);
/// assert_eq!(s.to_string(), "(2 x 4) . (4 x 3)");
/// // 8 products of a 64 x 32 by a shared 32 x 16 matrix, in TF32:
/// let s = MatmulShape::new(64, 16, 32).batch(8).broadcast_b().precision(Precision::Tf32);
/// assert_eq!(s.spans(), Some([8 * 64 * 32, 32 * 16, 8 * 64 * 16]));
/// assert_eq!(s.to_string(), "8 x (64 x 32) . (32 x 16), b shared, tf32");
/// // a^T . b, with a held as a row-major 32 x 64 matrix:
/// let s = MatmulShape::new(64, 16, 32).transpose_a();
/// assert_eq!(s.a.ld, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatmulShape {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Columns of `a`, rows of `b`.
    pub k: usize,
    /// How many products (1 for a single one; 0 computes none).
    pub batch: usize,
    /// How `a`'s matrices lie in its buffer.
    pub a: MatrixLayout,
    /// How `b`'s matrices lie in its buffer.
    pub b: MatrixLayout,
    /// How `c`'s matrices lie in its buffer (never transposed).
    pub c: MatrixLayout,
    /// The arithmetic allowed.
    pub precision: Precision,
}

impl MatmulShape {
    /// One dense row-major product, `m x k` times `k x n`, computed exactly.
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        MatmulShape {
            m,
            n,
            k,
            batch: 1,
            a: MatrixLayout::dense(m, k, false),
            b: MatrixLayout::dense(k, n, false),
            c: MatrixLayout::dense(m, n, false),
            precision: Precision::Exact,
        }
    }

    /// `count` products, each operand's matrices `stride` elements apart
    /// (dense and one after the other unless set otherwise).
    pub const fn batch(mut self, count: usize) -> Self {
        self.batch = count;
        self
    }

    /// `a` stored transposed, dense: a row-major `k x m` matrix.
    pub const fn transpose_a(mut self) -> Self {
        self.a = MatrixLayout::dense(self.m, self.k, true);
        self
    }

    /// `b` stored transposed, dense: a row-major `n x k` matrix.
    pub const fn transpose_b(mut self) -> Self {
        self.b = MatrixLayout::dense(self.k, self.n, true);
        self
    }

    /// One `a` for every product of the batch (batch stride 0).
    pub const fn broadcast_a(mut self) -> Self {
        self.a.stride = 0;
        self
    }

    /// One `b` for every product of the batch (batch stride 0).
    pub const fn broadcast_b(mut self) -> Self {
        self.b.stride = 0;
        self
    }

    /// The layouts of `a`, `b` and `c`.
    pub const fn layouts(mut self, a: MatrixLayout, b: MatrixLayout, c: MatrixLayout) -> Self {
        self.a = a;
        self.b = b;
        self.c = c;
        self
    }

    /// The arithmetic allowed.
    pub const fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// Floating-point operations of the products: `2 m n k batch` (saturating).
    pub fn flops(&self) -> u64 {
        [self.m, self.n, self.k, self.batch].iter().fold(2u64, |f, &x| f.saturating_mul(x as u64))
    }

    /// Whether there is nothing to write: no product, or `c` empty.
    pub fn is_empty(&self) -> bool {
        self.batch == 0 || self.m == 0 || self.n == 0
    }

    /// The elements each of `a`, `b` and `c` spans ([`MatrixLayout::span`]);
    /// `None` when one overflows `usize`.
    pub fn spans(&self) -> Option<[usize; 3]> {
        let (m, n, k, batch) = (self.m, self.n, self.k, self.batch);
        Some([self.a.span(m, k, batch)?, self.b.span(k, n, batch)?, self.c.span(m, n, batch)?])
    }

    /// `Ok` when the layouts are well formed: each leading dimension at
    /// least its stored matrix's width, `c` not transposed, and no two
    /// elements of `c` in one place (its rows `ld` apart, its matrices at
    /// least one matrix apart), so that a product writes each element once.
    /// `Err` (a message) naming the first fault otherwise.
    pub fn check_layouts(&self) -> std::result::Result<(), String> {
        if self.c.transposed {
            return Err("c cannot be stored transposed (compute c^T = b^T . a^T instead)".into());
        }
        for (name, layout, rows, cols) in
            [("a", &self.a, self.m, self.k), ("b", &self.b, self.k, self.n), ("c", &self.c, self.m, self.n)]
        {
            let (r, c) = layout.stored(rows, cols);
            if r > 1 && layout.ld < c {
                return Err(format!("{name}'s leading dimension {} is under its stored width {c}", layout.ld));
            }
        }
        if self.batch > 1 && !self.is_empty() {
            let one = self.c.span(self.m, self.n, 1).ok_or("c overflows the address space")?;
            if self.c.stride < one {
                return Err(format!(
                    "c's batch stride {} is under one matrix's span {one}: products would write one place twice",
                    self.c.stride
                ));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for MatmulShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, n, k) = (self.m, self.n, self.k);
        if self.batch != 1 {
            write!(f, "{} x ", self.batch)?;
        }
        write!(f, "({m} x {k}){} . ({k} x {n}){}", t(self.a.transposed), t(self.b.transposed))?;
        for (name, layout, rows, cols) in [("a", &self.a, m, k), ("b", &self.b, k, n), ("c", &self.c, m, n)] {
            let dense = MatrixLayout::dense(rows, cols, layout.transposed);
            if layout.ld != dense.ld {
                write!(f, ", {name} ld {}", layout.ld)?;
            }
            if self.batch > 1 && layout.stride == 0 {
                write!(f, ", {name} shared")?;
            } else if self.batch > 1 && layout.stride != dense.stride {
                write!(f, ", {name} stride {}", layout.stride)?;
            }
        }
        if self.precision != Precision::Exact {
            write!(f, ", {}", self.precision)?;
        }
        Ok(())
    }
}

/// "^T" for a transposed operand.
fn t(transposed: bool) -> &'static str {
    if transposed {
        "^T"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_padding_and_broadcasts() {
        let s = MatmulShape::new(3, 5, 4);
        assert_eq!(s.spans(), Some([12, 20, 15]));
        let padded = MatrixLayout { transposed: false, ld: 7, stride: 30 };
        let s = MatmulShape::new(3, 5, 4).batch(2).layouts(padded, MatrixLayout::dense(4, 5, true), padded);
        // a: one matrix at 30 + its 3 rows of ld 7, the last 4 wide.
        assert_eq!(s.spans(), Some([30 + 2 * 7 + 4, 2 * 20, 30 + 2 * 7 + 5]));
        assert_eq!(s.check_layouts(), Ok(()));
        assert_eq!(MatmulShape::new(3, 5, 0).spans(), Some([0, 0, 15]));
        assert_eq!(MatmulShape::new(3, 5, 4).batch(0).spans(), Some([0, 0, 0]));
        assert_eq!(MatmulShape::new(usize::MAX, 2, 2).spans(), None);
    }

    #[test]
    fn bad_layouts_are_named() {
        let s = MatmulShape::new(3, 5, 4);
        let narrow = MatrixLayout { transposed: false, ld: 3, stride: 12 };
        assert!(s.layouts(narrow, s.b, s.c).check_layouts().unwrap_err().contains("a's leading dimension 3"));
        let tc = MatrixLayout { transposed: true, ..s.c };
        assert!(s.layouts(s.a, s.b, tc).check_layouts().unwrap_err().contains("c cannot be stored transposed"));
        let shared_c = s.batch(2).layouts(s.a, s.b, MatrixLayout { stride: 0, ..s.c });
        assert!(shared_c.check_layouts().unwrap_err().contains("write one place twice"));
        // One row: any leading dimension; one product: any stride.
        let row = MatmulShape::new(1, 5, 4);
        let loose = MatrixLayout { transposed: false, ld: 0, stride: 0 };
        assert_eq!(row.layouts(loose, row.b, loose).check_layouts(), Ok(()));
    }

    #[test]
    fn bounds_follow_the_mode() {
        let u = f32::EPSILON as f64 / 2.0;
        assert_eq!(Precision::Exact.error_bound(DType::F32, 10), 12.0 * u);
        assert_eq!(Precision::Tf32.error_bound(DType::F32, 10), 2.0 * 2f64.powi(-10) + 24.0 * u);
        assert_eq!(Precision::Bf16.error_bound(DType::F16, 10), 12.0 * u);
        assert_eq!(Precision::Bf16.error_bound(DType::I32, 10), 0.0);
        for p in Precision::ALL {
            assert_eq!(Precision::parse(p.name()), Some(p));
        }
    }
}
