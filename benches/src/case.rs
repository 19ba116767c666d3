//! The bench cases: each pattern with its bytes-and-flops model.

use kiln_core::DType;
use kiln_kernels::map::MapOp;
use kiln_kernels::matmul::{MatmulShape, MatmulStrategy, Precision};
use kiln_kernels::transpose::TransposeAlgorithm;

use crate::peaks::Arithmetic;

/// A pattern the benches time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Device-to-device copy: the ceiling every other row is compared with.
    CopyD2d,
    /// `x[i] = value`.
    Fill,
    /// `x[i] = start + i * step`.
    Sequence,
    /// `y = op(x)`.
    Map(MapOp),
    /// `c = a + b`.
    VectorAdd,
    /// `z = alpha * x + y`.
    Axpy,
    /// A square matrix of `n` elements (side `sqrt(n)`) transposed.
    Transpose(TransposeAlgorithm),
    /// f32 `c = a . b` of square matrices of `n` elements each (side `sqrt(n)`).
    Sgemm(MatmulStrategy),
    /// RGB u8 to gray, a square image of `n` pixels.
    Grayscale,
    /// 3 x 3 box blur (clamped border) of a square f32 image of `n` pixels.
    Blur3x3,
    /// f64 `c = a . b` of square matrices of `n` elements each (side
    /// `sqrt(n)`), kiln's own strategy (on the CPU `faer`'s or `gemm`'s kernels).
    Dgemm,
    /// `c = a . b` in one of matmul's dtypes and [`Precision`] modes (the
    /// `matmul_*` rows, against the device's peak for that arithmetic):
    /// see [`MatmulMode`].
    Matmul(MatmulMode),
    /// `n` random keys of `key` (u32, i32 or f32) sorted ascending.
    ///
    /// Keys alone (`pairs: false`) are sorted out of place into a second
    /// buffer, so every run sorts the same unsorted keys. Pairs (`pairs:
    /// true`, u32 values carried with the keys) are sorted in place, so each
    /// run first copies the unsorted keys and values into the buffers it
    /// sorts; the copies are part of its time, as NumPy's `argsort` and
    /// gather allocate theirs.
    Sort {
        /// The keys' element type.
        key: DType,
        /// Whether u32 values are carried with the keys.
        pairs: bool,
    },
    /// The sum of `n` elements, left on the device.
    ReduceSum,
    /// `sum(x[i] * y[i])` of two arrays of `n`, left on the device.
    Dot,
    /// Inclusive scan of `n` elements into a second array.
    ScanInclusive,
    /// Exclusive scan of `n` elements into a second array (`y[0]` the
    /// identity): the twin of `scan_inclusive`, against CUB's `ExclusiveSum`.
    ScanExclusive,
    /// `copy_if(x > threshold)` of `n` elements whose values are uniform over
    /// the bench's range, the threshold its midpoint (half are kept), with
    /// the count left on the device.
    Compact,
    /// A 256-bin histogram of `n` `sample` values (i32 or f32) over
    /// [0, 1024), uniform over the range (`skewed: false`) or all in one bin
    /// (`skewed: true`).
    Histogram {
        /// The samples' element type.
        sample: DType,
        /// Whether every value falls in one bin.
        skewed: bool,
    },
    /// `z = alpha * x + y` as a user kernel (`kiln_kernels::user::Elementwise`),
    /// generated from its expression: against `axpy`.
    UserAxpy,
    /// The sum of `x[i] * x[i]` as a user reduction (`user::Reduction`),
    /// left on the device: against `dot`, which reads two arrays.
    UserSumSquares,
    /// An inclusive `+` scan as a user scan (`user::Scan`): against `scan_inclusive`.
    UserScan,
    /// `c = alpha * x + y` on `kiln_kernels::array::Array`s, evaluated as
    /// one fused kernel into a new array: against `axpy`.
    ArrayAxpy,
    /// `((a * 2 + b).sqrt()).sum()` on arrays: the expression fused into
    /// one reduction pass, its result left on the device (a 0-d array):
    /// against the copy rate for the bytes it reads.
    ArrayFusedSum,
    /// The sums of the 8 rows of an `8 x n/8` array (`sum` along axis 1):
    /// few long rows, each cut into parts; against the copy rate for the
    /// bytes it reads.
    ArrayRowSums,
    /// `n` uniform values from a Philox4x32-10 stream into a buffer
    /// (`kiln_kernels::random`): against `fill`.
    RandomUniform,
    /// `n` standard normal values from a Philox4x32-10 stream (kiln's
    /// Box-Muller, the same bits on every backend): against `fill`.
    RandomNormal,
    /// The end-to-end latency of small work: the sum of 1 Ki f32 already on
    /// the device, including reading the scalar back to the host, timed on
    /// the host clock. Its size is fixed whatever the sweep, and its rows
    /// report microseconds, not throughput.
    ReduceLatency,
    /// The cost of one launch: a map over one element enqueued back to back
    /// (hundreds between one pair of events), microseconds per launch, the
    /// host's work and the device's together, whichever bounds.
    LaunchOverhead,
    /// The cost of one kernel of a graph: 100 dependent kernels over one
    /// f32 (`x += 1`, each reading what the one before wrote) captured into
    /// a graph, replayed back to back; microseconds per kernel, host and
    /// device together, against [`LaunchOverhead`](Pattern::LaunchOverhead)
    /// and CuPy's graphs.
    GraphLaunch,
}

impl Pattern {
    /// Every pattern, in report order.
    pub const ALL: [Pattern; 56] = [
        Pattern::CopyD2d,
        Pattern::Fill,
        Pattern::Sequence,
        Pattern::Map(MapOp::Square),
        Pattern::Map(MapOp::Abs),
        Pattern::Map(MapOp::Negate),
        Pattern::Map(MapOp::Sqrt),
        Pattern::VectorAdd,
        Pattern::Axpy,
        Pattern::Transpose(TransposeAlgorithm::Tiled),
        Pattern::Transpose(TransposeAlgorithm::Naive),
        Pattern::Sgemm(MatmulStrategy::Tiled),
        Pattern::Sgemm(MatmulStrategy::Vendor),
        Pattern::Dgemm,
        Pattern::Matmul(MatmulMode::square(DType::F32, Precision::Exact, MatmulStrategy::Auto)),
        Pattern::Matmul(MatmulMode::square(DType::F32, Precision::Tf32, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::square(DType::F32, Precision::Bf16, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::square(DType::F64, Precision::Exact, MatmulStrategy::Auto)),
        Pattern::Matmul(MatmulMode::square(DType::F16, Precision::Exact, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::square(DType::BF16, Precision::Exact, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::square(DType::F16, Precision::Exact, MatmulStrategy::Auto).rounded()),
        Pattern::Matmul(MatmulMode::square(DType::F8E4M3, Precision::Exact, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::batch(DType::F32, Precision::Exact, MatmulStrategy::Auto)),
        Pattern::Matmul(MatmulMode::batch(DType::F32, Precision::Tf32, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::batch(DType::F16, Precision::Exact, MatmulStrategy::Vendor)),
        Pattern::Matmul(MatmulMode::batch(DType::F16, Precision::Exact, MatmulStrategy::Auto).rounded()),
        // kiln's own kernels in the modes the tensor cores serve (on CUDA
        // with matrix units: mma.sync), beside the vendor rows above.
        Pattern::Matmul(MatmulMode::square(DType::F32, Precision::Tf32, MatmulStrategy::Tiled)),
        Pattern::Matmul(MatmulMode::square(DType::F16, Precision::Exact, MatmulStrategy::Tiled)),
        Pattern::Matmul(MatmulMode::square(DType::BF16, Precision::Exact, MatmulStrategy::Tiled)),
        Pattern::Matmul(MatmulMode::batch(DType::F16, Precision::Exact, MatmulStrategy::Tiled)),
        Pattern::Grayscale,
        Pattern::Blur3x3,
        Pattern::Sort { key: DType::U32, pairs: false },
        Pattern::Sort { key: DType::I32, pairs: false },
        Pattern::Sort { key: DType::F32, pairs: false },
        Pattern::Sort { key: DType::U32, pairs: true },
        Pattern::ReduceSum,
        Pattern::Dot,
        Pattern::ScanInclusive,
        Pattern::ScanExclusive,
        Pattern::Compact,
        Pattern::Histogram { sample: DType::I32, skewed: false },
        Pattern::Histogram { sample: DType::I32, skewed: true },
        Pattern::Histogram { sample: DType::F32, skewed: false },
        Pattern::Histogram { sample: DType::F32, skewed: true },
        Pattern::UserAxpy,
        Pattern::UserSumSquares,
        Pattern::UserScan,
        Pattern::ArrayAxpy,
        Pattern::ArrayFusedSum,
        Pattern::ArrayRowSums,
        Pattern::RandomUniform,
        Pattern::RandomNormal,
        Pattern::ReduceLatency,
        Pattern::LaunchOverhead,
        Pattern::GraphLaunch,
    ];

    /// The name used in tables, JSON and the peers' scripts.
    pub fn name(self) -> String {
        match self {
            Pattern::CopyD2d => "copy_d2d".into(),
            Pattern::Fill => "fill".into(),
            Pattern::Sequence => "sequence".into(),
            Pattern::Map(op) => format!("map_{op}"),
            Pattern::VectorAdd => "vector_add".into(),
            Pattern::Axpy => "axpy".into(),
            Pattern::Transpose(TransposeAlgorithm::Tiled) => "transpose".into(),
            Pattern::Transpose(a) => format!("transpose_{a}"),
            Pattern::Sgemm(MatmulStrategy::Tiled) => "sgemm".into(),
            // The vendor GEMM's row keeps the name the peers' scripts and the
            // results so far know it by: on CUDA it is cuBLAS, against CuPy's matmul.
            Pattern::Sgemm(MatmulStrategy::Vendor) => "sgemm_cublas".into(),
            Pattern::Sgemm(s) => format!("sgemm_{s}"),
            Pattern::Grayscale => "grayscale".into(),
            Pattern::Blur3x3 => "blur3x3_f32".into(),
            Pattern::Dgemm => "dgemm".into(),
            Pattern::Matmul(mode) => mode.name(),
            Pattern::Sort { key, pairs: false } => format!("sort_{key}"),
            Pattern::Sort { key, pairs: true } => format!("sort_pairs_{key}"),
            Pattern::ReduceSum => "reduce_sum".into(),
            Pattern::Dot => "dot".into(),
            Pattern::ScanInclusive => "scan_inclusive".into(),
            Pattern::ScanExclusive => "scan_exclusive".into(),
            Pattern::Compact => "compact".into(),
            Pattern::Histogram { sample, skewed: false } => format!("histogram_{sample}"),
            Pattern::Histogram { sample, skewed: true } => format!("histogram_{sample}_skewed"),
            Pattern::UserAxpy => "user_axpy".into(),
            Pattern::UserSumSquares => "user_sum_squares".into(),
            Pattern::UserScan => "user_scan".into(),
            Pattern::ArrayAxpy => "array_axpy".into(),
            Pattern::ArrayFusedSum => "array_fused_sum".into(),
            Pattern::ArrayRowSums => "array_row_sums".into(),
            Pattern::RandomUniform => "random_uniform".into(),
            Pattern::RandomNormal => "random_normal".into(),
            Pattern::ReduceLatency => "reduce_latency".into(),
            Pattern::LaunchOverhead => "launch_overhead".into(),
            Pattern::GraphLaunch => "graph_launch".into(),
        }
    }

    /// The pattern called `name` (as [`Pattern::name`] writes it).
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::Pattern;
    /// assert_eq!(Pattern::from_name("reduce_latency"), Some(Pattern::ReduceLatency));
    /// assert_eq!(Pattern::from_name("reduce"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The size a pattern always runs at, whatever the sweep (the latency
    /// case: 1 Ki elements; the launch overhead: one; the batched products:
    /// 256 x 512^2 elements per operand, 256 products of 512^3).
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            Pattern::ReduceLatency => Some(LATENCY_ELEMENTS),
            Pattern::LaunchOverhead | Pattern::GraphLaunch => Some(1),
            Pattern::Matmul(MatmulMode { batched: true, .. }) => Some(BATCH * BATCH_SIDE * BATCH_SIDE),
            _ => None,
        }
    }

    /// The sizes the pattern runs at in a run whose sweep is `sweep`, in
    /// ascending order: its fixed size where it has one; for the square
    /// `matmul_*` products, [`matmul_sizes`] of the sweep; every size of
    /// the sweep otherwise.
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::{quick_sizes, sweep_sizes, Pattern};
    /// let tf32 = Pattern::from_name("matmul_f32_tf32").unwrap();
    /// assert_eq!(tf32.sizes_in(&sweep_sizes()), [1 << 20, 1 << 24, 1 << 26]); // 1024^3, 4096^3, 8192^3
    /// assert_eq!(tf32.sizes_in(&quick_sizes()), [1 << 24]); // 4096^3
    /// assert_eq!(Pattern::from_name("sgemm").unwrap().sizes_in(&quick_sizes()), quick_sizes());
    /// ```
    pub fn sizes_in(self, sweep: &[usize]) -> Vec<usize> {
        match (self.fixed_size(), self) {
            (Some(n), _) => vec![n],
            (None, Pattern::Matmul(_)) => matmul_sizes(sweep),
            (None, _) => sorted(sweep),
        }
    }

    /// Whether the pattern's rows are times of small work (microseconds)
    /// rather than throughputs: they get no GB/s, no fraction of the
    /// ceiling and no chart.
    pub fn is_latency(self) -> bool {
        matches!(self, Pattern::ReduceLatency | Pattern::LaunchOverhead | Pattern::GraphLaunch)
    }

    /// The element type a pattern always runs on, whatever the bench's
    /// dtype (grayscale reads u8 pixels, sort_u32 sorts u32 keys, dgemm multiplies f64).
    pub fn fixed_dtype(self) -> Option<DType> {
        match self {
            Pattern::Sgemm(_)
            | Pattern::Blur3x3
            | Pattern::ReduceLatency
            | Pattern::LaunchOverhead
            | Pattern::GraphLaunch => Some(DType::F32),
            Pattern::Grayscale => Some(DType::U8),
            Pattern::Dgemm => Some(DType::F64),
            Pattern::Matmul(mode) => Some(mode.input),
            Pattern::Sort { key, .. } => Some(key),
            Pattern::Histogram { sample, .. } => Some(sample),
            _ => None,
        }
    }

    /// Whether the pattern is bound by arithmetic rather than memory: its
    /// rows report TFLOP/s.
    pub fn compute_bound(self) -> bool {
        matches!(self, Pattern::Sgemm(_) | Pattern::Dgemm | Pattern::Matmul(_))
    }

    /// The arithmetic of a product's inner loop, which sets the device's
    /// peak ([`peak_tflop_per_s`](crate::peak_tflop_per_s)); `None` for
    /// the patterns that are no products.
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::{Arithmetic, Pattern};
    /// assert_eq!(Pattern::from_name("sgemm").unwrap().arithmetic(), Some(Arithmetic::Fp32));
    /// assert_eq!(Pattern::from_name("matmul_batch_f32_tf32").unwrap().arithmetic(), Some(Arithmetic::Tf32));
    /// assert_eq!(Pattern::from_name("vector_add").unwrap().arithmetic(), None);
    /// ```
    pub fn arithmetic(self) -> Option<Arithmetic> {
        match self {
            Pattern::Sgemm(_) => Some(Arithmetic::Fp32),
            Pattern::Dgemm => Some(Arithmetic::Fp64),
            Pattern::Matmul(mode) => Arithmetic::of(mode.input, mode.precision),
            _ => None,
        }
    }

    /// Bytes the pattern must move through device memory for `n` elements
    /// of `dtype`: each input read once, each output written once.
    ///
    /// 2D patterns use the square of side `sqrt(n)` (every size of the sweep
    /// is a square); grayscale counts 3 bytes in and 1 out per pixel; a sort
    /// reads and writes every key once (the least any sort must move), and
    /// a sort of pairs every key and value.
    /// Reductions and histograms read their input once (their outputs are a
    /// few bytes); a compaction reads its input and writes the half it keeps.
    pub fn bytes(self, n: usize, dtype: DType) -> u64 {
        let arrays = match self {
            // a and b in the input type, c in the accumulator's.
            Pattern::Matmul(mode) => return mode.bytes(n),
            Pattern::Compact => return (n + n / 2) as u64 * dtype.size() as u64,
            Pattern::ReduceSum | Pattern::ReduceLatency | Pattern::Histogram { .. } | Pattern::UserSumSquares => 1,
            Pattern::ArrayRowSums => 1,
            Pattern::Dot | Pattern::ScanInclusive | Pattern::ScanExclusive | Pattern::UserScan => 2,
            Pattern::ArrayFusedSum => 2,
            Pattern::Fill | Pattern::Sequence | Pattern::RandomUniform | Pattern::RandomNormal => 1,
            Pattern::CopyD2d | Pattern::Map(_) | Pattern::Transpose(_) | Pattern::Blur3x3 => 2,
            Pattern::Sort { pairs: false, .. } | Pattern::LaunchOverhead | Pattern::GraphLaunch => 2,
            Pattern::VectorAdd | Pattern::Axpy | Pattern::UserAxpy | Pattern::ArrayAxpy => 3,
            Pattern::Sgemm(_) | Pattern::Dgemm => 3,
            // Keys and their u32 values, each read and written once.
            Pattern::Sort { pairs: true, .. } => return 2 * n as u64 * (dtype.size() as u64 + 4),
            Pattern::Grayscale => 4,
        };
        let n = if self.is_2d() { square_side(n).pow(2) } else { n };
        arrays * n as u64 * dtype.size() as u64
    }

    /// Whether `n` is read as a square of side `sqrt(n)`.
    pub fn is_2d(self) -> bool {
        matches!(
            self,
            Pattern::Transpose(_)
                | Pattern::Sgemm(_)
                | Pattern::Dgemm
                | Pattern::Grayscale
                | Pattern::Blur3x3
                | Pattern::Matmul(MatmulMode { batched: false, .. })
        )
    }

    /// Arithmetic operations for `n` elements (reported, not the bound here:
    /// every pattern in this list is memory-bound).
    pub fn flops(self, n: usize) -> u64 {
        let side = square_side(n) as u64;
        match self {
            Pattern::CopyD2d | Pattern::Fill | Pattern::Transpose(_) | Pattern::Sort { .. } => 0,
            Pattern::Compact | Pattern::Histogram { .. } => 0,
            Pattern::ReduceSum | Pattern::ReduceLatency | Pattern::UserScan => n as u64,
            Pattern::ScanInclusive | Pattern::ScanExclusive => n as u64,
            Pattern::ArrayRowSums => n as u64,
            Pattern::Dot | Pattern::UserSumSquares => 2 * n as u64,
            Pattern::Sequence | Pattern::Axpy | Pattern::UserAxpy | Pattern::ArrayAxpy => 2 * n as u64,
            // A multiply, an add, a square root and the sum's add.
            Pattern::ArrayFusedSum => 4 * n as u64,
            // Philox4x32-10: ten rounds of two 32x32 multiplies per 4 values.
            Pattern::RandomUniform => 5 * n as u64,
            // Philox, then per two values a polynomial logarithm (about 20
            // multiplies and adds), a square root (12) and a sine and cosine (22).
            Pattern::RandomNormal => 5 * n as u64 + 27 * n as u64,
            Pattern::Map(_) | Pattern::VectorAdd | Pattern::LaunchOverhead | Pattern::GraphLaunch => n as u64,
            // 2 m n k for m = n = k = side.
            Pattern::Sgemm(_) | Pattern::Dgemm => 2 * side * side * side,
            // 2 m n k per product of the batch.
            Pattern::Matmul(mode) => mode.shape(n).flops(),
            // 3 multiplies and 2 adds per pixel.
            Pattern::Grayscale => 5 * side * side,
            // 9 multiply-adds and a division per pixel.
            Pattern::Blur3x3 => 19 * side * side,
        }
    }

    /// How many arrays of `n` elements one run allocates.
    pub(crate) fn arrays(self) -> usize {
        match self {
            Pattern::Fill | Pattern::Sequence | Pattern::ReduceSum | Pattern::ReduceLatency => 1,
            Pattern::RandomUniform | Pattern::RandomNormal => 1,
            Pattern::ArrayFusedSum => 2,
            Pattern::ArrayRowSums => 1,
            Pattern::ArrayAxpy => 3,
            Pattern::Histogram { .. } | Pattern::UserSumSquares => 1,
            Pattern::CopyD2d | Pattern::Map(_) | Pattern::Transpose(_) | Pattern::Blur3x3 => 2,
            Pattern::LaunchOverhead | Pattern::GraphLaunch => 2,
            Pattern::Dot | Pattern::ScanInclusive | Pattern::ScanExclusive | Pattern::Compact => 2,
            Pattern::UserScan => 2,
            // The sort's input, output and scratch keys.
            Pattern::VectorAdd | Pattern::Axpy | Pattern::UserAxpy | Pattern::Sort { pairs: false, .. } => 3,
            Pattern::Sgemm(_) | Pattern::Dgemm => 3,
            // a and b, and c of the accumulator type, twice as wide for f16 and bf16 inputs.
            Pattern::Matmul(mode) => 2 + mode.output().size() / mode.input.size(),
            // The unsorted keys and values, the sorted ones and their scratch.
            Pattern::Sort { pairs: true, .. } => 6,
            Pattern::Grayscale => 4,
        }
    }
}

/// Products in one batched `matmul_batch_*` row.
pub const BATCH: usize = 256;
/// The side of each product of the batched rows at their fixed size
/// ([`Pattern::fixed_size`]): 256 products of 512^3.
pub const BATCH_SIDE: usize = 512;

/// What a `matmul_*` row multiplies, and how: its input dtype, the
/// [`Precision`] mode allowed, the strategy asked for, and whether it is one
/// square product or a batch.
///
/// A square row of size `n` multiplies two square matrices of `n` elements
/// each (side `sqrt(n)`: 1 Mi is 1024^3, 16 Mi 4096^3, 64 Mi 8192^3); a
/// batched row of size `n` multiplies [`BATCH`] pairs of square matrices of
/// `n / BATCH` elements each (at its fixed size, 256 x 512^3), one batched
/// call. `f16` and `bf16` inputs are multiplied into `f32` (matmul's
/// accumulator type), `f32` and `f64` into their own type, and 8-bit
/// floats by [`matmul_scaled`](kiln_kernels::matmul::matmul_scaled) into
/// `bf16` (scales of 1), `b` stored transposed as cuBLASLt takes it.
///
/// # Examples
/// ```
/// use kiln_benches::{MatmulMode, Pattern};
/// use kiln_core::{DType, Precision};
/// use kiln_kernels::matmul::MatmulStrategy;
/// let tf32 = MatmulMode::batch(DType::F32, Precision::Tf32, MatmulStrategy::Vendor);
/// assert_eq!(tf32.name(), "matmul_batch_f32_tf32");
/// assert_eq!(tf32.shape(1 << 26).to_string(), "256 x (512 x 512) . (512 x 512), tf32");
/// let half = MatmulMode::square(DType::F16, Precision::Exact, MatmulStrategy::Vendor);
/// assert_eq!((half.name(), half.output()), ("matmul_f16".to_string(), DType::F32));
/// assert_eq!((half.rounded().name(), half.rounded().output()), ("matmul_f16_f16".to_string(), DType::F16));
/// assert_eq!(Pattern::Matmul(half).flops(1 << 24), 2 * 4096u64.pow(3));
/// let own = MatmulMode::square(DType::F32, Precision::Tf32, MatmulStrategy::Tiled);
/// assert_eq!(own.name(), "matmul_f32_tf32_own");
/// let fp8 = MatmulMode::square(DType::F8E4M3, Precision::Exact, MatmulStrategy::Vendor);
/// assert_eq!((fp8.name(), fp8.output()), ("matmul_f8e4m3".to_string(), DType::BF16));
/// assert_eq!(fp8.shape(1 << 24).to_string(), "(4096 x 4096) . (4096 x 4096)^T");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatmulMode {
    /// The element type of `a` and `b`.
    pub input: DType,
    /// The arithmetic allowed (which changes `f32` products only).
    pub precision: Precision,
    /// The strategy asked for: `Auto` rows run what `matmul` picks (and
    /// say which), the others exactly that one.
    pub strategy: MatmulStrategy,
    /// [`BATCH`] products in one call rather than one square product.
    pub batched: bool,
    /// `c` of the 16-bit input type ([`matmul_rounded`](kiln_kernels::matmul::matmul_rounded):
    /// the f32 sum rounded once), as the peers' products give, rather than
    /// matmul's f32.
    pub rounded: bool,
}

impl MatmulMode {
    /// One square product of `input` matrices.
    pub const fn square(input: DType, precision: Precision, strategy: MatmulStrategy) -> Self {
        MatmulMode { input, precision, strategy, batched: false, rounded: false }
    }

    /// [`BATCH`] products of `input` matrices in one call.
    pub const fn batch(input: DType, precision: Precision, strategy: MatmulStrategy) -> Self {
        MatmulMode { input, precision, strategy, batched: true, rounded: false }
    }

    /// The same products with `c` of the (16-bit) input type.
    pub const fn rounded(self) -> Self {
        MatmulMode { rounded: true, ..self }
    }

    /// The row's name: `matmul_`, `batch_` for a batch, the input dtype,
    /// the mode where it is not exact ("matmul_batch_f32_tf32"), the input
    /// dtype again where `c` is of that type ("matmul_f16_f16"), and `_own`
    /// for kiln's own kernels asked for by name (`Tiled`:
    /// "matmul_f16_own"). Otherwise the strategy is not in it: each dtype
    /// and mode has one row, and its note says what ran.
    pub fn name(self) -> String {
        let batch = if self.batched { "batch_" } else { "" };
        let into = if self.rounded { format!("_{}", self.input) } else { String::new() };
        let own = if self.strategy == MatmulStrategy::Tiled { "_own" } else { "" };
        match self.precision {
            Precision::Exact => format!("matmul_{batch}{}{into}{own}", self.input),
            p => format!("matmul_{batch}{}_{p}{into}{own}", self.input),
        }
    }

    /// The element type of the product `c`: matmul's accumulator type, or
    /// the input's for a rounded product.
    pub fn output(self) -> DType {
        match self.input {
            _ if self.rounded => self.input,
            DType::F8E4M3 | DType::F8E5M2 => DType::BF16,
            DType::F64 => DType::F64,
            DType::I32 | DType::U32 => self.input,
            _ => DType::F32,
        }
    }

    /// The product a row of size `n` computes.
    pub fn shape(self, n: usize) -> MatmulShape {
        let shape = if self.batched {
            let side = square_side(n / BATCH);
            MatmulShape::new(side, side, side).batch(BATCH).precision(self.precision)
        } else {
            let side = square_side(n);
            MatmulShape::new(side, side, side).precision(self.precision)
        };
        if self.input.is_fp8() { shape.transpose_b() } else { shape }
    }

    /// Bytes a product of size `n` must move: `a` and `b` read once, `c`
    /// written once.
    pub fn bytes(self, n: usize) -> u64 {
        let s = self.shape(n);
        let [m, nn, k, batch] = [s.m, s.n, s.k, s.batch].map(|v| v as u64);
        batch * ((m * k + k * nn) * self.input.size() as u64 + m * nn * self.output().size() as u64)
    }
}

/// The sides of the square `matmul_*` rows in the full sweep: 1024^3,
/// 4096^3 and 8192^3, the sizes GEMMs are usually quoted at.
pub const MATMUL_SIDES: [usize; 3] = [1024, 4096, 8192];
/// Their side in the quick sweep: 4096^3 alone.
pub const QUICK_MATMUL_SIDE: usize = 4096;

/// The sizes of the square `matmul_*` rows in a run whose sweep is
/// `sweep`: in the full sweep ([`sweep_sizes`]) the squares of
/// [`MATMUL_SIDES`] rather than all ten sizes; in the quick sweep
/// ([`quick_sizes`]) [`QUICK_MATMUL_SIDE`]^2 alone (the product the targets
/// are stated at; the other GEMM rows keep the sweep's sizes); any other
/// sweep (sizes asked for with `--size`) as it is.
///
/// # Examples
/// ```
/// use kiln_benches::matmul_sizes;
/// assert_eq!(matmul_sizes(&kiln_benches::sweep_sizes()), [1 << 20, 1 << 24, 1 << 26]);
/// assert_eq!(matmul_sizes(&kiln_benches::quick_sizes()), [1 << 24]);
/// assert_eq!(matmul_sizes(&[1 << 22, 1 << 12]), [1 << 12, 1 << 22]);
/// ```
pub fn matmul_sizes(sweep: &[usize]) -> Vec<usize> {
    let sweep = sorted(sweep);
    if sweep == sorted(&sweep_sizes()) {
        MATMUL_SIDES.iter().map(|s| s * s).collect()
    } else if sweep == sorted(&quick_sizes()) {
        vec![QUICK_MATMUL_SIDE * QUICK_MATMUL_SIDE]
    } else {
        sweep
    }
}

/// `sizes` in ascending order, each once.
fn sorted(sizes: &[usize]) -> Vec<usize> {
    let mut s = sizes.to_vec();
    s.sort_unstable();
    s.dedup();
    s
}

/// The side of the largest square of at most `n` elements.
///
/// # Examples
/// ```
/// assert_eq!(kiln_benches::square_side(1 << 26), 8192);
/// assert_eq!(kiln_benches::square_side(17), 4);
/// ```
pub fn square_side(n: usize) -> usize {
    let mut side = (n as f64).sqrt() as usize;
    while side * side > n {
        side -= 1;
    }
    while (side + 1) * (side + 1) <= n {
        side += 1;
    }
    side
}

/// One measurement to take: a pattern at a size and dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The pattern.
    pub pattern: Pattern,
    /// The element type.
    pub dtype: DType,
    /// Elements per array.
    pub n: usize,
}

/// The full size sweep for 1D cases: 1 Ki to 256 Mi elements, by factors of 4.
pub fn sweep_sizes() -> Vec<usize> {
    (0..10).map(|i| 1024usize << (2 * i)).collect()
}

/// The quick sweep: small, medium, and the 64 Mi size the targets are stated at.
pub fn quick_sizes() -> Vec<usize> {
    vec![1 << 10, 1 << 20, 1 << 26]
}

/// Elements summed by the latency case.
pub(crate) const LATENCY_ELEMENTS: usize = 1 << 10;

/// `1024` as "1Ki", `67108864` as "64Mi".
pub fn size_label(n: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")];
    for (u, s) in UNITS {
        if n >= u && n.is_multiple_of(u) {
            return format!("{}{s}", n / u);
        }
    }
    n.to_string()
}
