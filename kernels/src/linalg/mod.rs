//! linalg: dense linear algebra on batches of row-major matrices, with
//! NumPy's semantics (`numpy.linalg`, and SciPy's `lu_factor`).
//!
//! - [`solve`]: `x = a^-1 b` by LU with partial pivoting.
//! - [`lu_factor`]: the packed LU factors and pivots.
//! - [`inv`], [`det`], [`slogdet`].
//! - [`cholesky`]: the lower factor `L` of `a = L L^T`.
//! - [`qr`]: `a = Q R`, reduced or complete ([`QrMode`]).
//! - [`lstsq`]: least squares through QR (the minimum-norm solution where
//!   `a` has fewer rows than columns).
//! - [`eigh`], [`eigvalsh`]: eigenvalues (ascending) and eigenvectors of
//!   symmetric matrices, from their lower triangle.
//!
//! Every function takes a batch of matrices ([`MatrixShape`]): many small
//! systems as well as one large one. Data are `f32` and `f64` (f64 where
//! the device computes in it).
//!
//! A matrix that cannot be factored is an error, never a silent NaN:
//! [`Error::LinAlg`] names the matrix's index in the batch and what was
//! found (the first zero pivot in `solve` and `inv`, the leading minor that
//! is not positive definite in `cholesky`, rank deficiency in `lstsq`, no
//! convergence in `eigh`). To know, each function reads the statuses back,
//! so it returns once the work has run. Inputs are never written.
//!
//! Each backend computes in its own way:
//! - **CUDA**: cuSOLVER ([`RawDevice::vendor_solver`]: `getrf`, `getrs`,
//!   `potrf`, `geqrf`, `orgqr`, `syevd`), loaded at run time as cuBLAS is,
//!   on kiln's streams, its work areas from kiln's pool; batches of small
//!   matrices take one batched call (`getrfBatched`, `getrsBatched`,
//!   `potrfBatched`, `syevjBatched`), and QR of batches of matrices of
//!   order 64 or less runs kiln's own kernels, one block per matrix
//!   (cuSOLVER has no batched `orgqr`); kiln's kernels move matrices between
//!   NumPy's row-major order and LAPACK's column-major one where the
//!   routine needs it, and kiln's matrix product forms `Q^T b` in `lstsq`.
//! - **CPU**: faer's factorisations, the batch in parallel (the
//!   `cpu-linalg` feature, default on; without it, `Unsupported`).
//! - **wgpu**: kiln's own WGSL kernels of the same LAPACK steps, so the
//!   CUDA path's orchestration runs unchanged: blocked LU with partial
//!   pivoting and blocked Cholesky, their trailing updates kiln's matrix
//!   product; Householder QR; the triangular solves; `eigh` by Jacobi
//!   sweeps up to order 192 (larger ones are `Unsupported`).
//!
//! [`RawDevice::vendor_solver`]: kiln_core::RawDevice::vendor_solver

#[cfg(feature = "cpu-linalg")]
mod cpu;
mod masked;
mod shape;
mod status;
mod task;
mod vendor;
mod wgsl;

use kiln_core::{Args, Backend, Element, Error, Language, LaunchConfig, RawDevice, Result, Stream, View, ViewMut};

pub use shape::{MatrixShape, QrMode};

use task::Task;

mod sealed {
    use super::{MatrixShape, task::Task};

    /// Keeps [`LinalgFloat`](super::LinalgFloat) to `f32` and `f64`, and
    /// gives the host program of a routine (faer's, with the `cpu-linalg`
    /// feature; `None` without it).
    pub trait Sealed {
        fn host_program(task: Task, shape: MatrixShape) -> Option<kiln_core::Program>;
    }

    impl Sealed for f32 {
        fn host_program(task: Task, shape: MatrixShape) -> Option<kiln_core::Program> {
            #[cfg(feature = "cpu-linalg")]
            return Some(super::cpu::program::<f32>(task, shape));
            #[cfg(not(feature = "cpu-linalg"))]
            return {
                let _ = (task, shape);
                None
            };
        }
    }

    impl Sealed for f64 {
        fn host_program(task: Task, shape: MatrixShape) -> Option<kiln_core::Program> {
            #[cfg(feature = "cpu-linalg")]
            return Some(super::cpu::program::<f64>(task, shape));
            #[cfg(not(feature = "cpu-linalg"))]
            return {
                let _ = (task, shape);
                None
            };
        }
    }
}

/// The element types kiln factors: `f32` and `f64`.
pub trait LinalgFloat: Element + crate::matmul::MatmulElement<Acc = Self> + sealed::Sealed {
    /// The type's machine epsilon, as `f64`.
    const EPSILON: f64;
    /// This value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
}

impl LinalgFloat for f32 {
    const EPSILON: f64 = f32::EPSILON as f64;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl LinalgFloat for f64 {
    const EPSILON: f64 = f64::EPSILON;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// How a backend factors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// faer on the host.
    Host,
    /// LAPACK's steps on the device: the vendor solver's (cuSOLVER), or
    /// kiln's WGSL kernels of the same steps.
    Device,
}

/// The path `stream`'s device factors `T` on, or `Unsupported` saying what is missing.
fn path<B: Backend, T: LinalgFloat>(stream: &Stream<B>, what: &str) -> Result<Path> {
    crate::launch::check_dtype(stream, T::DTYPE, what)?;
    let device = stream.device();
    match B::LANGUAGE {
        Language::Host => Ok(Path::Host),
        Language::Wgsl => Ok(Path::Device),
        _ => match device.raw().vendor_solver() {
            Some(v) if v.supports(T::DTYPE) => Ok(Path::Device),
            Some(v) => Err(Error::unsupported(B::KIND, what, format!("{} has no {} routines", v.name, T::DTYPE))),
            None => Err(Error::unsupported(
                B::KIND,
                what,
                format!("{} offers no solver library (cuSOLVER, libcusolver.so, could not be loaded)", device.name()),
            )),
        },
    }
}

/// `Err(LengthMismatch)` unless `len` is `want`.
fn length(what: &str, name: &str, len: usize, want: usize) -> Result<()> {
    if len != want {
        return Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected: want, actual: len });
    }
    Ok(())
}

/// The name of a call, for messages: `"solve of 10 x 4x4 f32"`.
fn name<T: Element>(f: &str, shape: &MatrixShape) -> String {
    format!("{f} of {shape} {}", T::DTYPE)
}

/// Run `task` on the host: `args` its inputs and outputs, in the order
/// `cpu::run` reads them, then the statuses; returns the statuses.
fn host<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    task: Task,
    shape: MatrixShape,
    args: Args<'_, B>,
) -> Result<Vec<i32>> {
    let program = T::host_program(task, shape).ok_or_else(|| {
        Error::unsupported(
            B::KIND,
            format!("linalg {task:?} on {shape}"),
            "kiln-kernels was built without its `cpu-linalg` feature (faer)",
        )
    })?;
    let mut status = stream.alloc::<i32>(shape.batch)?;
    let kernel = stream.device().kernel(&program)?;
    let args = args.arg(&mut status);
    // SAFETY: the host program reads its inputs and writes its outputs
    // within the lengths checked by the caller (and checks them again);
    // each matrix's outputs are written by one task only.
    unsafe { stream.launch(&kernel, LaunchConfig::new(1u32, 1u32), args) }?;
    status.to_vec()
}

/// Solve `a x = b` for each matrix of the batch: `a` of `shape` (square,
/// `n` x `n`), `b` and `x` of `n` x `nrhs` each (NumPy's `solve`; a vector
/// `b` is `nrhs = 1`). A singular matrix is [`Error::LinAlg`], naming the
/// first exactly zero pivot.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{solve, MatrixShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[3.0f64, 1.0, 1.0, 2.0])?;
/// let b = s.upload(&[9.0f64, 8.0])?;
/// let mut x = s.alloc::<f64>(2)?;
/// solve(&s, &a, &b, &mut x, MatrixShape::square(1, 2), 1)?;
/// let got = x.to_vec()?;
/// assert!((got[0] - 2.0).abs() < 1e-12 && (got[1] - 3.0).abs() < 1e-12);
///
/// let singular = s.upload(&[1.0f64, 2.0, 2.0, 4.0])?;
/// let e = solve(&s, &singular, &b, &mut x, MatrixShape::square(1, 2), 1).unwrap_err();
/// assert!(e.to_string().contains("singular"), "{e}");
/// # Ok(()) }
/// ```
pub fn solve<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    x: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
    nrhs: usize,
) -> Result<()> {
    let what = format!("{} with {nrhs} right-hand sides", name::<T>("solve", &shape));
    shape.check(&what, true)?;
    let rhs = MatrixShape::new(shape.batch, shape.rows, nrhs);
    rhs.check(&what, false)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "b", b.view().len(), rhs.len())?;
    length(&what, "x", x.view_mut().len(), rhs.len())?;
    let path = path::<B, T>(stream, &what)?;
    if rhs.is_empty() {
        return Ok(());
    }
    let status = match path {
        Path::Host => host::<B, T>(
            stream,
            Task::Solve { nrhs },
            shape,
            Args::new().arg(a.view()).arg(b.view()).arg(x.view_mut()),
        )?,
        Path::Device => vendor::solve::<B, T>(stream, a.view(), b.view(), x.view_mut(), shape, nrhs)?,
    };
    status::singular(&what, &status)
}

/// The LU factorisation with partial pivoting of each square matrix of `a`
/// (SciPy's `lu_factor`): `lu` holds `U` on and above the diagonal and the
/// multipliers of unit lower `L` below it, and `pivots` (`n` per matrix)
/// the row swaps, 0-based: row `i` was swapped with row `pivots[i]`, for
/// `i` in order, so that the swapped `a` is `L U`. A singular matrix has
/// such a factorisation too (a zero on `U`'s diagonal) and is not an error.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{lu_factor, MatrixShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[1.0f64, 2.0, 4.0, 2.0])?;
/// let (mut lu, mut piv) = (s.alloc::<f64>(4)?, s.alloc::<i32>(2)?);
/// lu_factor(&s, &a, &mut lu, &mut piv, MatrixShape::square(1, 2))?;
/// assert_eq!(piv.to_vec()?, [1, 1]);
/// assert_eq!(lu.to_vec()?, [4.0, 2.0, 0.25, 1.5]);
/// # Ok(()) }
/// ```
pub fn lu_factor<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    lu: &mut impl ViewMut<B, T>,
    pivots: &mut impl ViewMut<B, i32>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("lu_factor", &shape);
    shape.check(&what, true)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "lu", lu.view_mut().len(), shape.len())?;
    length(&what, "pivots", pivots.view_mut().len(), shape.batch * shape.rows)?;
    let path = path::<B, T>(stream, &what)?;
    if shape.is_empty() {
        return Ok(());
    }
    match path {
        Path::Host => {
            let args = Args::new().arg(a.view()).arg(lu.view_mut()).arg(pivots.view_mut());
            host::<B, T>(stream, Task::LuFactor, shape, args)?;
        }
        Path::Device => vendor::lu_factor::<B, T>(stream, a.view(), lu.view_mut(), pivots.view_mut(), shape)?,
    }
    Ok(())
}

/// The inverse of each square matrix of `a` into `out` (NumPy's `inv`). A
/// singular matrix is [`Error::LinAlg`], naming the first zero pivot.
pub fn inv<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    out: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("inv", &shape);
    shape.check(&what, true)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "out", out.view_mut().len(), shape.len())?;
    let path = path::<B, T>(stream, &what)?;
    if shape.is_empty() {
        return Ok(());
    }
    let status = match path {
        Path::Host => host::<B, T>(stream, Task::Inv, shape, Args::new().arg(a.view()).arg(out.view_mut()))?,
        Path::Device => vendor::inv::<B, T>(stream, a.view(), out.view_mut(), shape)?,
    };
    status::singular(&what, &status)
}

/// The determinant of each square matrix of `a` into `out` (one per
/// matrix; NumPy's `det`), from its LU factorisation; 0 for a singular
/// matrix. The product is formed in f64.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{det, MatrixShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[1.0f64, 2.0, 3.0, 4.0, /* second */ 2.0, 0.0, 0.0, 3.0])?;
/// let mut d = s.alloc::<f64>(2)?;
/// det(&s, &a, &mut d, MatrixShape::square(2, 2))?;
/// let d = d.to_vec()?;
/// assert!((d[0] + 2.0).abs() < 1e-12 && (d[1] - 6.0).abs() < 1e-12);
/// # Ok(()) }
/// ```
pub fn det<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    out: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("det", &shape);
    determinant(stream, a, &what, shape, Determinant::Det(out.view_mut()))
}

/// The sign and natural logarithm of the absolute determinant of each
/// square matrix of `a` (NumPy's `slogdet`): `sign` is 1, -1, or 0 for a
/// singular matrix (whose `logabsdet` is `-inf`).
pub fn slogdet<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    sign: &mut impl ViewMut<B, T>,
    logabsdet: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("slogdet", &shape);
    determinant(stream, a, &what, shape, Determinant::Slogdet(sign.view_mut(), logabsdet.view_mut()))
}

/// Where [`det`] and [`slogdet`] write.
pub(crate) enum Determinant<'a, B: Backend, T: Element> {
    Det(kiln_core::BufferViewMut<'a, B, T>),
    Slogdet(kiln_core::BufferViewMut<'a, B, T>, kiln_core::BufferViewMut<'a, B, T>),
}

fn determinant<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    what: &str,
    shape: MatrixShape,
    out: Determinant<'_, B, T>,
) -> Result<()> {
    shape.check(what, true)?;
    length(what, "a", a.view().len(), shape.len())?;
    match &out {
        Determinant::Det(d) => length(what, "out", d.len(), shape.batch)?,
        Determinant::Slogdet(s, l) => {
            length(what, "sign", s.len(), shape.batch)?;
            length(what, "logabsdet", l.len(), shape.batch)?;
        }
    }
    let path = path::<B, T>(stream, what)?;
    if shape.batch == 0 {
        return Ok(());
    }
    // One value per matrix, in f64, whatever the path.
    let (sign, log) = if shape.rows == 0 {
        (vec![1.0; shape.batch], vec![0.0; shape.batch])
    } else {
        match path {
            Path::Host => {
                let mut sign = stream.alloc::<T>(shape.batch)?;
                let mut log = stream.alloc::<T>(shape.batch)?;
                let args = Args::new().arg(a.view()).arg(&mut sign).arg(&mut log);
                host::<B, T>(stream, Task::Slogdet, shape, args)?;
                let wide = |v: Vec<T>| v.into_iter().map(T::to_f64).collect::<Vec<f64>>();
                (wide(sign.to_vec()?), wide(log.to_vec()?))
            }
            Path::Device => vendor::slogdet::<B, T>(stream, a.view(), shape)?,
        }
    };
    let narrow = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
    match out {
        Determinant::Det(mut d) => {
            let det: Vec<f64> = sign.iter().zip(&log).map(|(s, l)| s * l.exp()).collect();
            stream.copy_to_device(&narrow(&det), &mut d)
        }
        Determinant::Slogdet(mut s, mut l) => {
            stream.copy_to_device(&narrow(&sign), &mut s)?;
            stream.copy_to_device(&narrow(&log), &mut l)
        }
    }
}

/// The lower Cholesky factor `l` of each symmetric positive definite
/// matrix of `a` (`a = l l^T`, zeros above the diagonal; NumPy's
/// `cholesky`), from `a`'s lower triangle. A matrix that is not positive
/// definite is [`Error::LinAlg`], naming the leading minor that is not.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{cholesky, MatrixShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[4.0f64, 2.0, 2.0, 5.0])?;
/// let mut l = s.alloc::<f64>(4)?;
/// cholesky(&s, &a, &mut l, MatrixShape::square(1, 2))?;
/// assert_eq!(l.to_vec()?, [2.0, 0.0, 1.0, 2.0]);
/// # Ok(()) }
/// ```
pub fn cholesky<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    l: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("cholesky", &shape);
    shape.check(&what, true)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "l", l.view_mut().len(), shape.len())?;
    let path = path::<B, T>(stream, &what)?;
    if shape.is_empty() {
        return Ok(());
    }
    let status = match path {
        Path::Host => host::<B, T>(stream, Task::Cholesky, shape, Args::new().arg(a.view()).arg(l.view_mut()))?,
        Path::Device => vendor::cholesky::<B, T>(stream, a.view(), l.view_mut(), shape)?,
    };
    status::not_positive_definite(&what, &status)
}

/// The QR factorisation `a = q r` of each matrix of `a` (NumPy's `qr`):
/// `q` with orthonormal columns and upper triangular `r`, of the shapes
/// [`QrMode::shapes`] gives.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{qr, MatrixShape, QrMode};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[3.0f64, 0.0, 4.0, 5.0])?;
/// let (mut q, mut r) = (s.alloc::<f64>(4)?, s.alloc::<f64>(4)?);
/// qr(&s, &a, &mut q, &mut r, MatrixShape::square(1, 2), QrMode::Reduced)?;
/// let (q, r) = (q.to_vec()?, r.to_vec()?);
/// // r[0][0] = +-5 and r is upper triangular; q r = a.
/// assert!((r[0].abs() - 5.0).abs() < 1e-12 && r[2] == 0.0);
/// assert!((q[2] * r[0] - 4.0).abs() < 1e-12);
/// # Ok(()) }
/// ```
pub fn qr<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    q: &mut impl ViewMut<B, T>,
    r: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
    mode: QrMode,
) -> Result<()> {
    let what = format!("{} ({mode:?})", name::<T>("qr", &shape));
    shape.check(&what, false)?;
    let (qs, rs) = mode.shapes(shape);
    qs.check(&what, false)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "q", q.view_mut().len(), qs.len())?;
    length(&what, "r", r.view_mut().len(), rs.len())?;
    let path = path::<B, T>(stream, &what)?;
    if shape.batch == 0 || shape.rows == 0 {
        return Ok(());
    }
    if shape.cols == 0 {
        // Q is the identity's leading columns; R is empty.
        return masked::identity::<B, T>(stream, q.view_mut(), qs);
    }
    match path {
        Path::Host => {
            let args = Args::new().arg(a.view()).arg(q.view_mut()).arg(r.view_mut());
            host::<B, T>(stream, Task::Qr { mode }, shape, args)?;
        }
        Path::Device => vendor::qr::<B, T>(stream, a.view(), q.view_mut(), r.view_mut(), shape, mode)?,
    }
    Ok(())
}

/// The least-squares solution `x` (`cols` x `nrhs` per matrix) of
/// `a x = b` (`b`: `rows` x `nrhs`) for each matrix of `a`, through QR
/// (NumPy's `lstsq`'s solution): minimising `|a x - b|` where `a` has at
/// least as many rows as columns, and the minimum-norm solution where it
/// has fewer. QR without pivoting solves full-rank problems only: a column
/// (or row) whose diagonal entry of `R` is at most `max(rows, cols) eps`
/// times the largest is [`Error::LinAlg`] (rank deficient).
pub fn lstsq<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    x: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
    nrhs: usize,
) -> Result<()> {
    let what = format!("{} with {nrhs} right-hand sides", name::<T>("lstsq", &shape));
    shape.check(&what, false)?;
    let (bs, xs) = (MatrixShape::new(shape.batch, shape.rows, nrhs), MatrixShape::new(shape.batch, shape.cols, nrhs));
    bs.check(&what, false)?;
    xs.check(&what, false)?;
    length(&what, "a", a.view().len(), shape.len())?;
    length(&what, "b", b.view().len(), bs.len())?;
    length(&what, "x", x.view_mut().len(), xs.len())?;
    let path = path::<B, T>(stream, &what)?;
    if xs.is_empty() {
        return Ok(());
    }
    if shape.rows == 0 {
        // No equation: the minimum-norm solution is 0.
        return stream.fill(&mut x.view_mut(), T::from_f64(0.0));
    }
    let status = match path {
        Path::Host => host::<B, T>(
            stream,
            Task::Lstsq { nrhs },
            shape,
            Args::new().arg(a.view()).arg(b.view()).arg(x.view_mut()),
        )?,
        Path::Device => vendor::lstsq::<B, T>(stream, a.view(), b.view(), x.view_mut(), shape, nrhs)?,
    };
    status::rank_deficient(&what, &status)
}

/// The eigenvalues `w` (ascending, `n` per matrix) and orthonormal
/// eigenvectors `v` (one per column, `v[:, i]` for `w[i]`) of each
/// symmetric matrix of `a`, from its lower triangle (NumPy's `eigh`). An
/// eigensolver that does not converge is [`Error::LinAlg`]. On wgpu,
/// kiln's Jacobi kernel takes orders up to 192; larger ones are
/// `Unsupported`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::linalg::{eigh, MatrixShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = s.upload(&[2.0f64, 1.0, 1.0, 2.0])?;
/// let (mut w, mut v) = (s.alloc::<f64>(2)?, s.alloc::<f64>(4)?);
/// eigh(&s, &a, &mut w, &mut v, MatrixShape::square(1, 2))?;
/// let w = w.to_vec()?;
/// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
/// # Ok(()) }
/// ```
pub fn eigh<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    w: &mut impl ViewMut<B, T>,
    v: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("eigh", &shape);
    eigen(stream, a, w, Some(v.view_mut()), shape, &what)
}

/// The eigenvalues `w` (ascending, `n` per matrix) of each symmetric
/// matrix of `a`, from its lower triangle (NumPy's `eigvalsh`).
pub fn eigvalsh<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    w: &mut impl ViewMut<B, T>,
    shape: MatrixShape,
) -> Result<()> {
    let what = name::<T>("eigvalsh", &shape);
    eigen(stream, a, w, None, shape, &what)
}

fn eigen<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    w: &mut impl ViewMut<B, T>,
    mut v: Option<kiln_core::BufferViewMut<'_, B, T>>,
    shape: MatrixShape,
    what: &str,
) -> Result<()> {
    shape.check(what, true)?;
    length(what, "a", a.view().len(), shape.len())?;
    length(what, "w", w.view_mut().len(), shape.batch * shape.rows)?;
    if let Some(v) = &v {
        length(what, "v", v.len(), shape.len())?;
    }
    let path = path::<B, T>(stream, what)?;
    if shape.is_empty() {
        return Ok(());
    }
    let vectors = v.is_some();
    let status = match path {
        Path::Host => {
            let mut args = Args::new().arg(a.view()).arg(w.view_mut());
            if let Some(v) = v.as_mut() {
                args = args.arg(v.slice_mut(..)?);
            }
            host::<B, T>(stream, Task::Eigh { vectors }, shape, args)?
        }
        Path::Device => vendor::eigh::<B, T>(stream, a.view(), w.view_mut(), v, shape)?,
    };
    status::no_convergence(what, &status)
}
