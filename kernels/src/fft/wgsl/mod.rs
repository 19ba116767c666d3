//! kiln's own FFT kernels in WGSL, generated per plan.
//!
//! A pass ([`AxisPass`]) transforms lines of length `n` along one axis of
//! a strided batch. Its plan ([`sequence`], [`Core`]) depends on `n`, the
//! kind, the direction, the precision and the device's workgroup memory,
//! and is made once per device (its constants uploaded once, [`cache`]):
//!
//! - lengths made of 2, 3, 5 and 7 that fit workgroup memory (4096
//!   complex f32 in 32 KiB) are one kernel: each workgroup loads whole
//!   transforms (one or several), runs every Stockham radix stage in
//!   workgroup memory (the first reading memory directly, the last writing
//!   it) and writes them scaled ([`stockham`]);
//! - longer ones are two or three such kernels through scratch, each one
//!   radix-`r` stage of a Stockham transform of length `n` with `r` up to
//!   what workgroup memory holds (a four-step transform: 2^16 is 256 x 256),
//!   the first reading the input with its strides, the last writing the
//!   output with its strides and the scale;
//! - other lengths are Bluestein's chirp-z transform ([`bluestein`]): a
//!   forward and an inverse transform of a padded smooth length, the chirp
//!   multiplied in as the first kernel reads and as the last writes, the
//!   filter's transform in between; one kernel does all of it where the
//!   padded length fits workgroup memory;
//! - real transforms of even length are complex ones of half the length
//!   ([`real`]), of odd length complex ones of the widened reals (or
//!   of the Hermitian extension) keeping what the output holds.
//!
//! Only WGSL backends call these.

mod bluestein;
mod butterfly;
mod cache;
mod plan;
mod real;
mod stockham;
mod tables;

use kiln_core::{
    Args, Backend, Buffer, BufferView, BufferViewMut, Complex, DType, Element, Error, FftKind, LaunchConfig, Program,
    Result, Scalar, Stream, ViewMut,
};

use super::{AxisPass, FftDirection, FftFloat};
use crate::launch::program;
use cache::Plan;
use stockham::{Load, Params, Side, Spec, Store};

/// The complex-to-complex transforms of `pass` from `src` into `dst`.
#[allow(dead_code, reason = "the typed entry points; `pass` takes any kind")]
pub(crate) fn c2c<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    src: BufferView<'_, B, Complex<T>>,
    dst: BufferViewMut<'_, B, Complex<T>>,
    pass: &AxisPass,
) -> Result<()> {
    run::<B, T, _, _>(stream, src, dst, pass)
}

/// The real-to-complex transforms of `pass` from `src` into `dst`.
#[allow(dead_code, reason = "the typed entry points; `pass` takes any kind")]
pub(crate) fn r2c<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    src: BufferView<'_, B, T>,
    dst: BufferViewMut<'_, B, Complex<T>>,
    pass: &AxisPass,
) -> Result<()> {
    run::<B, T, _, _>(stream, src, dst, pass)
}

/// The complex-to-real transforms of `pass` from `src` into `dst`.
#[allow(dead_code, reason = "the typed entry points; `pass` takes any kind")]
pub(crate) fn c2r<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    src: BufferView<'_, B, Complex<T>>,
    dst: BufferViewMut<'_, B, T>,
    pass: &AxisPass,
) -> Result<()> {
    run::<B, T, _, _>(stream, src, dst, pass)
}

/// The transforms of `pass` from `src` into `dst`, whose element types
/// are the pass kind's (`T` or `Complex<T>` on each side); the views hold
/// the pass's spans and are distinct buffers (both checked by the caller).
pub(crate) fn pass<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    src: BufferView<'_, B, I>,
    dst: BufferViewMut<'_, B, O>,
    pass: &AxisPass,
) -> Result<()> {
    run::<B, T, I, O>(stream, src, dst, pass)
}

/// What the first kernel of a transform does besides transforming.
#[derive(Debug, Clone, Copy)]
struct First {
    load: Load,
    /// Bluestein's chirp (table offset) and the elements read (the rest zero).
    pre: Option<(u32, u32)>,
}

/// What the last kernel of a transform does besides transforming.
#[derive(Debug, Clone, Copy)]
struct Last {
    store: Store,
    /// A table (offset) each written element is multiplied by.
    post: Option<u32>,
    /// How many elements are written (the rest dropped).
    trunc: Option<u32>,
    scale: f64,
}

/// Where a launch reads or writes: the caller's views, or a scratch array
/// holding `len` complex elements per transform, densely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Src,
    Dst,
    Scratch(usize, usize),
}

/// One launch of a chunk of the pass's transforms.
#[derive(Debug, Clone)]
struct Launch {
    /// A line kernel, or (`None`) the real transform's post-processing.
    spec: Option<Spec>,
    from: Slot,
    to: Slot,
    params: Params,
}

/// A smooth complex transform as line kernels (see [`stockham`]).
#[derive(Debug, Clone)]
struct Sequence {
    n: usize,
    inverse: bool,
    kernels: Vec<KernelPlan>,
}

/// One line kernel of a [`Sequence`] and its table offsets.
#[derive(Debug, Clone)]
struct KernelPlan {
    r: usize,
    l: usize,
    radices: Vec<usize>,
    tw_sub: u32,
    tw_lo: u32,
    tw_hi: u32,
}

/// How the complex transform at the heart of a plan is computed.
#[derive(Debug, Clone)]
enum Core {
    Smooth(Sequence),
    Bluestein(bluestein::Bluestein),
}

/// The smooth transform of length `n` in direction `inverse` as kernels
/// for `csize`-byte elements and `shared` bytes of workgroup memory, its
/// twiddles added to `tb`. `None` when workgroup memory is too small to
/// hold lines of 7.
fn sequence(n: usize, inverse: bool, csize: usize, shared: usize, tb: &mut tables::Builder) -> Option<Sequence> {
    let rs = if n <= plan::line_cap(csize, shared, 1) {
        vec![n]
    } else {
        plan::split(n, plan::line_cap(csize, shared, plan::min_lines(csize)))?
    };
    let mut kernels = Vec::with_capacity(rs.len());
    let mut l = 1usize;
    for r in rs {
        let radices = plan::radices(r);
        let tw_sub = tb.sub(&radices, inverse);
        let (tw_lo, tw_hi) = if l > 1 { tb.span(l, r, inverse) } else { (0, 0) };
        kernels.push(KernelPlan { r, l, radices, tw_sub, tw_lo, tw_hi });
        l *= r;
    }
    Some(Sequence { n, inverse, kernels })
}

/// The layout of the pass's transforms `start..start + count` on one
/// side: `stride` apart within one, `dist` between consecutive ones along
/// each batch dimension.
fn user_side(pass: &AxisPass, start: usize, stride: usize, dist: [usize; 2]) -> Side {
    let [b0, b1] = pass.batch;
    Side {
        count: b0.count as u32,
        off: start as u32,
        d0: if b0.count > 1 { dist[0] as u32 } else { 0 },
        d1: if b1.count > 1 { dist[1] as u32 } else { 0 },
        es: stride as u32,
    }
}

/// A dense scratch side of `len` elements per transform.
fn scratch_side(len: usize) -> Side {
    Side { count: u32::MAX, off: 0, d0: len as u32, d1: 0, es: 1 }
}

/// Builds the launches of one chunk of transforms.
struct Launches<'p> {
    pass: &'p AxisPass,
    csize: usize,
    shared: usize,
    start: usize,
    count: usize,
    pack: u32,
    out: Vec<Launch>,
}

/// The scratch array a slot is, if it is one.
fn scratch_index(slot: Slot) -> Option<usize> {
    if let Slot::Scratch(i, _) = slot { Some(i) } else { None }
}

impl Launches<'_> {
    /// The side of `slot`.
    fn side(&self, slot: Slot) -> Side {
        let p = self.pass;
        match slot {
            Slot::Src => user_side(p, self.start, p.input_stride, [p.batch[0].input, p.batch[1].input]),
            Slot::Dst => user_side(p, self.start, p.output_stride, [p.batch[0].output, p.batch[1].output]),
            Slot::Scratch(_, len) => scratch_side(len),
        }
    }

    /// The distance between consecutive lines that are whole transforms on
    /// one side (the first batch dimension with more than one), or `None`.
    fn transform_step(&self, input: bool) -> Option<usize> {
        let b = self.pass.batch.iter().find(|b| b.count > 1)?;
        Some(if input { b.input } else { b.output })
    }

    /// The launches of `seq` from `from` to `to`, its first kernel doing
    /// `first`, its last `last`.
    /// A sequence of one kernel may instead be Bluestein's whole
    /// convolution (`chirp_z`: the filter's table offset; see
    /// [`Spec::chirp_z`]).
    fn sequence(&mut self, seq: &Sequence, head: First, last: Last, from: Slot, to: Slot, chirp_z: Option<u32>) {
        let k = seq.kernels.len();
        // The arrays between the kernels, chosen from the last back: each
        // differs from the one after it, the first from `from` (three
        // scratch arrays always suffice).
        let mut between = vec![to; k.saturating_sub(1)];
        let mut after = to;
        for s in (0..between.len()).rev() {
            let taken = [scratch_index(after), if s == 0 { scratch_index(from) } else { None }];
            let i = (0..3).find(|i| !taken.contains(&Some(*i))).unwrap_or(2);
            between[s] = Slot::Scratch(i, seq.n);
            after = between[s];
        }
        let mut input = from;
        for (s, kp) in seq.kernels.iter().enumerate() {
            let output = if s + 1 == k { to } else { between[s] };
            let nb = seq.n / kp.r;
            let total_lines = nb * self.count;
            let is_first = s == 0;
            let is_last = s + 1 == k;
            let (inside, outside) = (self.side(input), self.side(output));
            // Consecutive lines of a launch: the next b of a transform, or
            // the next transform.
            let in_line = if nb > 1 { Some(inside.es as usize) } else { self.transform_step_of(input) };
            let in_elem = (seq.n / kp.r) * inside.es as usize;
            let out_line = if nb > 1 {
                Some(if kp.l > 1 { outside.es as usize } else { kp.r * outside.es as usize })
            } else {
                self.transform_step_of(output)
            };
            let out_elem = kp.l * outside.es as usize;
            // Kernels that are not the only one of their transform take
            // lines side by side in memory: as many as make 128 bytes where
            // workgroup memory allows.
            let min_lines = if nb > 1 { plan::wide_lines(self.csize) } else { 1 };
            let shape = plan::shape(kp.r, &kp.radices, self.csize, self.shared, total_lines, min_lines);
            let first = if is_first { head } else { First { load: Load::Complex, pre: None } };
            let end = if is_last { last } else { Last { store: Store::Complex, post: None, trunc: None, scale: 1.0 } };
            let spec = Spec {
                wide: self.csize == 16,
                inverse: seq.inverse,
                n: seq.n,
                r: kp.r,
                l: kp.l,
                radices: kp.radices.clone(),
                shape,
                load: first.load,
                store: end.store,
                pre: first.pre.is_some(),
                post: end.post.is_some(),
                trunc: end.trunc.is_some(),
                load_lines_fast: shape.lines > 1 && in_line.is_some_and(|d| d < in_elem),
                store_lines_fast: shape.lines > 1 && out_line.is_some_and(|d| d < out_elem),
                pad: false,
                chirp_z: chirp_z.is_some(),
            };
            // Pad workgroup memory where the padded lines still fit.
            let line_bytes = if shape.lines > 1 { plan::LINE_BYTES * shape.lines } else { 0 };
            let padded = stockham::shared_len(kp.r, shape.lines, spec.load_lines_fast, true);
            let spec = Spec { pad: kp.r > 1 && padded * self.csize + line_bytes <= self.shared, ..spec };
            let params = Params {
                lines: total_lines as u32,
                nb: nb as u32,
                input: inside,
                output: outside,
                in_valid: first.pre.map_or(0, |p| p.1),
                out_valid: end.trunc.unwrap_or(0),
                tw_sub: kp.tw_sub,
                tw_lo: kp.tw_lo,
                tw_hi: kp.tw_hi,
                pre: first.pre.map_or(0, |p| p.0),
                post: chirp_z.or(end.post).unwrap_or(0),
                pack: self.pack,
                scale: end.scale,
            };
            self.out.push(Launch { spec: Some(spec), from: input, to: output, params });
            input = output;
        }
    }

    /// [`transform_step`](Self::transform_step) on the side of `slot`.
    fn transform_step_of(&self, slot: Slot) -> Option<usize> {
        match slot {
            Slot::Src => self.transform_step(true),
            Slot::Dst => self.transform_step(false),
            Slot::Scratch(_, len) => (self.count > 1).then_some(len),
        }
    }
}

/// The launches of `pass`'s transforms `start..start + count` under `plan`.
fn launches<B: Backend, T: FftFloat>(
    plan: &Plan<B, T>,
    pass: &AxisPass,
    shared: usize,
    start: usize,
    count: usize,
) -> Vec<Launch> {
    let n = pass.n;
    let csize = size_of::<Complex<T>>();
    let mut ls = Launches { pass, csize, shared, start, count, pack: plan.pack.unwrap_or(0), out: Vec::new() };
    let packed = plan.pack.is_some();
    let h = n / 2;
    // The complex transform's length, what it reads, and what it writes.
    let (len, load) = match (pass.kind, packed) {
        (FftKind::C2C, _) => (n, Load::Complex),
        (FftKind::R2C, true) => (h, Load::RealPairs),
        (FftKind::R2C, false) => (n, Load::Real),
        (FftKind::C2R, true) => (h, Load::HalfSpectrum(h)),
        (FftKind::C2R, false) => (n, Load::Hermitian(n)),
    };
    let single = matches!(&plan.core, Core::Smooth(s) if s.kernels.len() == 1);
    // A forward real transform of even length that is more than one
    // kernel writes the half-length transform to scratch, and the post
    // kernel makes the spectrum from it.
    let post_kernel = pass.kind == FftKind::R2C && packed && !single;
    let (store, keep) = match (pass.kind, packed) {
        (FftKind::C2C, _) => (Store::Complex, n),
        (FftKind::R2C, true) => (if post_kernel { Store::Complex } else { Store::HalfSpectrum }, h),
        (FftKind::R2C, false) => (Store::Complex, n / 2 + 1),
        (FftKind::C2R, true) => (Store::RealPairs, h),
        (FftKind::C2R, false) => (Store::Real, n),
    };
    let to = if post_kernel { Slot::Scratch(0, h) } else { Slot::Dst };
    let scale = if post_kernel { 1.0 } else { pass.scale };
    match &plan.core {
        Core::Smooth(seq) => {
            let trunc = (keep < len).then_some(keep as u32);
            ls.sequence(seq, First { load, pre: None }, Last { store, post: None, trunc, scale }, Slot::Src, to, None);
        }
        Core::Bluestein(b) => b.launches(&mut ls, load, store, keep, scale, to),
    }
    if post_kernel {
        let params = Params {
            lines: (count * (h + 1)) as u32,
            nb: h as u32,
            output: ls.side(Slot::Dst),
            pack: ls.pack,
            scale: pass.scale,
            ..Params::default()
        };
        ls.out.push(Launch { spec: None, from: to, to: Slot::Dst, params });
    }
    ls.out
}

/// The transforms of `pass` from `src` (of `S`: `T` or `Complex<T>`) into
/// `dst` (of `D`), in chunks of transforms whose scratch fits one binding.
fn run<B: Backend, T: FftFloat, S: Element, D: Element>(
    stream: &Stream<B>,
    src: BufferView<'_, B, S>,
    mut dst: BufferViewMut<'_, B, D>,
    pass: &AxisPass,
) -> Result<()> {
    let what = || format!("{:?} fft of length {} on {} ({})", pass.kind, pass.n, T::DTYPE, pass.direction.name());
    let device = stream.device();
    let info = device.info();
    if T::DTYPE == DType::F64 && !info.features.f64 {
        return Err(Error::unsupported(B::KIND, what(), "the device has no f64 support (SHADER_F64)"));
    }
    // The kernels index each side in elements of the kind's types.
    let complex = <Complex<T> as Element>::DTYPE;
    let want = match pass.kind {
        FftKind::C2C => (complex, complex),
        FftKind::R2C => (T::DTYPE, complex),
        FftKind::C2R => (complex, T::DTYPE),
    };
    if (S::DTYPE, D::DTYPE) != want {
        return Err(Error::invalid(what(), format!("reads {} into {}; it wants {want:?}", S::DTYPE, D::DTYPE)));
    }
    let transforms = pass.transforms();
    if pass.n == 0 || transforms == 0 {
        return Ok(());
    }
    let (span_in, span_out) = pass.spans().ok_or_else(|| Error::invalid(what(), "the layout overflows"))?;
    let limit = u32::MAX as usize;
    if span_in > limit || span_out > limit || pass.n > limit / 4 || transforms > limit {
        return Err(Error::unsupported(
            B::KIND,
            what(),
            "WGSL kernels index with 32 bits; a transform, its batch or the views they span is too large",
        ));
    }
    let inverse = match pass.kind {
        FftKind::C2C => pass.direction == FftDirection::Inverse,
        FftKind::R2C => false,
        FftKind::C2R => true,
    };
    let shared = (info.limits.max_shared_mem_per_block as usize).min(64 << 10);
    let plan = cache::plan::<B, T>(stream, pass.kind, pass.n, inverse, shared, &what)?;

    // Chunks of transforms whose scratch arrays each fit one binding.
    let probe = launches(&plan, pass, shared, 0, 1);
    let mut per_transform = [0usize; 3];
    for l in &probe {
        for slot in [l.from, l.to] {
            if let Slot::Scratch(i, len) = slot {
                per_transform[i] = per_transform[i].max(len);
            }
        }
    }
    let csize = size_of::<Complex<T>>();
    let widest = per_transform.iter().max().copied().unwrap_or(0) * csize;
    // Lines of a launch are counted in 32 bits; scratch arrays fit a binding.
    let binding = info.limits.max_binding_bytes.min(info.limits.max_buffer_bytes) as usize;
    let by_scratch = binding.checked_div(widest).unwrap_or(usize::MAX);
    let chunk = transforms.min(limit / (pass.n + 1)).min(by_scratch);
    if chunk == 0 {
        return Err(Error::unsupported(
            B::KIND,
            what(),
            format!("one transform's scratch ({widest} bytes) is larger than a binding may be"),
        ));
    }
    let mut scratch: [Option<Buffer<B, Complex<T>>>; 3] = [None, None, None];
    for (i, &len) in per_transform.iter().enumerate() {
        if len > 0 {
            scratch[i] = Some(stream.alloc::<Complex<T>>(len * chunk)?);
        }
    }
    let mut start = 0;
    while start < transforms {
        let count = chunk.min(transforms - start);
        for l in launches(&plan, pass, shared, start, count) {
            launch_one::<B, T, S, D>(stream, &plan, &l, src, &mut dst, &mut scratch, &what)?;
        }
        start += count;
    }
    Ok(())
}

/// Enqueue launch `l`.
fn launch_one<B: Backend, T: FftFloat, S: Element, D: Element>(
    stream: &Stream<B>,
    plan: &Plan<B, T>,
    l: &Launch,
    src: BufferView<'_, B, S>,
    dst: &mut BufferViewMut<'_, B, D>,
    scratch: &mut [Option<Buffer<B, Complex<T>>>; 3],
    what: &dyn Fn() -> String,
) -> Result<()> {
    let info = stream.device().info();
    let (prog, block, items) = match &l.spec {
        Some(spec) => {
            let name = spec.name();
            let prog = program(&name, || Program::new(&name).wgsl(spec.source()));
            let groups = (l.params.lines as usize).div_ceil(spec.shape.lines);
            (prog, spec.shape.workgroup(), groups)
        }
        None => {
            let prog = real::post_program(T::DTYPE == DType::F64);
            (prog, real::POST_BLOCK as usize, (l.params.lines as usize).div_ceil(real::POST_BLOCK as usize))
        }
    };
    let max_x = info.limits.max_grid[0] as usize;
    let gx = items.min(max_x).max(1);
    let gy = items.div_ceil(gx);
    if gy > info.limits.max_grid[1] as usize {
        return Err(Error::unsupported(B::KIND, what(), format!("{items} workgroups exceed the device's grid")));
    }
    let kernel = stream.device().kernel(&prog)?;
    let mut args = Args::new();
    let internal = || Error::invalid(what(), "a launch's scratch array is missing");
    match (l.from, l.to) {
        (Slot::Src, Slot::Dst) => {
            args.push(src);
            args.push(dst.view_mut());
        }
        (Slot::Src, Slot::Scratch(i, _)) => {
            args.push(src);
            args.push(scratch[i].as_mut().ok_or_else(internal)?.view_mut());
        }
        (Slot::Scratch(i, _), Slot::Dst) => {
            args.push(scratch[i].as_ref().ok_or_else(internal)?.view());
            args.push(dst.view_mut());
        }
        (Slot::Scratch(i, _), Slot::Scratch(j, _)) if i != j => {
            // Split the arrays so that one is read while the other is written.
            let (lo, hi) = scratch.split_at_mut(i.max(j));
            let (s, d) = if i < j { (&lo[i], &mut hi[0]) } else { (&hi[0], &mut lo[j]) };
            args.push(s.as_ref().ok_or_else(internal)?.view());
            args.push(d.as_mut().ok_or_else(internal)?.view_mut());
        }
        _ => return Err(Error::invalid(what(), "a launch reads and writes the same array")),
    }
    args.push(plan.table.view());
    match &l.spec {
        Some(_) => {
            for w in l.params.words() {
                args.push(w);
            }
        }
        None => {
            let p = &l.params;
            for w in [p.lines, p.nb, p.output.count, p.output.off, p.output.d0, p.output.d1, p.output.es, p.pack] {
                args.push(w);
            }
        }
    }
    args.push(Scalar::new(T::from_wide(l.params.scale)));
    let config = LaunchConfig::new((gx as u32, gy as u32), block as u32);
    // SAFETY: every index the kernel forms stays inside its bindings.
    // - The caller's views hold the pass's spans (checked by the caller):
    //   a line kernel reads and writes transform `t` (`t` below the pass's
    //   transform count: lines past `params.lines` are neither read nor
    //   written) at `(t mod count0) d0 + (t / count0) d1 + j stride` for
    //   `j` below the side's length (`n`, `n / 2 + 1`, or the `n` reals as
    //   `n / 2` pairs), which is inside the span; element indices past the
    //   input's valid length (Bluestein's padding) are not read, past the
    //   output's kept length (`trunc`) not written.
    // - Scratch arrays hold `len` elements for each of the chunk's `count`
    //   transforms, and a kernel indexes transform `t < count` of them at
    //   `t len + j`, `j < len`.
    // - The table holds every offset the plan handed out plus the span of
    //   what is read there (`tables::Builder`), indices below it.
    // - Workgroup arrays are sized in the source for the kernel's lines
    //   and indexed below that; every index fits 32 bits (checked above).
    // - Source and destination are distinct buffers (the caller's, or two
    //   different scratch arrays), so no binding is written while read.
    unsafe { stream.launch(&kernel, config, args) }
}
