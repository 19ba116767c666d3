//! The WGSL of a line kernel: a workgroup takes `lines` lines of `r`
//! complex elements into workgroup memory, transforms each with Stockham
//! autosort radix stages there (no bit reversal: each stage reads at a
//! fixed stride and writes in order), and writes them out.
//!
//! A transform of length `n` is one such kernel when `r = n` fits (each
//! line a whole transform), or several: kernel `s` transforms along one
//! factor `r` of `n` with span `l` (the product of the factors before it),
//! as one radix-`r` stage of a Stockham transform of length `n`. Line `b`
//! of a transform reads elements `b + j n / r` (`j < r`), multiplies
//! element `j` by `w_{l r}^{j (b mod l)}`, and after its DFT writes element
//! `q` at `(b / l) l r + (b mod l) + q l`.
//!
//! Where a line sits in memory is the launch's (its `Params`): line `i`
//! of the launch is line `i mod nb` of transform `i / nb`, whose first
//! element is at `(t mod count) d0 + (t / count) d1` on each side (`t` the
//! transform's index plus the side's `off`), its elements `es` apart. The
//! first kernel of a transform may read real data or a half spectrum, and
//! multiply by Bluestein's chirp; the last may write real data, keep a
//! prefix, multiply by a table and scale.
//!
//! The first stage reads memory itself, and the last writes it, where the
//! stages' invocations move runs of consecutive elements (else a loop of
//! the workgroup loads the lines into workgroup memory, all its reads
//! issued first, and one writes them out); the stages between exchange
//! through workgroup memory, padded a slot in 16 where it fits so that
//! strided accesses spread over its banks. Radix butterflies are unrolled
//! ([`Emitter`]), their twiddles read from the plan's table.

use std::fmt::Write;

use super::butterfly::Emitter;
use super::plan::Shape;
use super::tables::span_split;
use crate::launch::WGSL_ABI;

/// How the first kernel of a transform reads element `j` of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Load {
    /// Complex element `j`.
    Complex,
    /// Real element `j`, widened.
    Real,
    /// Real elements `2j` and `2j + 1` as one complex value (a real
    /// transform of even length as a complex one of half the length).
    RealPairs,
    /// Element `j` of the Hermitian length-`n` sequence whose first
    /// `n / 2 + 1` elements the input holds (the imaginary part of
    /// element 0 ignored).
    Hermitian(usize),
    /// Element `k` of the half-length complex sequence whose inverse
    /// transform interleaves the real inverse of the length-`2h` half
    /// spectrum the input holds (`h + 1` elements; the imaginary parts of
    /// elements 0 and `h` ignored).
    HalfSpectrum(usize),
}

/// How the last kernel of a transform writes element `k` of its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Store {
    /// Complex element `k`.
    Complex,
    /// The real part, as real element `k`.
    Real,
    /// The real and imaginary parts as real elements `2k` and `2k + 1`.
    RealPairs,
    /// The `r + 1` non-negative frequencies of the real transform of
    /// length `2r` whose even and odd elements the line transformed as one
    /// complex sequence (a single-kernel transform only: it reads elements
    /// `k` and `r - k` of the line).
    HalfSpectrum,
}

/// Everything a line kernel's source depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Spec {
    /// f64 (`vec2<f64>`), else f32.
    pub wide: bool,
    /// The sign of the exponent: `+` inverse.
    pub inverse: bool,
    /// The length of the complex transform the kernel is a part of.
    pub n: usize,
    /// The length of each line.
    pub r: usize,
    /// The span: the product of the earlier kernels' line lengths.
    pub l: usize,
    /// The in-workgroup stages' radices (their product `r`).
    pub radices: Vec<usize>,
    /// Lines and invocations per line of a workgroup.
    pub shape: Shape,
    pub load: Load,
    pub store: Store,
    /// Multiply element `j` by the table at `pre + j`, and read zero from
    /// `in_valid` on (Bluestein's chirp, and its zero padding).
    pub pre: bool,
    /// Multiply element `k` by the table at `post + k`.
    pub post: bool,
    /// Write only elements `k < out_valid`.
    pub trunc: bool,
    /// Whether consecutive invocations load consecutive lines (else
    /// consecutive elements of a line); workgroup memory is laid out, and
    /// the stages' invocations assigned, the same way.
    pub load_lines_fast: bool,
    /// Whether consecutive invocations store consecutive lines.
    pub store_lines_fast: bool,
    /// Whether the line is Bluestein's whole convolution: forward stages,
    /// the product with the filter's transform (table at `post`), inverse
    /// stages (their twiddles the forward ones conjugated); the store
    /// multiplies by the chirp (table at `pre`), as the load does.
    pub chirp_z: bool,
    /// Whether workgroup memory skips a slot after every 16 elements of a
    /// line (and lines laid one after another start an odd number of
    /// slots apart), so that the stages' strided accesses spread over the
    /// memory banks.
    pub pad: bool,
}

/// The slot of element `j` of a padded line.
fn padded(j: usize) -> usize {
    j + j / 16
}

/// The distance between consecutive lines of `r` elements laid one after
/// another in padded workgroup memory.
fn pitch(r: usize, lines: usize) -> usize {
    let p = padded(r.max(1) - 1) + 1;
    if lines > 1 && p.is_multiple_of(2) { p + 1 } else { p }
}

/// How many elements workgroup memory holds for `lines` lines of `r`,
/// laid out line-major (`lines_fast`) or one line after another, padded
/// (`pad`) or not.
pub(super) fn shared_len(r: usize, lines: usize, lines_fast: bool, pad: bool) -> usize {
    match (pad, lines_fast) {
        (false, _) => r * lines,
        (true, true) => (padded(r.max(1) - 1) + 1) * lines,
        (true, false) => pitch(r, lines) * lines,
    }
}

/// The launch's parameters of a line kernel, in the order its `Params`
/// declares them (twenty `u32`, then the scale in the kernel's precision).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Params {
    pub lines: u32,
    pub nb: u32,
    pub input: Side,
    pub output: Side,
    pub in_valid: u32,
    pub out_valid: u32,
    pub tw_sub: u32,
    pub tw_lo: u32,
    pub tw_hi: u32,
    pub pre: u32,
    pub post: u32,
    pub pack: u32,
    pub scale: f64,
}

/// Where one side's transforms lie (see the module's docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Side {
    pub count: u32,
    pub off: u32,
    pub d0: u32,
    pub d1: u32,
    pub es: u32,
}

impl Params {
    /// The `u32` parameters, in declaration order (the scale follows).
    pub(super) fn words(&self) -> [u32; 20] {
        let (i, o) = (self.input, self.output);
        [
            self.lines,
            self.nb,
            i.count,
            i.off,
            i.d0,
            i.d1,
            i.es,
            o.count,
            o.off,
            o.d0,
            o.d1,
            o.es,
            self.in_valid,
            self.out_valid,
            self.tw_sub,
            self.tw_lo,
            self.tw_hi,
            self.pre,
            self.post,
            self.pack,
        ]
    }
}

impl Spec {
    /// The program's name (and entry point): every field that changes the
    /// source, spelled out.
    pub(super) fn name(&self) -> String {
        let load = match self.load {
            Load::Complex => "lc".to_string(),
            Load::Real => "lr".to_string(),
            Load::RealPairs => "lp".to_string(),
            Load::Hermitian(n) => format!("lh{n}"),
            Load::HalfSpectrum(h) => format!("ls{h}"),
        };
        let store = match self.store {
            Store::Complex => "sc",
            Store::Real => "sr",
            Store::RealPairs => "sp",
            Store::HalfSpectrum => "ss",
        };
        let radices: Vec<String> = self.radices.iter().map(ToString::to_string).collect();
        format!(
            "kiln_fft_{}_{}_n{}_r{}_l{}_x{}_c{}_t{}_{load}_{store}{}{}{}_{}{}{}{}",
            if self.wide { "f64" } else { "f32" },
            if self.inverse { "inv" } else { "fwd" },
            self.n,
            self.r,
            self.l,
            radices.join("x"),
            self.shape.lines,
            self.shape.threads,
            if self.pre { "_pre" } else { "" },
            if self.post { "_post" } else { "" },
            if self.trunc { "_trunc" } else { "" },
            if self.load_lines_fast { "a" } else { "b" },
            if self.store_lines_fast { "a" } else { "b" },
            if self.pad { "_pad" } else { "" },
            if self.chirp_z { "_cz" } else { "" },
        )
    }

    /// Whether the input binding holds reals.
    pub(super) fn real_input(&self) -> bool {
        matches!(self.load, Load::Real | Load::RealPairs)
    }

    /// Whether the output binding holds reals.
    pub(super) fn real_output(&self) -> bool {
        matches!(self.store, Store::Real | Store::RealPairs)
    }

    /// How many elements a line's store writes.
    fn out_len(&self) -> usize {
        if self.store == Store::HalfSpectrum { self.r + 1 } else { self.r }
    }

    /// Whether the stages' invocations, assigned as loads along lines
    /// (`lines_fast`) or along elements would be, touch runs of at least 8
    /// consecutive elements together: then the first stage reads, and the
    /// last writes, memory directly without losing whole sectors.
    fn stages_coalesce(&self, lines_fast: bool) -> bool {
        self.shape.lines == 1 || lines_fast || self.shape.threads >= 8
    }

    /// Whether the first stage reads its inputs straight from the source
    /// (its invocations are assigned as the load's would be).
    fn fused_load(&self) -> bool {
        !self.radices.is_empty() && self.stages_coalesce(self.load_lines_fast)
    }

    /// Whether the last stage writes its outputs straight to the
    /// destination: where stores run the way loads do, and not for a half
    /// spectrum (which reads two elements of the line for each it writes).
    fn fused_store(&self) -> bool {
        !self.radices.is_empty()
            && self.store != Store::HalfSpectrum
            && (self.store_lines_fast == self.load_lines_fast || self.shape.lines == 1)
            && self.stages_coalesce(self.store_lines_fast)
    }

    /// Whether the kernel uses workgroup memory for its lines' elements.
    fn uses_shared(&self) -> bool {
        self.chirp_z || !(self.radices.len() == 1 && self.fused_load() && self.fused_store())
    }

    /// The WGSL source.
    pub(super) fn source(&self) -> String {
        let mut w = String::new();
        let lines = self.shape.lines;
        let threads = self.shape.threads;
        let r = self.r;
        let real = if self.wide { "f64" } else { "f32" };
        let src_t = if self.real_input() { "R" } else { "C2" };
        let dst_t = if self.real_output() { "R" } else { "C2" };
        let _ = write!(
            w,
            "alias R = {real};\nalias C2 = vec2<R>;\n\
             @group(0) @binding(0) var<storage, read> src: array<{src_t}>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<{dst_t}>;\n\
             @group(0) @binding(2) var<storage, read> tw: array<C2>;\n\
             struct Params {{\n    lines: u32,\n    nb: u32,\n    in_count: u32,\n    in_off: u32,\n    \
             in_d0: u32,\n    in_d1: u32,\n    in_es: u32,\n    out_count: u32,\n    out_off: u32,\n    \
             out_d0: u32,\n    out_d1: u32,\n    out_es: u32,\n    in_valid: u32,\n    out_valid: u32,\n    \
             tw_sub: u32,\n    tw_lo: u32,\n    tw_hi: u32,\n    pre: u32,\n    post: u32,\n    pack: u32,\n    \
             scale: R,\n}}\n{WGSL_ABI}{HELPERS}"
        );
        if self.uses_shared() {
            let _ =
                writeln!(w, "var<workgroup> sh: array<C2, {}>;", shared_len(r, lines, self.load_lines_fast, self.pad));
            // Line-major where loads run along lines, else element-major,
            // so that consecutive invocations touch consecutive words.
            let sidx = match (self.pad, self.load_lines_fast) {
                (false, true) => format!("j * {lines}u + c"),
                (false, false) => format!("c * {r}u + j"),
                (true, true) => format!("(j + (j >> 4u)) * {lines}u + c"),
                (true, false) => format!("c * {}u + j + (j >> 4u)", pitch(r, lines)),
            };
            let _ = writeln!(w, "fn sidx(c: u32, j: u32) -> u32 {{ return {sidx}; }}");
        }
        if lines > 1 {
            let _ = writeln!(w, "var<workgroup> linfo: array<vec4<u32>, {lines}>;");
        }
        self.line_info(&mut w);
        self.load_fn(&mut w);
        self.store_fn(&mut w);

        let _ = write!(
            w,
            "@compute @workgroup_size(block_x, block_y, block_z)\n\
             fn {}(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>, \
             @builtin(num_workgroups) nwg: vec3<u32>) {{\n    \
             let line0 = (wid.x + wid.y * nwg.x) * {lines}u;\n    \
             if (line0 >= params.lines) {{ return; }}\n",
            self.name()
        );
        let info = |c: &str| if lines > 1 { format!("linfo[{c}]") } else { "info".to_string() };
        if lines > 1 {
            let _ =
                write!(w, "    if (t < {lines}u) {{ linfo[t] = line_info(line0 + t); }}\n    workgroupBarrier();\n");
        } else {
            w.push_str("    let info = line_info(line0);\n");
        }

        if !self.fused_load() {
            // Every read issued before the first write to workgroup memory.
            let slots = self.slots(lines * r);
            w.push_str("    {\n");
            for (it, (idx, guard)) in slots.iter().enumerate() {
                let (c_of, j_of) = split_index(self.load_lines_fast, lines, r, idx);
                let live = match guard {
                    Some(g) => format!("{g} && line0 + c{it} < params.lines"),
                    None => format!("line0 + c{it} < params.lines"),
                };
                let _ = write!(
                    w,
                    "    let c{it} = {c_of};\n    let j{it} = {j_of};\n    var v{it} = C2(0.0);\n    \
                     if ({live}) {{ v{it} = load_elem({}, j{it}); }}\n",
                    info(&format!("c{it}"))
                );
            }
            for (it, (_, guard)) in slots.iter().enumerate() {
                let open = guard.as_ref().map_or(String::new(), |g| format!("if ({g}) "));
                let _ = writeln!(w, "    {open}{{ sh[sidx(c{it}, j{it})] = v{it}; }}");
            }
            w.push_str("    }\n    workgroupBarrier();\n");
        }

        // Stages.
        if !self.radices.is_empty() {
            if self.load_lines_fast {
                let _ = writeln!(w, "    let tc = t % {lines}u;\n    let tp = t / {lines}u;");
            } else {
                let _ = writeln!(w, "    let tc = t / {threads}u;\n    let tp = t % {threads}u;");
            }
            let _ = writeln!(w, "    let live = line0 + tc < params.lines;");
        }
        // The stages: (radix, span, twiddle offset, inverse, conjugated twiddles).
        let mut stages = Vec::new();
        let sets: &[(bool, bool)] =
            if self.chirp_z { &[(false, false), (true, true)] } else { &[(self.inverse, false)] };
        for &(inverse, conj) in sets {
            let (mut l, mut off) = (1usize, 0usize);
            for &radix in &self.radices {
                stages.push(Stage { s: stages.len(), radix, l, off, inverse, conj, ..Stage::default() });
                if l > 1 {
                    off += (radix - 1) * l;
                }
                l *= radix;
            }
        }
        let count = stages.len();
        if self.chirp_z && count >= 2 {
            stages[count / 2 - 1].filter = true;
        }
        for mut st in stages {
            st.from_src = st.s == 0 && self.fused_load();
            st.to_dst = st.s + 1 == count && self.fused_store();
            self.stage(&mut w, &st, &info("tc"));
        }

        if !self.fused_store() {
            let out_len = self.out_len();
            let slots = self.slots(lines * out_len);
            w.push_str("    {\n");
            // Every read of workgroup memory before the first write out.
            for (it, (idx, guard)) in slots.iter().enumerate() {
                let (c_of, q_of) = split_index(self.store_lines_fast, lines, out_len, idx);
                let _ = write!(w, "    let c{it} = {c_of};\n    let q{it} = {q_of};\n");
                if self.store != Store::HalfSpectrum {
                    let at = match guard {
                        // A slot past the lines reads element 0 of line 0 (it writes nothing).
                        Some(g) => format!("select(0u, sidx(c{it}, q{it}), {g})"),
                        None => format!("sidx(c{it}, q{it})"),
                    };
                    let _ = writeln!(w, "    let s{it} = sh[{at}];");
                }
            }
            for (it, (_, guard)) in slots.iter().enumerate() {
                let live = match guard {
                    Some(g) => format!("{g} && line0 + c{it} < params.lines"),
                    None => format!("line0 + c{it} < params.lines"),
                };
                let value = if self.store == Store::HalfSpectrum { format!("c{it}") } else { format!("s{it}") };
                let _ = writeln!(w, "    if ({live}) {{ store_elem({}, q{it}, {value}); }}", info(&format!("c{it}")));
            }
            w.push_str("    }\n");
        }
        w.push_str("}\n");
        w
    }

    /// The indices one invocation takes of `total` spread over the
    /// workgroup (`t`, `t + workgroup`, ...): each index's WGSL, and the
    /// condition it is below `total` where it may not be.
    fn slots(&self, total: usize) -> Vec<(String, Option<String>)> {
        let wg = self.shape.workgroup();
        (0..total.div_ceil(wg))
            .map(|it| {
                let idx = if it == 0 { "t".to_string() } else { format!("(t + {}u)", it * wg) };
                let guard = ((it + 1) * wg > total).then(|| format!("{idx} < {total}u"));
                (idx, guard)
            })
            .collect()
    }

    /// `line_info(line)`: the line's input and output transform offsets,
    /// its index `b` in its transform, and the output index of its
    /// element 0.
    fn line_info(&self, w: &mut String) {
        let (l, r) = (self.l, self.r);
        let _ = write!(
            w,
            "fn line_info(line: u32) -> vec4<u32> {{\n    \
             let b = line % params.nb;\n    let tr = line / params.nb;\n    \
             let ti = tr + params.in_off;\n    let to = tr + params.out_off;\n    \
             let ib = (ti % params.in_count) * params.in_d0 + (ti / params.in_count) * params.in_d1;\n    \
             let ob = (to % params.out_count) * params.out_d0 + (to / params.out_count) * params.out_d1;\n    \
             return vec4<u32>(ib, ob, b, (b / {l}u) * {}u + b % {l}u);\n}}\n",
            l * r
        );
    }

    /// `load_elem(info, j)`: element `j` of the line, as the kernel's
    /// first read of it (its mode, chirp and span twiddle applied).
    fn load_elem_body(&self) -> String {
        let mut b = String::new();
        let _ = writeln!(b, "    let jg = info.z + j * {}u;", self.n / self.r);
        if self.pre {
            b.push_str("    if (jg >= params.in_valid) { return C2(0.0); }\n");
        }
        let fetch = match self.load {
            Load::Complex => "src[info.x + jg * params.in_es]".to_string(),
            Load::Real => "C2(src[info.x + jg * params.in_es], 0.0)".to_string(),
            Load::RealPairs => {
                "C2(src[info.x + 2u * jg * params.in_es], src[info.x + (2u * jg + 1u) * params.in_es])".to_string()
            }
            Load::Hermitian(n) => {
                let _ = write!(
                    b,
                    "    var x: C2;\n    if (jg <= {h}u) {{\n        x = src[info.x + jg * params.in_es];\n        \
                     if (jg == 0u) {{ x.y = 0.0; }}\n    }} else {{\n        \
                     x = cconj(src[info.x + ({n}u - jg) * params.in_es]);\n    }}\n",
                    h = n / 2
                );
                "x".to_string()
            }
            Load::HalfSpectrum(h) => {
                let _ = write!(
                    b,
                    "    var a = src[info.x + jg * params.in_es];\n    \
                     var e = src[info.x + ({h}u - jg) * params.in_es];\n    \
                     if (jg == 0u) {{ a.y = 0.0; e.y = 0.0; }}\n    \
                     let x = (a + cconj(e)) + muli(cmul(a - cconj(e), tw[params.pack + jg]));\n"
                );
                "x".to_string()
            }
        };
        let _ = writeln!(b, "    var v = {fetch};");
        if self.pre {
            b.push_str("    v = cmul(v, tw[params.pre + jg]);\n");
        }
        if self.l > 1 {
            let s = span_split(self.l, self.r);
            let _ = write!(
                b,
                "    let e = j * (info.z % {}u);\n    \
                 v = cmul(v, cmul(tw[params.tw_lo + (e & {}u)], tw[params.tw_hi + (e >> {}u)]));\n",
                self.l,
                s - 1,
                s.trailing_zeros()
            );
        }
        b.push_str("    return v;\n");
        b
    }

    fn load_fn(&self, w: &mut String) {
        let _ = write!(w, "fn load_elem(info: vec4<u32>, j: u32) -> C2 {{\n{}}}\n", self.load_elem_body());
    }

    /// `store_elem(info, q, v)`: write element `q` of the line (for a half
    /// spectrum, element `q` of the line's line `c`, read from workgroup
    /// memory here).
    fn store_fn(&self, w: &mut String) {
        if self.store == Store::HalfSpectrum {
            let r = self.r;
            let _ = write!(
                w,
                "fn store_elem(info: vec4<u32>, k: u32, c: u32) {{\n    \
                 let a = sh[sidx(c, k % {r}u)];\n    let e = sh[sidx(c, ({r}u - k) % {r}u)];\n    \
                 let even = (a + cconj(e)) * 0.5;\n    let odd = mulni(a - cconj(e)) * 0.5;\n    \
                 let v = (even + cmul(tw[params.pack + k], odd)) * params.scale;\n    \
                 dst[info.y + k * params.out_es] = v;\n}}\n"
            );
            return;
        }
        let _ = write!(w, "fn store_elem(info: vec4<u32>, q: u32, x: C2) {{\n    let kg = info.w + q * {}u;\n", self.l);
        if self.trunc {
            w.push_str("    if (kg >= params.out_valid) { return; }\n");
        }
        w.push_str("    var v = x;\n");
        if self.post {
            w.push_str("    v = cmul(v, tw[params.post + kg]);\n");
        }
        if self.chirp_z {
            w.push_str("    v = cmul(v, tw[params.pre + kg]);\n");
        }
        w.push_str("    v = v * params.scale;\n");
        match self.store {
            Store::Complex => w.push_str("    dst[info.y + kg * params.out_es] = v;\n"),
            Store::Real => w.push_str("    dst[info.y + kg * params.out_es] = v.x;\n"),
            Store::RealPairs => w.push_str(
                "    dst[info.y + 2u * kg * params.out_es] = v.x;\n    \
                 dst[info.y + (2u * kg + 1u) * params.out_es] = v.y;\n",
            ),
            Store::HalfSpectrum => {}
        }
        w.push_str("}\n");
    }

    /// Stage `st.s`: radix `st.radix` at span `st.l` of the line, its
    /// twiddles at `tw_sub + st.off`. Each invocation reads its butterflies'
    /// inputs (from the source where `from_src`), waits for every read
    /// where they came from workgroup memory, then twiddles, transforms and
    /// writes them (to the destination where `to_dst`, through `info`, the
    /// line's; times the filter's transform where `filter`).
    fn stage(&self, w: &mut String, st: &Stage, info: &str) {
        let Stage { s, radix, l, off, from_src, to_dst, inverse, conj, filter } = *st;
        let threads = self.shape.threads;
        let butterflies = self.r / radix;
        let iters = butterflies.div_ceil(threads);
        let guard = iters * threads != butterflies;
        let _ = writeln!(w, "    {{ // stage {s}: radix {radix}, span {l}");
        for it in 0..iters {
            let _ = writeln!(w, "        let f{it} = tp + {}u;", it * threads);
            for i in 0..radix {
                let _ = writeln!(w, "        var x{it}_{i}: C2;");
            }
            let mut cond = Vec::new();
            if guard {
                cond.push(format!("f{it} < {butterflies}u"));
            }
            if from_src {
                cond.push("live".to_string());
            }
            if !cond.is_empty() {
                let _ = writeln!(w, "        if ({}) {{", cond.join(" && "));
            }
            for i in 0..radix {
                let at = format!("f{it} + {}u", i * butterflies);
                if from_src {
                    let _ = writeln!(w, "        x{it}_{i} = load_elem({info}, {at});");
                } else {
                    let _ = writeln!(w, "        x{it}_{i} = sh[sidx(tc, {at})];");
                }
            }
            if !cond.is_empty() {
                w.push_str("        }\n");
            }
        }
        if !from_src {
            w.push_str("        workgroupBarrier();\n");
        }
        for it in 0..iters {
            let open = if guard { format!("if (f{it} < {butterflies}u) ") } else { String::new() };
            let _ = writeln!(w, "        {open}{{");
            if l > 1 {
                let _ = writeln!(w, "            let k = f{it} % {l}u;");
                for i in 1..radix {
                    let t = format!("tw[params.tw_sub + {}u + k]", off + (i - 1) * l);
                    let t = if conj { format!("cconj({t})") } else { t };
                    let _ = writeln!(w, "            x{it}_{i} = cmul(x{it}_{i}, {t});");
                }
                let _ = writeln!(w, "            let o = (f{it} / {l}u) * {}u + k;", l * radix);
            } else {
                let _ = writeln!(w, "            let o = f{it} * {radix}u;");
            }
            let mut em = Emitter::new(12, inverse);
            let names: Vec<String> = (0..radix).map(|i| format!("x{it}_{i}")).collect();
            let outs = em.dft(&names);
            w.push_str(&em.code);
            if to_dst {
                w.push_str("            if (live) {\n");
                for (q, v) in outs.iter().enumerate() {
                    let _ = writeln!(w, "                store_elem({info}, o + {}u, {v});", q * l);
                }
                w.push_str("            }\n");
            } else {
                for (q, v) in outs.iter().enumerate() {
                    let v = if filter { format!("cmul({v}, tw[params.post + o + {}u])", q * l) } else { v.clone() };
                    let _ = writeln!(w, "            sh[sidx(tc, o + {}u)] = {v};", q * l);
                }
            }
            w.push_str("        }\n");
        }
        if !to_dst {
            w.push_str("        workgroupBarrier();\n");
        }
        w.push_str("    }\n");
    }
}

/// The WGSL of the line and the element of linear index `idx` (WGSL) of
/// a workgroup's `lines` lines of `len` elements: consecutive indices on
/// consecutive lines (`lines_fast`) or along a line.
fn split_index(lines_fast: bool, lines: usize, len: usize, idx: &str) -> (String, String) {
    if lines_fast {
        (format!("{idx} % {lines}u"), format!("{idx} / {lines}u"))
    } else {
        (format!("{idx} / {len}u"), format!("{idx} % {len}u"))
    }
}

/// One in-workgroup stage of a line kernel (see `Spec::stage`).
#[derive(Debug, Clone, Copy, Default)]
struct Stage {
    s: usize,
    radix: usize,
    l: usize,
    off: usize,
    from_src: bool,
    to_dst: bool,
    inverse: bool,
    conj: bool,
    filter: bool,
}

/// The complex helpers every FFT kernel uses.
pub(super) const HELPERS: &str =
    "fn cmul(a: C2, b: C2) -> C2 { return C2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn muli(a: C2) -> C2 { return C2(-a.y, a.x); }
fn mulni(a: C2) -> C2 { return C2(a.y, -a.x); }
fn cconj(a: C2) -> C2 { return C2(a.x, -a.y); }
";
