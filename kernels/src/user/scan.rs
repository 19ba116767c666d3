//! ScanKernel: a map per element scanned by an associative combining expression.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, DType, Element, Error, IndexWidth, Language, LaunchConfig, Program, Result, Source, Stream, ViewMut,
};

use super::definition::UserKernel;
use super::kind::Kind;
use super::names;
use super::partials::Partials;
use super::signature::Binding;
use crate::expr::{self, Expr, Fold, FoldDef, Generator, Param, Role, ScanPass, Stmt, Ty, Typed, check_fold};
use crate::scan::ScanKind;

/// A scan written once in Rust and run on every backend (PyCUDA's
/// `InclusiveScanKernel` and `ExclusiveScanKernel`, with a map in front):
/// each element is mapped to an accumulator value, and output `i` is the
/// fold, by a combining expression of `var("a")` (the earlier values) and
/// `var("b")` (the later ones), of the values up to `i` (inclusive) or
/// before `i` (exclusive, the identity at 0).
///
/// - Arguments are `input`s (read at the element index), `raw` inputs (read
///   anywhere with [`Expr::at`]) and `scalar`s; the element count is the
///   common length of the inputs. Without a map, a scan of one input scans
///   its values.
/// - The combining expression must be associative, and the identity an
///   identity of it on both sides; it need not be commutative: every
///   backend keeps the elements' order. Floating-point results differ from
///   a sequential loop in rounding, as the grouping differs.
/// - The identity is checked and, where the check cannot prove it neutral
///   everywhere, left out of every fold, as for a [`Reduction`](super::Reduction).
/// - Any length; CUDA scans in one pass (decoupled look-back, as kiln's
///   own scan), wgpu in passes over tiles, the CPU in parallel chunks.
/// - On the CPU, a combining expression that is one operation of `a` and
///   `b` (`+`, `*`, `min`, `max`, `&`, `|` or `^`), with that operation's
///   neutral element as the identity, scans in one pass over memory as
///   [`crate::scan`] does; its float sums accumulate as that scan's do (f32
///   in f64, f64 compensated). Any other combining expression runs on the
///   CPU's expression interpreter, in two passes and several times slower.
///
/// # Examples
/// ```
/// use kiln_core::{Args, DType, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::expr::var;
/// use kiln_kernels::scan::ScanKind;
/// use kiln_kernels::user::Scan;
/// # fn main() -> kiln_core::Result<()> {
/// // A running maximum.
/// let running_max = Scan::new("running_max", DType::I32)
///     .input("x", DType::I32)
///     .scan(var("a").max(var("b")))
///     .identity(i32::MIN)
///     .build()?;
///
/// let s = Device::<Cpu>::open(0)?.stream();
/// let x = s.upload(&[3, 1, 4, 1, 5, 9, 2, 6])?;
/// let mut y = s.alloc::<i32>(8)?;
/// running_max.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y)?;
/// assert_eq!(y.to_vec()?, [3, 3, 4, 4, 5, 9, 9, 9]);
/// running_max.scan(&s, ScanKind::Exclusive, Args::new().arg(&x), &mut y)?;
/// assert_eq!(y.to_vec()?, [i32::MIN, 3, 3, 4, 4, 5, 9, 9]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Scan {
    name: String,
    acc: Ty,
    params: Vec<Param>,
    locals: Vec<Stmt>,
    map: Option<Expr>,
    combine: Option<Expr>,
    identity: Option<Expr>,
}

impl Scan {
    /// A scan named `name` (an identifier, as for
    /// [`Elementwise::new`](super::Elementwise::new)) accumulating in `accumulator`.
    pub fn new(name: impl Into<String>, accumulator: impl Into<Ty>) -> Self {
        Scan {
            name: name.into(),
            acc: accumulator.into(),
            params: Vec::new(),
            locals: Vec::new(),
            map: None,
            combine: None,
            identity: None,
        }
    }

    super::fold_arguments!();

    /// The combining expression of `var("a")` (earlier) and `var("b")` (later).
    pub fn scan(mut self, value: impl Into<Expr>) -> Self {
        self.combine = Some(value.into());
        self
    }

    /// Check the declaration and, where no dtype is a placeholder, every part's types.
    pub fn build(self) -> Result<super::ScanKernel> {
        UserKernel::build(self)
    }
}

/// A scan instantiated for argument dtypes and a backend.
type Instance = super::definition::Instance<Scan>;

/// A scan runs the passes of its language's generator: one for CUDA and
/// the host, several for WGSL; none for a language without one.
impl Kind for Scan {
    super::fold_kind!(ScanPass, scan_passes, scan);
    const KERNEL: &'static str = "ScanKernel";

    fn declare(self) -> Result<FoldDef> {
        let fail = |reason: &str| Error::invalid(format!("user kernel `{}`", self.name), reason.to_string());
        let plain: Vec<&Param> = self.params.iter().filter(|p| p.role == Role::Input).collect();
        if plain.is_empty() {
            return Err(fail("has no input to take the element count from"));
        }
        let map = match (self.map, plain.as_slice()) {
            (Some(m), _) => m,
            (None, [only]) => expr::var(&only.name),
            (None, _) => return Err(fail("has more than one input and no map (Scan::map)")),
        };
        let combine = self.combine.ok_or_else(|| fail("has no combining expression (Scan::scan)"))?;
        let identity = self.identity.ok_or_else(|| fail("has no identity (Scan::identity)"))?;
        Ok(FoldDef {
            name: self.name,
            params: self.params,
            locals: self.locals,
            map,
            combine,
            identity,
            post: None,
            acc: self.acc,
        })
    }
}

impl UserKernel<Scan> {
    /// Replace the generated pass `entry` in `language` by a hand-written
    /// source (the escape hatch). The passes and their entry points are
    /// those [`programs`](Self::programs) gives, `user_{name}_{pass}`:
    /// `inclusive` and `exclusive` on CUDA and the host (one pass each);
    /// `sums`, `level_sums`, `level_tiles`, `tiles_inclusive` and
    /// `tiles_exclusive` in WGSL. A replacement keeps its pass's
    /// parameters, launch shape (tile size) and entry point. `Err` naming
    /// the kernel and its entry points when `entry` is not one of them.
    ///
    /// # Safety
    /// The source must do what the generated pass does within the same
    /// bounds: read its inputs within the lengths passed, write only the
    /// output and scratch ranges the generated pass writes, and not write
    /// its inputs; a look-back pass must publish every tile's status, or
    /// later tiles wait for it.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, IndexWidth, Language};
    /// use kiln_kernels::expr::{var, Ty};
    /// use kiln_kernels::user::Scan;
    /// # fn main() -> kiln_core::Result<()> {
    /// let t = Ty::param("T");
    /// let cumsum = Scan::new("cumsum", t.clone()).input("x", t).scan(var("a") + var("b")).identity(0).build()?;
    /// let programs = cumsum.programs(Language::Cuda, IndexWidth::U64, &[("T", DType::F32)])?;
    /// let entries: Vec<&str> = programs.iter().map(|p| p.name()).collect();
    /// assert_eq!(entries, ["user_cumsum_inclusive", "user_cumsum_exclusive"]);
    /// assert!(programs[0].cuda_source().unwrap().contains("user_cumsum_inclusive"));
    /// # Ok(()) }
    /// ```
    pub unsafe fn with_source(self, language: Language, entry: &str, source: impl Into<Source>) -> Result<Self> {
        self.replaced(language, entry, source.into())
    }

    /// Scan every element into `out` (of the accumulator's dtype, one
    /// element per input element) on the device; returns at once. `args`
    /// are given in declaration order.
    ///
    /// `Err` naming the kernel and the argument for arguments that do not
    /// match the declaration (see
    /// [`ElementwiseKernel::launch`](super::ElementwiseKernel::launch)), an
    /// output of another dtype or length, or a dtype the device cannot
    /// compute on.
    pub fn scan<B: Backend, T: Element>(
        &self,
        stream: &Stream<B>,
        kind: ScanKind,
        args: Args<'_, B>,
        out: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        let (inst, bound) = self.prepare(stream, &args, Some(T::DTYPE))?;
        let what = self.what();
        let out = out.view_mut();
        if out.len() != bound.n {
            return Err(Error::LengthMismatch {
                what: format!("{what}: output"),
                expected: bound.n,
                actual: out.len(),
            });
        }
        if bound.n == 0 {
            return Ok(());
        }
        let width = stream.device().info().features.index_width;
        let mut user = args;
        for &len in &bound.raw_lens {
            user = user.length(width, len, &what)?;
        }
        let user = user.length(width, bound.n, &what)?;
        match B::LANGUAGE {
            Language::Wgsl => self.passes(stream, &inst, kind, user, bound.n, out),
            _ => self.one_pass(stream, &inst, kind, user, bound.n, out),
        }
    }

    /// The look-back scan (CUDA), or the host's whole scan in one call.
    fn one_pass<B: Backend>(
        &self,
        stream: &Stream<B>,
        inst: &Instance,
        kind: ScanKind,
        args: Args<'_, B>,
        n: usize,
        out: kiln_core::BufferViewMut<'_, B, impl Element>,
    ) -> Result<()> {
        let kernel = self.kernel(stream, inst, ScanPass::One(kind))?;
        let args = args.arg(out);
        if B::LANGUAGE.runs_whole_launch() {
            // SAFETY: the host scan reads the inputs over [0, n) and raw
            // inputs within their lengths, and writes out[0..n).
            return unsafe { stream.launch(&kernel, LaunchConfig::new(1, 1), args) };
        }
        let tiles = n.div_ceil(expr::cuda_scan_tile(&inst.checked));
        let grid =
            u32::try_from(tiles).ok().filter(|&g| g <= stream.device().info().limits.max_grid[0]).ok_or_else(|| {
                Error::invalid(
                    format!("user kernel `{}` over {n} elements", self.name()),
                    "more tiles than a grid can hold",
                )
            })?;
        // The look-back state: status words and the tile counter zeroed;
        // 4-byte values travel inside the status words, wider ones in aggs
        // and incls (uninitialised).
        let mut status = stream.alloc_zeroed::<u64>(tiles + 1)?;
        let spill = if inst.checked.acc.size() == 4 { 1 } else { tiles };
        let mut aggs = Partials::alloc(stream, inst.checked.acc, spill)?;
        let mut incls = Partials::alloc(stream, inst.checked.acc, spill)?;
        let args = incls.write(aggs.write(args.arg(status.view_mut())));
        // SAFETY: block b scans tile b of the inputs over [0, n) into
        // out[0..n), reads raw inputs within their lengths, and writes
        // status[b] and status[tiles] (the counter), and for 8-byte
        // accumulators aggs[b] and incls[b], sized for `tiles` then.
        unsafe { stream.launch(&kernel, LaunchConfig::new(grid, 256), args) }
    }

    /// The WGSL scan: tile folds, their exclusive scan (recursively, in
    /// place), then each tile from its carry.
    fn passes<B: Backend>(
        &self,
        stream: &Stream<B>,
        inst: &Instance,
        kind: ScanKind,
        args: Args<'_, B>,
        n: usize,
        out: kiln_core::BufferViewMut<'_, B, impl Element>,
    ) -> Result<()> {
        let what = self.what();
        let (tiles, groups) = wgsl_tiles(stream, n, inst.checked.acc);
        let width = stream.device().info().features.index_width;
        let carry = self.carries(stream, inst, tiles, |sums| {
            let first = args.try_clone().ok_or_else(|| Error::invalid(&what, "an input is passed writable"))?;
            let kernel = self.kernel(stream, inst, ScanPass::Sums)?;
            // SAFETY: workgroups fold the tiles of the inputs over [0, n)
            // (raw inputs within their lengths) into sums[t], t < tiles.
            unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), sums.write(first)) }
        })?;
        let args = carry.read(args).arg(out).length(width, usize::from(tiles > 1), &what)?;
        let kernel = self.kernel(stream, inst, ScanPass::Tiles(kind))?;
        // SAFETY: tile t reads the inputs over its range of [0, n) (raw
        // inputs within their lengths) and carries[t] (read only when there
        // is more than one tile, `carries` then holding one per tile), and
        // writes the same range of out.
        unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
    }

    /// What the last pass over `tiles` tiles adds to each: the exclusive
    /// scan of the tiles' folds, which `sums` launches the pass writing;
    /// for a single tile, which reads no carry, a one-element placeholder.
    fn carries<B: Backend>(
        &self,
        stream: &Stream<B>,
        inst: &Instance,
        tiles: usize,
        sums: impl FnOnce(&mut Partials<B>) -> Result<()>,
    ) -> Result<Partials<B>> {
        if tiles == 1 {
            return Partials::alloc(stream, inst.checked.acc, 1);
        }
        let mut folds = Partials::alloc(stream, inst.checked.acc, tiles)?;
        sums(&mut folds)?;
        self.level(stream, inst, &mut folds, tiles)?;
        Ok(folds)
    }

    /// `level[0..n)` becomes its exclusive scan, in place.
    fn level<B: Backend>(&self, stream: &Stream<B>, inst: &Instance, level: &mut Partials<B>, n: usize) -> Result<()> {
        let what = self.what();
        let width = stream.device().info().features.index_width;
        let (tiles, groups) = wgsl_tiles(stream, n, inst.checked.acc);
        let carry = self.carries(stream, inst, tiles, |sums| {
            let kernel = self.kernel(stream, inst, ScanPass::LevelSums)?;
            let args = sums.write(level.read(Args::new()).length(width, n, &what)?);
            // SAFETY: workgroups fold tiles of level[0..n) into sums[t], t < tiles.
            unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
        })?;
        let kernel = self.kernel(stream, inst, ScanPass::LevelTiles)?;
        let args = level.write(carry.read(Args::new().length(width, n, &what)?)).length(
            width,
            usize::from(tiles > 1),
            &what,
        )?;
        // SAFETY: tile t reads then writes its range of level[0..n), and
        // reads carries[t] only when there is more than one tile.
        unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
    }
}

/// The tiles of a WGSL pass over `n` elements, and its workgroups: one a
/// tile, at most the grid's limit (they loop over the tiles).
fn wgsl_tiles<B: Backend>(stream: &Stream<B>, n: usize, acc: DType) -> (usize, u32) {
    let tiles = n.div_ceil(expr::wgsl_scan_tile(acc));
    (tiles, tiles.min(stream.device().info().limits.max_grid[0] as usize) as u32)
}
