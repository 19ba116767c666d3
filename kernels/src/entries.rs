//! The patterns' entry points, declared once for both tiers.
//!
//! [`entry_points!`](crate::entry_points) lists, module by module, every
//! pattern function that takes a stream and buffers: its name, generic
//! parameters, arguments, result and the run-time tier's documentation.
//! Each argument is a `view` (read: `&impl View<B, T>` on the typed tier,
//! `&impl kiln::View<T>` on the run-time tier), a `view_mut` (written) or a
//! `value` (passed as it is). From this one list
//! - the `kiln` facade generates its run-time functions (`kiln::kernels::X::f`
//!   forwards to `kiln_kernels::X::f` on the stream's backend, a buffer of
//!   another device being an `Err` that names the function and argument);
//! - this crate checks, as it compiles, that each entry takes and returns
//!   what its typed function does (the `check` modules below), so the two
//!   tiers cannot drift apart.
//!
//! A new pattern function is written once, in its module, and declared
//! here; `kiln`'s tier-parity test fails while a public typed function has
//! neither an entry nor a reason to be typed-only.

/// `entry_points!(callback, module)` invokes `callback! { module; entries }`
/// with the entries of `module`: `$(#[doc])* fn name<generics>(arg: role
/// Type, ...) -> Result type;` per function, the stream left implicit.
#[doc(hidden)]
#[macro_export]
macro_rules! entry_points {
    ($($callback:ident)::+, compact) => {
        $($callback)::+! { compact;
            /// Copy the elements of `x` that pass `pred` to the front of `out`, in
            /// order, and their count to `count[0]`; returns at once.
            fn copy_if_into<T: Number>(x: view T, pred: value Predicate<T>, out: view_mut T, count: view_mut u64) -> ();
            /// Copy the elements of `x` that pass `pred` to the front of `out`, in
            /// order; returns how many; blocks.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::compact::{copy_if, Predicate};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[5i32, -1, 8, -3])?;
            /// let mut out = s.alloc::<i32>(4)?;
            /// let n = copy_if(&s, &x, Predicate::GreaterThan(0), &mut out)?;
            /// assert_eq!(out.slice(..n)?.to_vec()?, [5, 8]);
            /// # Ok(()) }
            /// ```
            fn copy_if<T: Number>(x: view T, pred: value Predicate<T>, out: view_mut T) -> usize;
            /// The indices of the elements of `x` that pass `pred`, and their count in
            /// `count[0]`; returns at once.
            fn copy_if_indices_into<T: Number>(x: view T, pred: value Predicate<T>, indices: view_mut u32, count: view_mut u64) -> ();
            /// The indices of the elements of `x` that pass `pred`; returns how many; blocks.
            fn copy_if_indices<T: Number>(x: view T, pred: value Predicate<T>, indices: view_mut u32) -> usize;
        }
    };
    ($($callback:ident)::+, elementwise) => {
        $($callback)::+! { elementwise;
            /// `c[i] = op(a[i], b[i])`.
            fn binary<T: Number>(op: value BinaryOp, a: view T, b: view T, c: view_mut T) -> ();
            /// `a[i] = op(a[i], b[i])`.
            fn binary_in_place<T: Number>(op: value BinaryOp, a: view_mut T, b: view T) -> ();
            /// `z[i] = alpha * x[i] + y[i]`.
            ///
            /// # Examples
            /// ```
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let (x, y) = (s.upload(&[1.0f32, 2.0])?, s.upload(&[10.0f32, 20.0])?);
            /// let mut z = s.alloc::<f32>(2)?;
            /// kiln::kernels::elementwise::axpy(&s, 3.0, &x, &y, &mut z)?;
            /// assert_eq!(z.to_vec()?, [13.0, 26.0]);
            /// # Ok(()) }
            /// ```
            fn axpy<T: Number>(alpha: value T, x: view T, y: view T, z: view_mut T) -> ();
            /// `y[i] = alpha * x[i] + y[i]`.
            fn axpy_in_place<T: Number>(alpha: value T, x: view T, y: view_mut T) -> ();
        }
    };
    ($($callback:ident)::+, fft) => {
        $($callback)::+! { fft;
            /// The forward transform of complex `x` into `y` along `shape`'s
            /// axes, normalised as `norm` says; both dense, `shape.len()`
            /// elements (NumPy's `fft`, `fft2`, `fftn`).
            ///
            /// # Examples
            /// ```
            /// use kiln::Complex32;
            /// use kiln::kernels::fft::{fft, FftNorm, FftShape};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[Complex32::new(1.0, 0.0), Complex32::new(0.0, 1.0)])?;
            /// let mut y = s.alloc::<Complex32>(2)?;
            /// fft(&s, &x, &mut y, FftShape::new(&[2]), FftNorm::Backward)?;
            /// assert_eq!(y.to_vec()?, [Complex32::new(1.0, 1.0), Complex32::new(1.0, -1.0)]);
            /// # Ok(()) }
            /// ```
            fn fft<T: FftFloat>(x: view $crate::fft::Complex<T>, y: view_mut $crate::fft::Complex<T>, shape: value $crate::fft::FftShape, norm: value $crate::fft::FftNorm) -> ();
            /// The inverse transform of complex `x` into `y` along `shape`'s axes
            /// (NumPy's `ifft`, `ifft2`, `ifftn`).
            fn ifft<T: FftFloat>(x: view $crate::fft::Complex<T>, y: view_mut $crate::fft::Complex<T>, shape: value $crate::fft::FftShape, norm: value $crate::fft::FftNorm) -> ();
            /// The non-negative frequencies `y` (`shape.half_shape()`) of real `x`
            /// (`shape.len()`), as NumPy's `rfft` and `rfftn`.
            fn rfft<T: FftFloat>(x: view T, y: view_mut $crate::fft::Complex<T>, shape: value $crate::fft::FftShape, norm: value $crate::fft::FftNorm) -> ();
            /// The real signal `y` (`shape.len()`) of the non-negative frequencies
            /// `x` (`shape.half_shape()`), as NumPy's `irfft` and `irfftn`.
            fn irfft<T: FftFloat>(x: view $crate::fft::Complex<T>, y: view_mut T, shape: value $crate::fft::FftShape, norm: value $crate::fft::FftNorm) -> ();
        }
    };
    ($($callback:ident)::+, linalg) => {
        $($callback)::+! { linalg;
            /// Solve `a x = b` for each square matrix of `a` (`shape`), `b` and
            /// `x` of `n` x `nrhs` each (NumPy's `solve`); a singular matrix is
            /// `Error::LinAlg`, naming the first zero pivot. Blocks.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::linalg::{solve, MatrixShape};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let a = s.upload(&[3.0f64, 1.0, 1.0, 2.0])?;
            /// let b = s.upload(&[9.0f64, 8.0])?;
            /// let mut x = s.alloc::<f64>(2)?;
            /// solve(&s, &a, &b, &mut x, MatrixShape::square(1, 2), 1)?;
            /// let x = x.to_vec()?;
            /// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
            /// # Ok(()) }
            /// ```
            fn solve<T: LinalgFloat>(a: view T, b: view T, x: view_mut T, shape: value $crate::linalg::MatrixShape, nrhs: value usize) -> ();
            /// The packed LU factors and 0-based pivots of each square matrix
            /// (SciPy's `lu_factor`). Blocks.
            fn lu_factor<T: LinalgFloat>(a: view T, lu: view_mut T, pivots: view_mut i32, shape: value $crate::linalg::MatrixShape) -> ();
            /// The inverse of each square matrix (NumPy's `inv`); a singular
            /// matrix is `Error::LinAlg`. Blocks.
            fn inv<T: LinalgFloat>(a: view T, out: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
            /// The determinant of each square matrix (NumPy's `det`). Blocks.
            fn det<T: LinalgFloat>(a: view T, out: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
            /// The sign and log of the absolute determinant of each square
            /// matrix (NumPy's `slogdet`). Blocks.
            fn slogdet<T: LinalgFloat>(a: view T, sign: view_mut T, logabsdet: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
            /// The lower Cholesky factor of each symmetric positive definite
            /// matrix (NumPy's `cholesky`); one that is not is `Error::LinAlg`. Blocks.
            fn cholesky<T: LinalgFloat>(a: view T, l: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
            /// `a = q r` for each matrix, reduced or complete (NumPy's `qr`). Blocks.
            fn qr<T: LinalgFloat>(a: view T, q: view_mut T, r: view_mut T, shape: value $crate::linalg::MatrixShape, mode: value $crate::linalg::QrMode) -> ();
            /// The least-squares (or minimum-norm) solution of `a x = b` through
            /// QR; a rank-deficient matrix is `Error::LinAlg`. Blocks.
            fn lstsq<T: LinalgFloat>(a: view T, b: view T, x: view_mut T, shape: value $crate::linalg::MatrixShape, nrhs: value usize) -> ();
            /// Ascending eigenvalues and eigenvectors (columns) of each
            /// symmetric matrix, from its lower triangle (NumPy's `eigh`). Blocks.
            fn eigh<T: LinalgFloat>(a: view T, w: view_mut T, v: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
            /// Ascending eigenvalues of each symmetric matrix (NumPy's `eigvalsh`). Blocks.
            fn eigvalsh<T: LinalgFloat>(a: view T, w: view_mut T, shape: value $crate::linalg::MatrixShape) -> ();
        }
    };
    ($($callback:ident)::+, fill) => {
        $($callback)::+! { fill;
            /// Set every element of `dst` to `value`.
            ///
            /// # Examples
            /// ```
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let mut x = s.alloc::<i32>(3)?;
            /// kiln::kernels::fill::fill(&s, &mut x, -4)?;
            /// assert_eq!(x.to_vec()?, [-4, -4, -4]);
            /// # Ok(()) }
            /// ```
            fn fill<T: Element>(dst: view_mut T, value: value T) -> ();
            /// `dst[i] = start + i * step`.
            ///
            /// # Examples
            /// ```
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let mut x = s.alloc::<u32>(4)?;
            /// kiln::kernels::fill::sequence(&s, &mut x, 5, 2)?;
            /// assert_eq!(x.to_vec()?, [5, 7, 9, 11]);
            /// # Ok(()) }
            /// ```
            fn sequence<T: Number>(dst: view_mut T, start: value T, step: value T) -> ();
        }
    };
    ($($callback:ident)::+, histogram) => {
        $($callback)::+! { histogram;
            /// Count `x` into `bins` equal bins over `[lo, hi)`, adding to `counts`;
            /// values outside the range are added to `dropped[0]`; returns at once.
            fn histogram_into<T: HistogramInput>(x: view T, bins: value usize, lo: value T::Bound, hi: value T::Bound, counts: view_mut u32, dropped: view_mut u64) -> ();
            /// Count `x` into `bins` equal bins over `[lo, hi)`, writing `counts`;
            /// returns how many values fell outside; blocks.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::histogram::histogram;
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[0u8, 1, 1, 255])?;
            /// let mut counts = s.alloc::<u32>(2)?;
            /// let dropped = histogram(&s, &x, 2, 0, 2, &mut counts)?;
            /// assert_eq!((counts.to_vec()?, dropped), (vec![1, 2], 1));
            /// # Ok(()) }
            /// ```
            fn histogram<T: HistogramInput>(x: view T, bins: value usize, lo: value T::Bound, hi: value T::Bound, counts: view_mut u32) -> u64;
        }
    };
    ($($callback:ident)::+, image) => {
        $($callback)::+! { image;
            /// RGB or RGBA pixels (`u8` channels) to gray, one `u8` per pixel.
            fn gray(format: value PixelFormat, input: view u8, width: value usize, height: value usize, output: view_mut u8) -> ();
            /// `output` = `input` (`width x height` pixels) blurred by `kind`.
            fn blur<P: Pixel>(kind: value Blur, input: view P, width: value usize, height: value usize, border: value Border, output: view_mut P) -> ();
        }
    };
    ($($callback:ident)::+, map) => {
        $($callback)::+! { map;
            /// `y[i] = op(x[i])`.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::map::{map, MapOp};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[1.0f32, -2.0, 3.0])?;
            /// let mut y = s.alloc::<f32>(3)?;
            /// map(&s, MapOp::Square, &x, &mut y)?;
            /// assert_eq!(y.to_vec()?, [1.0, 4.0, 9.0]);
            /// # Ok(()) }
            /// ```
            fn map<T: Number>(op: value MapOp, x: view T, y: view_mut T) -> ();
            /// `x[i] = op(x[i])`.
            fn map_in_place<T: Number>(op: value MapOp, x: view_mut T) -> ();
        }
    };
    ($($callback:ident)::+, matmul) => {
        $($callback)::+! { matmul;
            /// `c = a . b`, row-major (`a` is `m x k`, `b` is `k x n`, `c` is `m x n`
            /// of the accumulator type); returns the strategy it ran.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::matmul::{matmul, MatmulShape};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let a = s.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
            /// let b = s.upload(&[1.0f32, 0.0, 0.0, 1.0])?;
            /// let mut c = s.alloc::<f32>(4)?;
            /// matmul(&s, &a, &b, &mut c, MatmulShape::new(2, 2, 2))?;
            /// assert_eq!(c.to_vec()?, [1.0, 2.0, 3.0, 4.0]);
            /// # Ok(()) }
            /// ```
            fn matmul<T: MatmulElement>(a: view T, b: view T, c: view_mut T::Acc, shape: value MatmulShape) -> MatmulStrategy;
            /// [`matmul`] with a chosen strategy.
            fn matmul_with<T: MatmulElement>(strategy: value MatmulStrategy, a: view T, b: view T, c: view_mut T::Acc, shape: value MatmulShape) -> MatmulStrategy;
            /// `c = a . b` of 16-bit matrices, `c` of their type: the f32 sum of
            /// [`matmul_with`] rounded once per element.
            fn matmul_rounded<T: RoundedElement>(strategy: value MatmulStrategy, a: view T, b: view T, c: view_mut T, shape: value MatmulShape) -> MatmulStrategy;
            /// `c = scale_a scale_b (a . b)` of 8-bit float matrices (E4M3, E5M2),
            /// one f32 scale each in device memory, `c` in f32, f16 or bf16.
            fn matmul_scaled<A: Fp8Element, W: Fp8Element, O: ScaledOutput>(a: view A, b: view W, c: view_mut O, shape: value MatmulShape, scale_a: view f32, scale_b: view f32) -> MatmulStrategy;
        }
    };
    ($($callback:ident)::+, random) => {
        $($callback)::+! { random;
            /// Fill `dst` with `rng`'s next uniform values of `T` on `stream`, and move
            /// `rng` past them (see [`Philox::fill_uniform`]): `u32` words, or `f32`
            /// and `f64` values in `[0, 1)`. Returns at once.
            fn fill_uniform<T: Uniform>(rng: value &mut Philox, dst: view_mut T) -> ();
            /// Fill `dst` with `rng`'s next standard normal values of `T` (mean 0,
            /// standard deviation 1) on `stream`, and move `rng` past them (see
            /// [`Philox::fill_normal`]). Returns at once.
            fn fill_normal<T: Normal>(rng: value &mut Philox, dst: view_mut T) -> ();
        }
    };
    ($($callback:ident)::+, reduce) => {
        $($callback)::+! { reduce;
            /// Reduce `x` with `op` into `out[0]`, on the device; returns at once.
            fn reduce_into<T: Number>(op: value ReduceOp, x: view T, out: view_mut T) -> ();
            /// Reduce `x` with `op` and return the result on the host; blocks.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::reduce::{reduce, ReduceOp};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[4i32, -1, 7])?;
            /// assert_eq!(reduce(&s, ReduceOp::Max, &x)?, 7);
            /// # Ok(()) }
            /// ```
            fn reduce<T: Number>(op: value ReduceOp, x: view T) -> T;
            /// `out[0] = sum(x[i] * y[i])`, on the device; returns at once.
            fn dot_into<T: Number>(x: view T, y: view T, out: view_mut T) -> ();
            /// `sum(x[i] * y[i])`, returned on the host; blocks.
            fn dot<T: Number>(x: view T, y: view T) -> T;
            /// Reduce a row-major `rows x cols` matrix along `axis` (0: down the
            /// columns, giving `cols` values; 1: along the rows, giving `rows`).
            fn reduce_axis<T: Number>(op: value ReduceOp, x: view T, rows: value usize, cols: value usize, axis: value usize, out: view_mut T) -> ();
            /// The index and value of the first minimum or maximum of `x`, on the device.
            fn arg_reduce_into<T: Number>(op: value ArgOp, x: view T, index: view_mut u64, value: view_mut T) -> ();
            /// The index and value of the first minimum of `x`; blocks.
            fn argmin<T: Number>(x: view T) -> (usize, T);
            /// The index and value of the first maximum of `x`; blocks.
            fn argmax<T: Number>(x: view T) -> (usize, T);
        }
    };
    ($($callback:ident)::+, scan) => {
        $($callback)::+! { scan;
            /// `y` = the inclusive or exclusive prefix sum of `x`.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::scan::{scan, ScanKind};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[1u32, 2, 3, 4])?;
            /// let mut y = s.alloc::<u32>(4)?;
            /// scan(&s, ScanKind::Exclusive, &x, &mut y)?;
            /// assert_eq!(y.to_vec()?, [0, 1, 3, 6]);
            /// # Ok(()) }
            /// ```
            fn scan<T: Number>(kind: value ScanKind, x: view T, y: view_mut T) -> ();
            /// The prefix sum of `x`, in place.
            fn scan_in_place<T: Number>(kind: value ScanKind, x: view_mut T) -> ();
            /// A prefix sum restarting wherever `flags[i]` is non-zero.
            fn segmented_scan<T: Number>(kind: value ScanKind, x: view T, flags: view u32, y: view_mut T) -> ();
        }
    };
    ($($callback:ident)::+, sort) => {
        $($callback)::+! { sort;
            /// Sort `keys` in place (stable).
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::sort::{sort, SortOrder};
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let mut k = s.upload(&[3.5f32, -1.0, 2.0])?;
            /// sort(&s, &mut k, SortOrder::Ascending)?;
            /// assert_eq!(k.to_vec()?, [-1.0, 2.0, 3.5]);
            /// # Ok(()) }
            /// ```
            fn sort<K: SortKey>(keys: view_mut K, order: value SortOrder) -> ();
            /// `sorted` = `keys` sorted (stable); `keys` is left as it was.
            fn sort_into<K: SortKey>(keys: view K, sorted: view_mut K, order: value SortOrder) -> ();
            /// Sort `keys` in place, carrying `values` along (stable).
            fn sort_pairs<K: SortKey>(keys: view_mut K, values: view_mut u32, order: value SortOrder) -> ();
            /// `indices` = the permutation that sorts `keys` (stable).
            fn argsort<K: SortKey>(keys: view K, indices: view_mut u32, order: value SortOrder) -> ();
        }
    };
    ($($callback:ident)::+, thrust) => {
        $($callback)::+! { thrust;
            /// `thrust::sequence`: `dst[i] = init + i * step`.
            fn sequence<T: Number>(dst: view_mut T, init: value T, step: value T) -> ();
            /// `thrust::transform` with a unary op.
            fn transform<T: Number>(x: view T, y: view_mut T, op: value $crate::map::MapOp) -> ();
            /// `thrust::transform` with a binary op.
            fn transform_binary<T: Number>(a: view T, b: view T, c: view_mut T, op: value $crate::elementwise::BinaryOp) -> ();
            /// `thrust::reduce`: `init` combined with every element by `op`; blocks.
            ///
            /// # Examples
            /// ```
            /// use kiln::kernels::reduce::ReduceOp;
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let x = s.upload(&[1i32, 2, 3])?;
            /// assert_eq!(kiln::kernels::thrust::reduce(&s, &x, 10, ReduceOp::Sum)?, 16);
            /// # Ok(()) }
            /// ```
            fn reduce<T: Number>(x: view T, init: value T, op: value $crate::reduce::ReduceOp) -> T;
            /// `thrust::copy_if`; returns how many were kept; blocks.
            fn copy_if<T: Number>(x: view T, out: view_mut T, pred: value $crate::compact::Predicate<T>) -> usize;
        }
    };
    ($($callback:ident)::+, transpose) => {
        $($callback)::+! { transpose;
            /// `output` (`cols x rows`) = the transpose of `input` (`rows x cols`), row-major.
            ///
            /// # Examples
            /// ```
            /// # fn main() -> kiln::Result<()> {
            /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
            /// let s = dev.stream();
            /// let a = s.upload(&[1u32, 2, 3, 4, 5, 6])?;
            /// let mut t = s.alloc::<u32>(6)?;
            /// kiln::kernels::transpose::transpose(&s, &a, 2, 3, &mut t)?;
            /// assert_eq!(t.to_vec()?, [1, 4, 2, 5, 3, 6]);
            /// # Ok(()) }
            /// ```
            fn transpose<T: Element>(input: view T, rows: value usize, cols: value usize, output: view_mut T) -> ();
            /// [`transpose`] with a chosen algorithm.
            fn transpose_with<T: Element>(algorithm: value TransposeAlgorithm, input: view T, rows: value usize, cols: value usize, output: view_mut T) -> ();
        }
    };
}

/// One typed argument of an entry: `view` and `view_mut` are views of
/// backend `B`, a `value` is its type.
macro_rules! typed_argument {
    ($backend:ident, view $ty:ty) => { &impl kiln_core::View<$backend, $ty> };
    ($backend:ident, view_mut $ty:ty) => { &mut impl kiln_core::ViewMut<$backend, $ty> };
    ($backend:ident, value $ty:ty) => { $ty };
}

/// A module of functions with each entry's signature on the typed tier,
/// each calling the typed function with its arguments: a typed function
/// whose arguments or result differ from its entry does not compile.
macro_rules! check {
    ($module:ident;
     $(
        $(#[$attr:meta])*
        fn $name:ident $(<$($generic:ident: $bound:path),*>)? ($($arg:ident: $role:ident $ty:ty),* $(,)?) -> $ret:ty;
     )*
    ) => {
        #[allow(dead_code, unused_imports, clippy::too_many_arguments)]
        mod $module {
            use crate::$module::*;
            use crate::Number;
            use kiln_core::{Backend, Element, Result, Stream};

            $(
                fn $name<B: Backend $($(, $generic: $bound)*)?>(
                    stream: &Stream<B>,
                    $($arg: typed_argument!(B, $role $ty)),*
                ) -> Result<$ret> {
                    crate::$module::$name(stream, $($arg),*)
                }
            )*
        }
    };
}

mod check {
    entry_points!(check, compact);
    entry_points!(check, elementwise);
    entry_points!(check, fft);
    entry_points!(check, fill);
    entry_points!(check, histogram);
    entry_points!(check, image);
    entry_points!(check, linalg);
    entry_points!(check, map);
    entry_points!(check, matmul);
    entry_points!(check, random);
    entry_points!(check, reduce);
    entry_points!(check, scan);
    entry_points!(check, sort);
    entry_points!(check, thrust);
    entry_points!(check, transpose);
}
