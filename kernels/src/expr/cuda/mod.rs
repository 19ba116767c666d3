//! CUDA C++ from a typed body: one `const` local per node.

pub(in crate::expr) mod fold;
mod generator;
pub(in crate::expr) mod scan;

pub(crate) use generator::Cuda;

use kiln_core::{DType, IndexWidth};

use crate::expr::check::{Op, Role, TNode, Typed};
use crate::expr::node::{BinOp, UnOp};
use crate::expr::ty::Vt;
use crate::expr::value::Value;

/// The helpers every generated CUDA kernel starts with: kiln's 16-bit
/// float types, then the expression helpers.
pub(crate) const PRELUDE: &str = concat!(include_str!("../../halfs.cuh"), include_str!("prelude.cuh"));

/// The C type an argument of `d` is stored as: kiln's own 16-bit float
/// structs (no toolkit headers under NVRTC), else the C type.
pub(crate) fn storage(d: DType) -> &'static str {
    match d {
        DType::F16 => "kiln_half",
        DType::BF16 => "kiln_bf16",
        d => d.cuda_name(),
    }
}

/// `value` (an f32 expression) as an element of `d` to store: rounded for
/// the 16-bit floats (exact, the value being one of theirs), as it is
/// otherwise.
pub(crate) fn to_storage(d: DType, value: &str) -> String {
    match d {
        DType::F16 => format!("kiln_half_from_float({value})"),
        DType::BF16 => format!("kiln_bf16_from_float({value})"),
        _ => value.to_string(),
    }
}

/// `value` (an element of `d` as stored) as the value the body computes
/// on: widened for the 16-bit floats.
fn from_storage(d: DType, value: String) -> String {
    if super::halves::is_half(d) { format!("kiln_to_float({value})") } else { value }
}

/// The C type of `t`.
pub(crate) fn c_type(t: Vt) -> &'static str {
    match t {
        Vt::Bool => "bool",
        Vt::Num(d) => d.cuda_name(),
    }
}

/// The C type of a length at `width`.
pub(crate) fn len_type(width: IndexWidth) -> &'static str {
    match width {
        IndexWidth::U32 => "unsigned",
        IndexWidth::U64 => "unsigned long long",
    }
}

fn constant(v: Value) -> String {
    match v.ty {
        Vt::Bool => (if v.bits != 0 { "true" } else { "false" }).to_string(),
        Vt::Num(DType::I32) => format!("((int){:#x}u)", v.bits as u32),
        Vt::Num(DType::U32) => format!("{:#x}u", v.bits as u32),
        Vt::Num(DType::I64) => format!("((long long){:#x}ull)", v.bits),
        Vt::Num(DType::F32) => format!("__int_as_float({:#x})", v.bits as u32 as i32),
        Vt::Num(DType::F64) => format!("__longlong_as_double({:#x}ll)", v.bits as i64),
        Vt::Num(_) => format!("{:#x}ull", v.bits),
    }
}

/// The expression computing node `n`, its operands named `v{k}`; `arg(p)`
/// names argument `p`, `len(p)` its length, and the element index is `kx_i`.
fn expression(n: &TNode, body: &Typed, arg: &impl Fn(u32) -> String) -> String {
    let nodes = &body.nodes;
    let v = |k: usize| format!("v{}", n.args[k]);
    let ty = |k: usize| nodes[n.args[k] as usize].ty;
    match n.op {
        Op::Load(p) => from_storage(body.dtypes[p as usize], format!("{}[kx_i]", arg(p))),
        Op::Scalar(p) => from_storage(body.dtypes[p as usize], arg(p)),
        Op::At(p) => format!("kx_at({}, {}, kx_len{p})", arg(p), v(0)),
        Op::LenOf(p) => format!("(unsigned)kx_len{p}"),
        Op::Index => "(unsigned)kx_i".to_string(),
        Op::Len => "(unsigned)kx_n".to_string(),
        Op::Const(c) => constant(c),
        Op::Un(UnOp::Not) if n.ty == Vt::Bool => format!("!{}", v(0)),
        Op::Un(UnOp::Not) => format!("({})~{}", c_type(n.ty), v(0)),
        Op::Un(UnOp::Neg) => format!("kx_neg({})", v(0)),
        Op::Un(op) => format!("kx_{}({})", op.name(), v(0)),
        Op::Bin(op) => match op {
            BinOp::Add => format!("kx_add({}, {})", v(0), v(1)),
            BinOp::Sub => format!("kx_sub({}, {})", v(0), v(1)),
            BinOp::Mul => format!("kx_mul({}, {})", v(0), v(1)),
            BinOp::Div => format!("kx_div({}, {})", v(0), v(1)),
            BinOp::Rem => format!("kx_rem({}, {})", v(0), v(1)),
            BinOp::Min => format!("kx_min({}, {})", v(0), v(1)),
            BinOp::Max => format!("kx_max({}, {})", v(0), v(1)),
            BinOp::Pow => format!("kx_pow({}, {})", v(0), v(1)),
            BinOp::Shl => format!("kx_shl({}, (unsigned){})", v(0), v(1)),
            BinOp::Shr => format!("kx_shr({}, (unsigned){})", v(0), v(1)),
            BinOp::Xor if ty(0) == Vt::Bool => format!("({} != {})", v(0), v(1)),
            _ => format!("({}) ({} {} {})", c_type(n.ty), v(0), op.name(), v(1)),
        },
        Op::Select => format!("({} ? {} : {})", v(0), v(1), v(2)),
        Op::Cast => format!("kx_cast<{}, {}>({})", c_type(n.ty), c_type(ty(0)), v(0)),
        Op::Fma => format!("kx_fma({}, {}, {})", v(0), v(1), v(2)),
        Op::Round(DType::BF16) => format!("kx_round_bf16({})", v(0)),
        Op::Round(_) => format!("kx_round_f16({})", v(0)),
    }
}

/// The body's statements: one local per node, then `store(p, value)` per store.
pub(crate) fn statements(body: &Typed, indent: &str, arg: impl Fn(u32) -> String) -> String {
    let mut out = String::new();
    for (i, n) in body.nodes.iter().enumerate() {
        let e = expression(n, body, &arg);
        out.push_str(&format!("{indent}const {} v{i} = {e};\n", c_type(n.ty)));
    }
    out
}

/// The parameter list of an elementwise kernel: the arguments in
/// declaration order, each raw input's length, then the element count.
pub(crate) fn parameters(roles: &[Role], body: &Typed, width: IndexWidth) -> String {
    let mut params = Vec::new();
    for (p, role) in roles.iter().enumerate() {
        let t = storage(body.dtypes[p]);
        params.push(match role {
            Role::Input | Role::Raw => format!("const {t}* __restrict__ a{p}"),
            Role::InOut | Role::Output => format!("{t}* __restrict__ a{p}"),
            Role::Scalar => format!("{t} a{p}"),
        });
    }
    for (p, role) in roles.iter().enumerate() {
        if *role == Role::Raw {
            params.push(format!("{} kx_len{p}", len_type(width)));
        }
    }
    params.push(format!("{} kx_n", len_type(width)));
    params.join(", ")
}

/// Elements per 16-byte pack of an elementwise kernel's plain arguments
/// (inputs, in-outs and outputs), where they share one size; 1 otherwise.
pub(crate) fn pack(roles: &[Role], body: &Typed) -> usize {
    let mut sizes = roles.iter().zip(&body.dtypes).filter(|(r, _)| **r != Role::Scalar && **r != Role::Raw);
    match sizes.next() {
        Some((_, d)) if sizes.all(|(_, e)| e.size() == d.size()) => 16 / d.size(),
        _ => 1,
    }
}

/// A plain argument's element as a value the body reads as `b{p}[kx_i]`.
pub(crate) const ONE: &str = "template <typename T> struct kx_one {
    T v;
    __device__ __forceinline__ T operator[](unsigned long long) const { return v; }
};
";

/// A whole elementwise kernel named `name`: a grid-stride loop over
/// 16-byte packs of every plain argument when they share one size and are
/// aligned (one pack per thread per step), then over the elements left.
pub(crate) fn elementwise(name: &str, roles: &[Role], body: &Typed, width: IndexWidth) -> String {
    let l = len_type(width);
    let mut out =
        format!("{PRELUDE}\n{ONE}\nextern \"C\" __global__ void {name}({}) {{\n", parameters(roles, body, width));
    out.push_str(&format!(
        "    const {l} kx_start = ({l})blockIdx.x * blockDim.x + threadIdx.x;\n    const {l} kx_stride = ({l})gridDim.x * blockDim.x;\n    {l} kx_done = 0;\n"
    ));
    let pack = pack(roles, body);
    let plain: Vec<usize> = (0..roles.len()).filter(|&p| roles[p] != Role::Scalar && roles[p] != Role::Raw).collect();
    if pack > 1 {
        let aligned: Vec<String> = plain.iter().map(|p| format!("((unsigned long long)a{p} & 15) == 0")).collect();
        out.push_str(&format!("    if ({}) {{\n        const {l} kx_packs = kx_n / {pack};\n", aligned.join(" && ")));
        out.push_str(&format!("        for ({l} kx_p = kx_start; kx_p < kx_packs; kx_p += kx_stride) {{\n"));
        for &p in &plain {
            let t = storage(body.dtypes[p]);
            out.push_str(&format!("            union {{ uint4 w; {t} e[{pack}]; }} p{p};\n"));
            if matches!(roles[p], Role::Input | Role::InOut) {
                out.push_str(&format!("            p{p}.w = ((const uint4*)a{p})[kx_p];\n"));
            }
        }
        out.push_str(&format!("#pragma unroll\n            for (int kx_k = 0; kx_k < {pack}; ++kx_k) {{\n"));
        out.push_str(&format!("                const {l} kx_i = kx_p * {pack} + kx_k;\n"));
        for &p in &plain {
            if matches!(roles[p], Role::Input | Role::InOut) {
                let t = storage(body.dtypes[p]);
                out.push_str(&format!("                const kx_one<{t}> b{p} = {{p{p}.e[kx_k]}};\n"));
            }
        }
        let name_of = |p: u32| {
            let r = roles[p as usize];
            if r != Role::Scalar && r != Role::Raw { format!("b{p}") } else { format!("a{p}") }
        };
        out.push_str(&statements(body, "                ", name_of));
        for (p, v) in &body.stores {
            let value = to_storage(body.dtypes[*p as usize], &format!("v{v}"));
            out.push_str(&format!("                p{p}.e[kx_k] = {value};\n"));
        }
        out.push_str("            }\n");
        let mut stored: Vec<u32> = body.stores.iter().map(|(p, _)| *p).collect();
        stored.dedup();
        for p in stored {
            out.push_str(&format!("            ((uint4*)a{p})[kx_p] = p{p}.w;\n"));
        }
        out.push_str(&format!("        }}\n        kx_done = kx_packs * {pack};\n    }}\n"));
    }
    out.push_str(&format!("    for ({l} kx_i = kx_done + kx_start; kx_i < kx_n; kx_i += kx_stride) {{\n"));
    out.push_str(&statements(body, "        ", |p| format!("a{p}")));
    for (p, v) in &body.stores {
        let value = to_storage(body.dtypes[*p as usize], &format!("v{v}"));
        out.push_str(&format!("        a{p}[kx_i] = {value};\n"));
    }
    out.push_str("    }\n}\n");
    out
}
