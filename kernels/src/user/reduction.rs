//! ReductionKernel: a map per element folded by a combining expression.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, DType, Element, Error, IndexWidth, Language, LaunchConfig, Program, RawArg, Result, Source, Stream,
    ViewMut,
};

use super::definition::UserKernel;
use super::kind::Kind;
use super::names;
use super::partials::Partials;
use super::signature::{Binding, Bound};
use crate::expr::{self, Expr, Fold, FoldDef, Generator, Param, Pass, Role, Stmt, Ty, Typed, check_fold};
use crate::launch::BLOCK;

/// The fewest elements a thread of the whole pass folds, where the grid
/// does not reach the device's resident blocks.
const ELEMENTS_PER_THREAD: usize = 16;

/// Elements a part of a split row holds at least: four steps of a block.
const SPLIT_MIN: usize = 4 * BLOCK as usize;

/// A reduction written once in Rust and run on every backend (PyCUDA's and
/// CuPy's `ReductionKernel`): each element is mapped to an accumulator
/// value, the values are folded by a combining expression of `var("a")` and
/// `var("b")` from an identity, and an optional post-map turns the folded
/// `var("a")` into the result.
///
/// - Arguments are `input`s (read at the element index), `raw` inputs (read
///   anywhere with [`Expr::at`]) and `scalar`s; the element count is the
///   common length of the inputs.
/// - The combining expression must be associative and commutative: the
///   order in which elements meet is not the array's (floating-point sums
///   differ from a sequential sum in rounding).
/// - `len()` is the element count in the map, and the number of elements
///   folded into the result in the post-map (so `a / len()` is a mean).
/// - A fold of no elements gives the post-map of the identity.
/// - The identity must be neutral: `combine(identity, x) == x` and
///   `combine(x, identity) == x`. The build checks this at sample values
///   of the accumulator's dtype (small non-negative ones: 0, 1, 2, 3, 7,
///   27, 100, 228, 255, and for floats 1e-20, 0.5, 1.5, 100.25, 1e20 too)
///   and refuses a NaN identity, with an `Err` naming the identity and
///   the combining expression; with a placeholder accumulator the check
///   runs at the first launch (or [`programs`](UserKernel::programs))
///   binding each dtype, before any element is read. What the samples
///   cannot show (`0` for `max` of negative `i32`s passes) gives the same
///   result on every backend: unless the combining expression is one
///   operation (`+`, `*`, `min`, `max`, `&`, `|`, `^` of `a` and `b`) with
///   its neutral element as the identity, it is applied only to operands
///   other than the identity, so a value equal to the identity is left out
///   of the fold however often a backend's plan folds the identity in (each
///   GPU lane starts from it, the CPU from the first element). With a
///   neutral identity that changes no result.
/// - On the CPU, a fold of a whole array whose combining expression is one
///   operation of `a` and `b` (`+`, `*`, `min`, `max`, `&`, `|` or `^`),
///   with that operation's neutral element as the identity, folds each
///   chunk of mapped values natively; its float sums accumulate as kiln's
///   scans' do (f32 in f64, f64 compensated). Any other combining
///   expression, and folds along axes, run on the CPU's expression
///   interpreter.
///
/// # Examples
/// ```
/// use kiln_core::{Args, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::expr::{var, Ty};
/// use kiln_kernels::user::Reduction;
/// # fn main() -> kiln_core::Result<()> {
/// // The Euclidean norm: squares summed, the root of the sum.
/// let t = Ty::param("T");
/// let norm = Reduction::new("norm", t.clone())
///     .input("x", t.clone())
///     .map(var("x") * var("x"))
///     .reduce(var("a") + var("b"))
///     .identity(0)
///     .post(t, var("a").sqrt())
///     .build()?;
///
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[3.0f32, 4.0])?;
/// assert_eq!(norm.reduce::<_, f32>(&s, Args::new().arg(&x))?, 5.0);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Reduction {
    name: String,
    acc: Ty,
    params: Vec<Param>,
    locals: Vec<Stmt>,
    map: Option<Expr>,
    combine: Option<Expr>,
    identity: Option<Expr>,
    post: Option<(Ty, Expr)>,
}

impl Reduction {
    /// A reduction named `name` (an identifier, as for
    /// [`Elementwise::new`](super::Elementwise::new)) accumulating in `accumulator`.
    pub fn new(name: impl Into<String>, accumulator: impl Into<Ty>) -> Self {
        Reduction {
            name: name.into(),
            acc: accumulator.into(),
            params: Vec::new(),
            locals: Vec::new(),
            map: None,
            combine: None,
            identity: None,
            post: None,
        }
    }

    super::fold_arguments!();

    /// The combining expression of `var("a")` and `var("b")` (accumulator values).
    pub fn reduce(mut self, value: impl Into<Expr>) -> Self {
        self.combine = Some(value.into());
        self
    }

    /// The result from the folded value `var("a")`, of dtype `ty`; without
    /// it the result is the folded value.
    pub fn post(mut self, ty: impl Into<Ty>, value: impl Into<Expr>) -> Self {
        self.post = Some((ty.into(), value.into()));
        self
    }

    /// Check the declaration and, where no dtype is a placeholder, every part's types.
    pub fn build(self) -> Result<super::ReductionKernel> {
        UserKernel::build(self)
    }
}

/// A reduction instantiated for argument dtypes and a backend.
type Instance = super::definition::Instance<Reduction>;

/// A reduction runs the passes of its language's generator (none for a
/// language without one).
impl Kind for Reduction {
    super::fold_kind!(Pass, fold_passes, fold);
    const KERNEL: &'static str = "ReductionKernel";

    fn declare(self) -> Result<FoldDef> {
        let fail = |reason: &str| Error::invalid(format!("user kernel `{}`", self.name), reason.to_string());
        if !self.params.iter().any(|p| p.role == Role::Input) {
            return Err(fail("has no input to take the element count from"));
        }
        let map = self.map.ok_or_else(|| fail("has no map (Reduction::map)"))?;
        let combine = self.combine.ok_or_else(|| fail("has no combining expression (Reduction::reduce)"))?;
        let identity = self.identity.ok_or_else(|| fail("has no identity (Reduction::identity)"))?;
        Ok(FoldDef {
            name: self.name,
            params: self.params,
            locals: self.locals,
            map,
            combine,
            identity,
            post: self.post,
            acc: self.acc,
        })
    }
}

impl UserKernel<Reduction> {
    /// Replace the generated pass `entry` in `language` by a hand-written
    /// source (the escape hatch). The passes and their entry points are
    /// those [`programs`](Self::programs) gives, `user_{name}_{pass}`: `whole`,
    /// `fold`, `rows`, `split`, `tile` and `cols` on a GPU (`whole`, `rows`, `cols`
    /// on the host); a replacement keeps its pass's parameters, launch
    /// shape and entry point. `Err` naming the kernel and its entry points
    /// when `entry` is not one of them.
    ///
    /// # Safety
    /// The source must do what the generated pass does within the same
    /// bounds: read its inputs within the lengths passed, write only its
    /// output range (one partial per block, one result per row or column),
    /// and not write its inputs.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, IndexWidth, Language};
    /// use kiln_kernels::expr::var;
    /// use kiln_kernels::user::Reduction;
    /// # fn main() -> kiln_core::Result<()> {
    /// let sum = Reduction::new("sum", DType::I32).input("x", DType::I32)
    ///     .map(var("x")).reduce(var("a") + var("b")).identity(0).build()?;
    /// let programs = sum.programs(Language::Host, IndexWidth::U64, &[])?;
    /// let entries: Vec<&str> = programs.iter().map(|p| p.name()).collect();
    /// assert_eq!(entries, ["user_sum_whole", "user_sum_rows", "user_sum_cols"]);
    /// // SAFETY: an unknown entry point is refused before any source could run.
    /// let wrong = unsafe { sum.clone().with_source(Language::Host, "sum_all", "") };
    /// assert!(wrong.unwrap_err().to_string().contains("user_sum_whole, user_sum_rows, user_sum_cols"));
    /// # Ok(()) }
    /// ```
    pub unsafe fn with_source(self, language: Language, entry: &str, source: impl Into<Source>) -> Result<Self> {
        self.replaced(language, entry, source.into())
    }

    /// Fold every element into `out` (one element, of the result's dtype),
    /// on the device; returns at once. `args` are given in declaration order.
    ///
    /// `Err` naming the kernel and the argument for arguments that do not
    /// match the declaration (see [`ElementwiseKernel::launch`](super::ElementwiseKernel::launch)),
    /// an output of another dtype or length than one, or a dtype the
    /// device cannot compute on.
    pub fn reduce_into<B: Backend, T: Element>(
        &self,
        stream: &Stream<B>,
        args: Args<'_, B>,
        out: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        let (inst, bound) = self.prepare(stream, &args, Some(T::DTYPE))?;
        let what = self.what();
        let out = out.view_mut();
        if out.len() != 1 {
            return Err(Error::LengthMismatch { what: format!("{what}: output"), expected: 1, actual: out.len() });
        }
        let width = stream.device().info().features.index_width;
        let scalars = scalars(args.raw());
        let args = lengths(args, &bound, width, &what)?.length(width, bound.n, &what)?;
        if B::LANGUAGE.runs_whole_launch() {
            let kernel = self.kernel(stream, &inst, Pass::Whole)?;
            // SAFETY: the host reduction reads the inputs over [0, n) and raw
            // inputs within their lengths, and writes the one output element.
            return unsafe { stream.launch(&kernel, LaunchConfig::new(1, 1), args.arg(out)) };
        }
        let info = stream.device().info();
        let most = crate::reduce::resident_blocks(info).min(info.limits.max_grid[0] as usize);
        // At least 16 elements a thread (four steps of the whole pass's four
        // accumulators, two of its packed steps), as the hand-written fold
        // takes: a small reduction runs as few blocks as that one. On the
        // H200 a sum of squares of 1 Mi f32 took 9.2 us with 4 a thread (528
        // blocks), 8.8 us with 16 (256 blocks); the hand-written sum 7.2 us.
        let blocks = bound.n.div_ceil(BLOCK as usize * ELEMENTS_PER_THREAD).clamp(1, most);
        let mut part = Partials::alloc(stream, inst.checked.acc, blocks)?;
        let whole = self.kernel(stream, &inst, Pass::Whole)?;
        // SAFETY: the pass reads the inputs over [0, n) and raw inputs within
        // their lengths, and writes part[0..blocks), one element per block.
        unsafe { stream.launch(&whole, LaunchConfig::new(blocks as u32, BLOCK), part.write(args))? };
        let fold = self.kernel(stream, &inst, Pass::Fold)?;
        let mut a = part.read(Args::new()).length(width, blocks, &what)?;
        for s in &scalars {
            a = a.arg(*s);
        }
        let a = a.length(width, bound.n, &what)?.arg(out);
        // SAFETY: one block reads part[0..blocks) and writes out[0].
        unsafe { stream.launch(&fold, LaunchConfig::new(1, BLOCK), a) }
    }

    /// Fold every element and return the result on the host; blocks until it is there.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Args, DType, Device};
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::expr::var;
    /// use kiln_kernels::user::Reduction;
    /// # fn main() -> kiln_core::Result<()> {
    /// // The largest absolute value of an i32 array, as u32.
    /// let absmax = Reduction::new("absmax", DType::U32)
    ///     .input("x", DType::I32)
    ///     .map(var("x").abs().cast(DType::U32))
    ///     .reduce(var("a").max(var("b")))
    ///     .identity(0)
    ///     .build()?;
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let x = s.upload(&[3, -7, 5, i32::MIN])?;
    /// assert_eq!(absmax.reduce::<_, u32>(&s, Args::new().arg(&x))?, 1 << 31);
    /// # Ok(()) }
    /// ```
    pub fn reduce<B: Backend, T: Element>(&self, stream: &Stream<B>, args: Args<'_, B>) -> Result<T> {
        let mut out = stream.alloc::<T>(1)?;
        self.reduce_into(stream, args, &mut out)?;
        let mut v = [T::default()];
        stream.copy_to_host(&out, &mut v)?;
        Ok(v[0])
    }

    /// Fold along `axis` of the inputs seen as row-major `rows x cols`
    /// arrays: axis 1 gives one result per row (`rows` of them), axis 0
    /// one per column (`cols`), into `out`. `index()` in the map is the
    /// element's position in the whole array.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Args, DType, Device};
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::expr::{len, var};
    /// use kiln_kernels::user::Reduction;
    /// # fn main() -> kiln_core::Result<()> {
    /// let mean = Reduction::new("mean", DType::F64)
    ///     .input("x", DType::F64)
    ///     .map(var("x"))
    ///     .reduce(var("a") + var("b"))
    ///     .identity(0)
    ///     .post(DType::F64, var("a") / len().cast(DType::F64))
    ///     .build()?;
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let x = s.upload(&[1.0, 2.0, 3.0, 5.0, 7.0, 9.0])?; // [[1, 2, 3], [5, 7, 9]]
    /// let mut rows = s.alloc::<f64>(2)?;
    /// mean.reduce_axis(&s, Args::new().arg(&x), 2, 3, 1, &mut rows)?;
    /// assert_eq!(rows.to_vec()?, [2.0, 7.0]);
    /// let mut cols = s.alloc::<f64>(3)?;
    /// mean.reduce_axis(&s, Args::new().arg(&x), 2, 3, 0, &mut cols)?;
    /// assert_eq!(cols.to_vec()?, [3.0, 4.5, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_axis<B: Backend, T: Element>(
        &self,
        stream: &Stream<B>,
        args: Args<'_, B>,
        rows: usize,
        cols: usize,
        axis: usize,
        out: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        let what = format!("user kernel `{}` along axis {axis}", self.name());
        if axis > 1 {
            return Err(Error::invalid(what, "the axis of a 2-D shape is 0 or 1"));
        }
        let (inst, bound) = self.prepare(stream, &args, Some(T::DTYPE))?;
        if rows.checked_mul(cols) != Some(bound.n) {
            return Err(Error::LengthMismatch {
                what: format!("{what}: the inputs as {rows} x {cols}"),
                expected: rows.saturating_mul(cols),
                actual: bound.n,
            });
        }
        let out = out.view_mut();
        let want = if axis == 1 { rows } else { cols };
        if out.len() != want {
            return Err(Error::LengthMismatch { what: format!("{what}: output"), expected: want, actual: out.len() });
        }
        if want == 0 {
            return Ok(());
        }
        if (axis == 1 && rows == 1) || (axis == 0 && cols == 1) {
            // One lane: the whole-array plan, with every block on it (the
            // lane plans give a lane one warp or one workgroup).
            let mut out = out;
            return self.reduce_into(stream, args, &mut out);
        }
        let width = stream.device().info().features.index_width;
        let scalars = scalars(args.raw());
        let args = lengths(args, &bound, width, &what)?
            .length(width, bound.n, &what)?
            .length(width, rows, &what)?
            .length(width, cols, &what)?;
        let info = stream.device().info();
        let max_x = info.limits.max_grid[0];
        if B::LANGUAGE.runs_whole_launch() {
            let kernel = self.kernel(stream, &inst, if axis == 1 { Pass::Rows } else { Pass::Cols })?;
            // SAFETY: the host reduction reads the inputs over [0, rows * cols)
            // and raw inputs within their lengths, and writes out[0..want).
            return unsafe { stream.launch(&kernel, LaunchConfig::new(1, 1), args.arg(out)) };
        }
        if axis == 1 {
            // CUDA: a warp per row (the device's warp width); WGSL: a
            // workgroup per row. Rows too few to fill the device are cut
            // into parts, a block each.
            let per_block =
                if B::LANGUAGE == Language::Cuda { (BLOCK / info.limits.warp_size.max(1)).max(1) as usize } else { 1 };
            // On CUDA twice the blocks of a whole-array pass (a part's loads
            // are single elements, not 16-byte packs: 2974 to 3423 GB/s for
            // 8 rows of 8 Mi f32 on an H200); WGSL's 1024 groups already
            // keep enough loads in flight (twice as many: 3970 to 2932 GB/s).
            let resident = crate::reduce::resident_blocks(info);
            let per_part = if B::LANGUAGE == Language::Cuda { 2 } else { 1 };
            let parts = (per_part * resident).div_ceil(rows).min(cols / SPLIT_MIN);
            if rows < resident * per_block && parts > 1 {
                let mut part = Partials::alloc(stream, inst.checked.acc, parts * rows)?;
                let split = self.kernel(stream, &inst, Pass::Split)?;
                let grid = (parts * rows).clamp(1, max_x as usize) as u32;
                let a = part.write(args.length(width, parts, &what)?);
                // SAFETY: block (row r, part p) reads the inputs over its part
                // of row r and writes part[p * rows + r]; raw inputs within
                // their lengths.
                unsafe { stream.launch(&split, LaunchConfig::new(grid, BLOCK), a)? };
                // The second pass folds `parts` partials per row: its
                // "columns" are the rows, its count the elements per row.
                return self.fold_partials(stream, &inst, &part, parts, &scalars, cols, out, &what);
            }
            let grid = crate::launch::blocks(rows, per_block, max_x);
            let kernel = self.kernel(stream, &inst, Pass::Rows)?;
            // SAFETY: each row r < rows reads the inputs over its columns and
            // writes out[r]; raw inputs are read within their lengths.
            return unsafe { stream.launch(&kernel, LaunchConfig::new(grid, BLOCK), args.arg(out)) };
        }
        let tiles = crate::launch::blocks(cols, 32, max_x);
        let target = crate::reduce::resident_blocks(info);
        let most_chunks = rows.div_ceil(8).clamp(1, info.limits.max_grid[1] as usize);
        let chunks = target.div_ceil(tiles as usize).clamp(1, most_chunks);
        let rpc = rows.div_ceil(chunks);
        let chunks = if rpc == 0 { 1 } else { rows.div_ceil(rpc) };
        let mut part = Partials::alloc(stream, inst.checked.acc, chunks * cols)?;
        let tile = self.kernel(stream, &inst, Pass::Tile)?;
        let a = part.write(args.length(width, rpc, &what)?);
        let config = LaunchConfig::new((tiles, chunks as u32), (32, 8));
        // SAFETY: chunk c of rows reads the inputs over its rows and writes
        // part[c * cols..(c + 1) * cols); raw inputs within their lengths.
        unsafe { stream.launch(&tile, config, a)? };
        self.fold_partials(stream, &inst, &part, chunks, &scalars, rows, out, &what)
    }

    /// The column pass: `out[c]` = the post-map of the fold of
    /// `part[k * out.len() + c]` for `k < chunks`, `count` elements each.
    #[allow(clippy::too_many_arguments)]
    fn fold_partials<B: Backend, T: Element>(
        &self,
        stream: &Stream<B>,
        inst: &Instance,
        part: &Partials<B>,
        chunks: usize,
        scalars: &[kiln_core::Scalar],
        count: usize,
        out: kiln_core::BufferViewMut<'_, B, T>,
        what: &str,
    ) -> Result<()> {
        let width = stream.device().info().features.index_width;
        let outputs = out.len();
        let colk = self.kernel(stream, inst, Pass::Cols)?;
        let mut a = part.read(Args::new()).length(width, chunks, what)?;
        for s in scalars {
            a = a.arg(*s);
        }
        let a = a.length(width, count, what)?.length(width, outputs, what)?.arg(out);
        let grid = crate::launch::blocks(outputs, BLOCK as usize, stream.device().info().limits.max_grid[0]);
        // SAFETY: column c < outputs reads part[k * outputs + c], k < chunks
        // (`part` holds chunks * outputs values), and writes out[c].
        unsafe { stream.launch(&colk, LaunchConfig::new(grid, BLOCK), a) }
    }
}

/// `args` with each raw input's length appended.
fn lengths<'a, B: Backend>(
    mut args: Args<'a, B>,
    bound: &Bound,
    width: kiln_core::IndexWidth,
    what: &str,
) -> Result<Args<'a, B>> {
    for &len in &bound.raw_lens {
        args = args.length(width, len, what)?;
    }
    Ok(args)
}

/// The scalar arguments of a launch, in order.
fn scalars<B: Backend>(raw: &[RawArg<'_, B>]) -> Vec<kiln_core::Scalar> {
    raw.iter()
        .filter_map(|a| match a {
            RawArg::Scalar(s) => Some(*s),
            RawArg::Buffer { .. } => None,
        })
        .collect()
}
