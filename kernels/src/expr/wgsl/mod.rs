//! WGSL from a typed body: one `let` per node, helpers emitted per use.
//!
//! Vulkan leaves results undefined where C defines them (log and sqrt of
//! negative numbers, pow of negative bases, float to integer conversion out
//! of range, min/max of NaN) and bounds sin/cos only on [-pi, pi]; the
//! helpers give kiln's one semantics (see the module docs of `expr`).

pub(in crate::expr) mod fold;
mod generator;
pub(in crate::expr) mod scan;

pub(crate) use generator::Wgsl;

use std::collections::BTreeMap;

use kiln_core::DType;

use crate::expr::check::{Op, Role, TNode, Typed};
use crate::expr::node::{BinOp, UnOp};
use crate::expr::ty::Vt;
use crate::expr::value::Value;
use crate::launch::{WGSL_ABI, WGSL_ROUND_F16};

/// The WGSL type of `t`; 64-bit integers are refused before generation.
pub(crate) fn w_type(t: Vt) -> &'static str {
    match t {
        Vt::Bool => "bool",
        Vt::Num(d) => d.wgsl_name().unwrap_or("unsupported"),
    }
}

/// Helper functions a body needs, by name (deterministic order).
#[derive(Default)]
pub(crate) struct Helpers(BTreeMap<String, String>);

impl Helpers {
    fn add(&mut self, name: String, def: impl FnOnce(&str) -> String) -> String {
        if !self.0.contains_key(&name) {
            let d = def(&name);
            self.0.insert(name.clone(), d);
        }
        name
    }

    pub(crate) fn text(&self) -> String {
        self.0.values().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A float constant that WGSL's constant evaluation must not see (NaN and
/// infinities are refused there, and naga folds no f64 math function):
/// built from bits through a private zero.
fn float_bits(bits: u32) -> String {
    format!("bitcast<f32>({bits:#x}u ^ kx_zero)")
}

fn constant(v: Value) -> String {
    match v.ty {
        Vt::Bool => (if v.bits != 0 { "true" } else { "false" }).to_string(),
        Vt::Num(DType::I32) => format!("bitcast<i32>({:#x}u)", v.bits as u32),
        Vt::Num(DType::U32) => format!("{:#x}u", v.bits as u32),
        Vt::Num(DType::F32) => float_bits(v.bits as u32),
        Vt::Num(_) => {
            let x = v.as_f64();
            if x.is_finite() {
                // Opaque too: naga cannot fold f64 math functions of constants.
                format!("select({x:e}lf, {x:e}lf, kx_zero != 0u)")
            } else {
                format!("f64({})", float_bits((x as f32).to_bits()))
            }
        }
    }
}

fn nan(t: &str) -> String {
    format!("{t}({})", float_bits(0x7fc0_0000))
}

fn inf(t: &str) -> String {
    format!("{t}({})", float_bits(0x7f80_0000))
}

struct Gen<'a> {
    nodes: &'a [TNode],
    dtypes: &'a [DType],
    h: &'a mut Helpers,
}

/// The `enable` directives a module over arguments of `dtypes` needs.
pub(crate) fn enables(mut dtypes: impl Iterator<Item = DType>) -> &'static str {
    if dtypes.any(|d| d == DType::F16) { "enable f16;\n" } else { "" }
}

/// `value`, an element of argument dtype `d`, as the value the body
/// computes on: the 16-bit floats widened to f32.
fn from_storage(d: DType, value: String) -> String {
    if crate::expr::halves::is_half(d) { format!("f32({value})") } else { value }
}

/// `value` (as the body computes it) as an element of argument dtype `d`.
pub(crate) fn to_storage(d: DType, value: &str) -> String {
    if crate::expr::halves::is_half(d) { format!("f16({value})") } else { value.to_string() }
}

impl Gen<'_> {
    fn ty(&self, n: u32) -> Vt {
        self.nodes[n as usize].ty
    }

    fn float_div(&mut self, t: &str) -> String {
        // NVIDIA's Vulkan driver computes a * (1 / b), which flushes to
        // zero for |b| > 2^126: scaling both by 1/4 there is exact.
        self.h.add(format!("kx_div_{t}"), |n| {
            if t == "f32" {
                format!("fn {n}(a: f32, b: f32) -> f32 {{ return select(a / b, (a * 0.25) / (b * 0.25), abs(b) > 8.507059e37); }}")
            } else {
                format!("fn {n}(a: {t}, b: {t}) -> {t} {{ return a / b; }}")
            }
        })
    }

    fn round_f16(&mut self) -> String {
        self.h.add("kiln_round_f16".to_string(), |_| WGSL_ROUND_F16.to_string())
    }

    fn int_div(&mut self, t: &str, rem: bool) -> String {
        let min = if t == "i32" { " || (a == bitcast<i32>(0x80000000u) && b == -1i)" } else { "" };
        let (name, body) = if rem {
            (format!("kx_rem_{t}"), format!("if (b == {t}(0){min}) {{ return {t}(0); }} return a % b;"))
        } else {
            (format!("kx_div_{t}"), format!("if (b == {t}(0){min}) {{ return a; }} return a / b;"))
        };
        self.h.add(name, |n| format!("fn {n}(a: {t}, b: {t}) -> {t} {{ {body} }}"))
    }

    fn min_max(&mut self, t: &str, max: bool) -> String {
        let f = if max { "max" } else { "min" };
        self.h.add(format!("kx_{f}_{t}"), |n| {
            if t.starts_with('f') {
                format!("fn {n}(a: {t}, b: {t}) -> {t} {{ if (!(a == a)) {{ return b; }} if (!(b == b)) {{ return a; }} return {f}(a, b); }}")
            } else if t == "i32" {
                // Through the run-time zero: NVIDIA's Vulkan compiler merges
                // nested integer min and max and loses a negated operand;
                // an XOR with a value it cannot know keeps each one apart.
                format!("fn {n}(a: i32, b: i32) -> i32 {{ return bitcast<i32>(bitcast<u32>({f}(a, b)) ^ kx_zero); }}")
            } else {
                format!("fn {n}(a: {t}, b: {t}) -> {t} {{ return {f}(a, b) ^ kx_zero; }}")
            }
        })
    }

    fn unary(&mut self, op: UnOp, t: &str, a: &str) -> String {
        let nan = nan(t);
        let inf = inf(t);
        let def = |h: &mut Helpers, name: &str, body: String| {
            let f = h.add(format!("kx_{name}_{t}"), |n| format!("fn {n}(x: {t}) -> {t} {{ {body} }}"));
            format!("{f}({a})")
        };
        match op {
            UnOp::Sqrt => def(self.h, "sqrt", format!("if (x < {t}(0)) {{ return {nan}; }} return sqrt(x);")),
            UnOp::Rsqrt => def(
                self.h,
                "rsqrt",
                format!(
                    "if (x < {t}(0)) {{ return {nan}; }} if (x == {t}(0)) {{ return {t}(1) / x; }} return inverseSqrt(x);"
                ),
            ),
            UnOp::Log => def(
                self.h,
                "log",
                format!(
                    "if (x < {t}(0)) {{ return {nan}; }} if (x == {t}(0)) {{ return -{inf}; }} if (x == {inf}) {{ return x; }} return log(x);"
                ),
            ),
            UnOp::Exp => def(
                self.h,
                "exp",
                format!(
                    "if (x > {t}(88.8)) {{ return {inf}; }} if (x < {t}(-104.0)) {{ return {t}(0); }} return exp(x);"
                ),
            ),
            // Vulkan bounds sin and cos on [-pi, pi] only: reduce first.
            UnOp::Sin | UnOp::Cos => {
                let f = if op == UnOp::Sin { "sin" } else { "cos" };
                def(
                    self.h,
                    f,
                    format!(
                        "if (abs(x) == {inf}) {{ return {nan}; }} return {f}(x - {t}(6.2831855) * round(x * {t}(0.15915494)));"
                    ),
                )
            }
            // tanh from exponentials overflows to inf / inf for large |x|.
            UnOp::Tanh => def(self.h, "tanh", format!("if (abs(x) > {t}(10)) {{ return sign(x); }} return tanh(x);")),
            UnOp::Floor => format!("floor({a})"),
            UnOp::Ceil => format!("ceil({a})"),
            UnOp::Abs => format!("abs({a})"),
            UnOp::Neg if t == "u32" => format!("(0u - {a})"),
            UnOp::Neg => format!("(-{a})"),
            UnOp::Not if t == "bool" => format!("(!{a})"),
            UnOp::Not => format!("(~{a})"),
        }
    }

    fn pow(&mut self, t: &str) -> String {
        let (nan, inf) = (nan(t), inf(t));
        // C's pow: every special case explicit, then pow on |x| (defined
        // for positive bases in Vulkan), the sign restored for odd integer
        // exponents of negative bases.
        self.h.add(format!("kx_pow_{t}"), |n| {
            format!(
                "fn {n}(x: {t}, y: {t}) -> {t} {{
    if (y == {t}(0) || x == {t}(1)) {{ return {t}(1); }}
    if (!(x == x) || !(y == y)) {{ return {nan}; }}
    let ax = abs(x);
    let integer = y == trunc(y);
    let odd = integer && abs(y) < {t}(16777216) && (i32(abs(y)) & 1) == 1;
    if (x < {t}(0) && !integer) {{ return {nan}; }}
    var r: {t};
    if (ax == {t}(1)) {{ r = {t}(1); }}
    else if (abs(y) == {inf}) {{ r = select({t}(0), {inf}, (ax > {t}(1)) == (y > {t}(0))); }}
    else if (ax == {t}(0)) {{ r = select({t}(0), {inf}, y < {t}(0)); }}
    else if (ax == {inf}) {{ r = select({inf}, {t}(0), y < {t}(0)); }}
    else {{ r = pow(ax, y); }}
    if (odd && (x < {t}(0) || (x == {t}(0) && {t}(1) / x < {t}(0)))) {{ return -r; }}
    return r;
}}"
            )
        })
    }

    fn cast(&mut self, from: Vt, to: Vt, a: &str) -> String {
        let (tf, tt) = (w_type(from), w_type(to));
        match (from, to) {
            (Vt::Bool, _) => format!("select({tt}(0), {tt}(1), {a})"),
            (f, t) if f.is_float() && t.is_int() => {
                // Below the range (for u32: below 1, where truncation gives 0
                // or a negative number) the result is the low value.
                let (low, hi, lo_val, hi_val) = if tt == "i32" {
                    ("x <= {tf}(-2147483648.0)", "2147483648.0", "bitcast<i32>(0x80000000u)", "2147483647i")
                } else {
                    ("x < {tf}(1.0)", "4294967296.0", "0u", "4294967295u")
                };
                let low = low.replace("{tf}", tf);
                let f = self.h.add(format!("kx_{tf}_to_{tt}"), |n| {
                    format!(
                        "fn {n}(x: {tf}) -> {tt} {{ if (!(x == x)) {{ return {tt}(0); }} if (x >= {tf}({hi})) {{ return {hi_val}; }} if ({low}) {{ return {lo_val}; }} return {tt}(x); }}"
                    )
                });
                format!("{f}({a})")
            }
            (Vt::Num(DType::I32), Vt::Num(DType::U32)) | (Vt::Num(DType::U32), Vt::Num(DType::I32)) => {
                format!("bitcast<{tt}>({a})")
            }
            _ => format!("{tt}({a})"),
        }
    }

    fn expression(&mut self, n: &TNode, names: &Names<'_>) -> String {
        let (arg, at) = (names.arg, names.arg);
        let v = |k: usize| format!("v{}", n.args[k]);
        let t = w_type(n.ty);
        match n.op {
            Op::Load(p) => from_storage(self.dtypes[p as usize], format!("{}[kx_i]", arg(p))),
            Op::Scalar(p) => from_storage(self.dtypes[p as usize], (names.scalar)(p)),
            Op::At(p) => {
                let it = self.ty(n.args[0]);
                let ti = w_type(it);
                let check = if it.is_signed() {
                    format!("i >= {ti}(0) && u32(i) < params.kx_len{p}")
                } else {
                    format!("i < params.kx_len{p}")
                };
                let element = from_storage(self.dtypes[p as usize], format!("{}[u32(i)]", at(p)));
                let f = self.h.add(format!("kx_at{p}_{ti}"), |name| {
                    format!("fn {name}(i: {ti}) -> {t} {{ if ({check}) {{ return {element}; }} return {t}(0); }}")
                });
                format!("{f}({})", v(0))
            }
            Op::LenOf(p) => format!("params.kx_len{p}"),
            Op::Index => "kx_i".to_string(),
            Op::Len => names.len.to_string(),
            Op::Const(c) => constant(c),
            Op::Un(op) => self.unary(op, t, &v(0)),
            Op::Bin(op) => {
                let ta = self.ty(n.args[0]);
                let wa = w_type(ta);
                match op {
                    BinOp::Div if ta.is_float() => format!("{}({}, {})", self.float_div(wa), v(0), v(1)),
                    BinOp::Div => format!("{}({}, {})", self.int_div(wa, false), v(0), v(1)),
                    BinOp::Rem => format!("{}({}, {})", self.int_div(wa, true), v(0), v(1)),
                    BinOp::Min | BinOp::Max => format!("{}({}, {})", self.min_max(wa, op == BinOp::Max), v(0), v(1)),
                    BinOp::Pow => format!("{}({}, {})", self.pow(wa), v(0), v(1)),
                    BinOp::Shl | BinOp::Shr => {
                        let s = match self.ty(n.args[1]) {
                            Vt::Num(DType::U32) => v(1),
                            _ => format!("bitcast<u32>({})", v(1)),
                        };
                        format!("({} {} ({s} & 31u))", v(0), op.name())
                    }
                    BinOp::Xor if ta == Vt::Bool => format!("({} != {})", v(0), v(1)),
                    // naga prints `!=` as an ordered comparison, false at a NaN.
                    BinOp::Ne if ta.is_float() => format!("(!({} == {}))", v(0), v(1)),
                    _ => format!("({} {} {})", v(0), op.name(), v(1)),
                }
            }
            Op::Select => format!("select({}, {}, {})", v(2), v(1), v(0)),
            Op::Cast => self.cast(self.ty(n.args[0]), n.ty, &v(0)),
            Op::Fma => format!("fma({}, {}, {})", v(0), v(1), v(2)),
            // Only f16: WGSL has no bf16 (refused before generation).
            Op::Round(_) => format!("{}({})", self.round_f16(), v(0)),
        }
    }
}

/// What a body's arguments are called where it is printed.
pub(crate) struct Names<'a> {
    /// Buffer argument `p`.
    pub(crate) arg: &'a dyn Fn(u32) -> String,
    /// Scalar argument `p`.
    pub(crate) scalar: &'a dyn Fn(u32) -> String,
    /// The element count `len()`.
    pub(crate) len: &'a str,
}

/// Arguments named as an elementwise kernel has them: buffers `a{p}`,
/// scalars and the element count in `params`.
pub(crate) fn kernel_names<R>(f: impl FnOnce(&Names<'_>) -> R) -> R {
    f(&Names { arg: &|p| format!("a{p}"), scalar: &|p| format!("params.a{p}"), len: "params.kx_n" })
}

/// The body's statements, one `let` per node, arguments named by `names`.
pub(crate) fn statements(body: &Typed, helpers: &mut Helpers, indent: &str, names: &Names<'_>) -> String {
    let mut g = Gen { nodes: &body.nodes, dtypes: &body.dtypes, h: helpers };
    let mut out = String::new();
    for (i, n) in body.nodes.iter().enumerate() {
        let e = g.expression(n, names);
        out.push_str(&format!("{indent}let v{i}: {} = {e};\n", w_type(n.ty)));
    }
    out
}

/// The bindings and the uniform of an elementwise kernel's arguments: buffers
/// at `@group(0)` in declaration order, scalars, raw lengths and the element
/// count in `params`.
fn declarations(roles: &[Role], body: &Typed) -> String {
    let mut buffers = Vec::new();
    let mut fields = Vec::new();
    for (p, role) in roles.iter().enumerate() {
        let t = w_type(Vt::Num(body.dtypes[p]));
        match role {
            Role::Scalar => fields.push(format!("a{p}: {t},")),
            _ => {
                let mode = if role.writes() { "read_write" } else { "read" };
                buffers.push(format!("var<storage, {mode}> a{p}: array<{t}>"));
            }
        }
    }
    for (p, role) in roles.iter().enumerate() {
        if *role == Role::Raw {
            fields.push(format!("kx_len{p}: u32,"));
        }
    }
    fields.push("kx_n: u32,".to_string());
    interface(&buffers, &fields)
}

/// What every user kernel declares: `buffers` (each `var<storage, ...>
/// name: array<...>`) at `@group(0)` in order, `struct Params` of `fields`
/// with the ABI's uniform and overrides, and `kx_zero`.
pub(crate) fn interface(buffers: &[String], fields: &[String]) -> String {
    let mut out = String::new();
    for (b, decl) in buffers.iter().enumerate() {
        out.push_str(&format!("@group(0) @binding({b}) {decl};\n"));
    }
    out.push_str(&format!("struct Params {{ {} }}\n{WGSL_ABI}", fields.join(" ")));
    // Zero, but known to be only at run time where a kernel sets it from a
    // length no binding reaches (`kx_n == 2^32 - 1`): see `min_max`.
    out.push_str("var<private> kx_zero: u32 = 0u;\n");
    out
}

/// A whole elementwise kernel named `name`.
///
/// Grid-stride, four elements per step (four strides apart): each computed
/// in its own block into locals, then the four stored, so that every load
/// of the four (inputs and gathers) is issued before any store and four
/// are in flight; one at a time left NVIDIA's Vulkan driver at 85% of
/// CUDA's rate. The elements past the last whole step go one at a time.
pub(crate) fn elementwise(name: &str, roles: &[Role], body: &Typed) -> String {
    let mut helpers = Helpers::default();
    let stmts = kernel_names(|names| statements(body, &mut helpers, "            ", names));
    let mut out = enables(body.dtypes.iter().copied()).to_string();
    out.push_str(&declarations(roles, body));
    out.push_str(&helpers.text());
    out.push_str(&format!(
        "\n@compute @workgroup_size(block_x, block_y, block_z)\n\
         fn {name}(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n\
         \x20   kx_zero = select(0u, 1u, params.kx_n == 0xffffffffu);\n\
         \x20   let stride = groups.x * block_x;\n\
         \x20   var kx_i = gid.x;\n\
         \x20   for (; kx_i < params.kx_n && params.kx_n - kx_i > 3u * stride; kx_i += 4u * stride) {{\n\
         \x20       let kx_base = kx_i;\n"
    ));
    for k in 0..4 {
        for (p, v) in &body.stores {
            out.push_str(&format!("        var kx_r{k}_{p}: {};\n", w_type(body.nodes[*v as usize].ty)));
        }
        out.push_str(&format!("        {{\n            let kx_i = kx_base + {k}u * stride;\n{stmts}"));
        for (p, v) in &body.stores {
            out.push_str(&format!("            kx_r{k}_{p} = v{v};\n"));
        }
        out.push_str("        }\n");
    }
    let stored = |p: u32, v: &str| to_storage(body.dtypes[p as usize], v);
    for k in 0..4 {
        for (p, _) in &body.stores {
            out.push_str(&format!(
                "        a{p}[kx_base + {k}u * stride] = {};\n",
                stored(*p, &format!("kx_r{k}_{p}"))
            ));
        }
    }
    out.push_str("    }\n    for (; kx_i < params.kx_n; kx_i += stride) {\n        {\n");
    out.push_str(&stmts);
    for (p, v) in &body.stores {
        out.push_str(&format!("            a{p}[kx_i] = {};\n", stored(*p, &format!("v{v}"))));
    }
    out.push_str("        }\n    }\n}\n");
    out
}
