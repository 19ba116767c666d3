//! The normal transform of [`normal`](super::normal) as CUDA C and WGSL,
//! written from the same constants, step for step as the Rust one: CUDA
//! with the `_rn` intrinsics (never contracted), WGSL with every product
//! passed through a barrier the compiler cannot see through (`kiln_o`: an
//! exclusive or of its bits with the run-time 0 for `f32`; for `f64`, whose
//! bits WGSL cannot reach, a store and load through private memory at two
//! run-time indices that are both 0), so none is fused into a sum or
//! regrouped with another product. NVIDIA's Vulkan compiler does both to plain arithmetic, and to
//! products multiplied by a run-time 1.0. Constants go in as
//! bit patterns (CUDA, and WGSL's `f32`) or as the shortest decimal that
//! reads back exactly (WGSL's `f64`), so the three read the same values.

use super::normal::{
    COS_F32, COS_F64, LN_F32, LN_F64, LN2_HI_F32, LN2_HI_F64, LN2_LO_F32, LN2_LO_F64, SIN_F32, SIN_F64, SQRT2_Q31,
    SQRT2_Q63,
};

fn cuda_f32(v: f32) -> String {
    format!("__int_as_float(0x{:08x})", v.to_bits())
}

fn cuda_f64(v: f64) -> String {
    format!("__longlong_as_double(0x{:016x}ll)", v.to_bits())
}

fn wgsl_f32(v: f32) -> String {
    format!("bitcast<f32>(0x{:08x}u)", v.to_bits())
}

fn wgsl_f64(v: f64) -> String {
    format!("{v:?}lf")
}

/// Horner's rule as statements: `p` ends as the polynomial `c` (lowest
/// power first) at `x`, each step `step(x, c_k)` for `p * x + c_k`.
fn horner(c: &[String], x: &str, decl: &str, step: impl Fn(&str, &str) -> String) -> String {
    let mut s = format!("{decl} p = {};", c[c.len() - 1]);
    for k in c[..c.len() - 1].iter().rev() {
        s += &format!(" p = {};", step(x, k));
    }
    s
}

/// CUDA: `kiln_normal2f(a, b)` and `kiln_normal2(w)`, two normals each.
pub(crate) fn cuda() -> String {
    let c32 = |c: &[f32]| c.iter().map(|&v| cuda_f32(v)).collect::<Vec<_>>();
    let c64 = |c: &[f64]| c.iter().map(|&v| cuda_f64(v)).collect::<Vec<_>>();
    let f32_step = |x: &str, k: &str| format!("__fadd_rn(__fmul_rn(p, {x}), {k})");
    let f64_step = |x: &str, k: &str| format!("__dadd_rn(__dmul_rn(p, {x}), {k})");
    format!(
        r#"
__device__ __forceinline__ float kiln_pow2f(int e) {{ return __int_as_float((e + 127) << 23); }}
__device__ __forceinline__ double kiln_pow2(int e) {{ return __longlong_as_double((long long)(e + 1023) << 52); }}
__device__ __forceinline__ double kiln_exact(unsigned long long v) {{
    return __dadd_rn(__dmul_rn((double)(unsigned)(v >> 32), 4294967296.0), (double)(unsigned)v);
}}
__device__ __forceinline__ float kiln_cutf(unsigned long long v, int sh) {{
    if (v == 0ull) return 0.0f;
    int lz = __clzll((long long)v);
    return __fmul_rn((float)(unsigned)((v << lz) >> 40), kiln_pow2f(40 - lz + sh));
}}
__device__ __forceinline__ double kiln_cut(unsigned long long v, int sh) {{
    if (v == 0ull) return 0.0;
    int lz = __clzll((long long)v);
    return __dmul_rn(kiln_exact((v << lz) >> 11), kiln_pow2(11 - lz + sh));
}}
// kiln_cutf for v < 2^32, from integer operations alone: the top 24 bits
// of v with bit 23 set, added to the biased exponent, are the float's bits
// (the same value exactly, without a conversion or a product).
__device__ __forceinline__ float kiln_cutf32(unsigned v, int sh) {{
    if (v == 0u) return 0.0f;
    int lz = __clz((int)v);
    return __uint_as_float(((unsigned)(157 - lz + sh) << 23) + ((v << lz) >> 8));
}}
// (float)k for |k| < 2^22, exactly: k added to the bits of 1.5 * 2^23.
__device__ __forceinline__ float kiln_small_int(int k) {{ return __fsub_rn(__int_as_float(0x4b400000 + k), 12582912.0f); }}
// ln(1 + t) + k ln 2.
__device__ __forceinline__ float kiln_ln1pf(float t, int k) {{
    {ln32}
    float kf = kiln_small_int(k);
    return __fadd_rn(__fmul_rn(kf, {hi32}), __fadd_rn(__fmul_rn(t, p), __fmul_rn(kf, {lo32})));
}}
__device__ __forceinline__ float kiln_lnf(unsigned long long ti, bool neg, int sh, int k) {{
    float t = kiln_cutf(ti, sh);
    return kiln_ln1pf(neg ? -t : t, k);
}}
__device__ __forceinline__ float kiln_rsqrtf(float l) {{
    float h = __fmul_rn(0.5f, l);
    float y = __uint_as_float(0x5f3759dfu - (__float_as_uint(l) >> 1));
    for (int i = 0; i < 3; ++i) y = __fmul_rn(y, __fadd_rn(__fmul_rn(__fmul_rn(-h, y), y), 1.5f));
    return y;
}}
// (cos, sin) of the angle in quadrant q whose in-quadrant sine and cosine
// are (s0, c0), or (c0, s0) where the angle was folded (swap).
template <typename F>
__device__ __forceinline__ void kiln_rotate(unsigned q, bool swap, F s0, F c0, F* co, F* si) {{
    F s = swap ? c0 : s0, c = swap ? s0 : c0;
    switch (q & 3u) {{
    case 0: *co = c; *si = s; break;
    case 1: *co = -s; *si = c; break;
    case 2: *co = -c; *si = -s; break;
    default: *co = s; *si = -c; break;
    }}
}}
__device__ __forceinline__ float2 kiln_normal2f(unsigned a, unsigned b) {{
    unsigned x = a | 1u;
    int e = __clz((int)x);
    unsigned mi = x << e;
    int k = -1 - e;
    unsigned ti; bool neg; int sh;
    if (mi > {q31}u) {{ ti = 0u - mi; neg = true; sh = -32; k += 1; }} else {{ ti = mi - 0x80000000u; neg = false; sh = -31; }}
    const float t = kiln_cutf32(ti, sh);
    float l = __fmul_rn(-2.0f, kiln_ln1pf(neg ? -t : t, k));
    float r = __fmul_rn(l, kiln_rsqrtf(l));
    unsigned xb = b << 2;
    bool swap = xb >= 0x80000000u;
    float g = kiln_cutf32(swap ? 0u - xb : xb, -32);
    float g2 = __fmul_rn(g, g);
    float s, c;
    {{ {sin32} s = __fmul_rn(g, p); }}
    {{ {cos32} c = p; }}
    float co, si;
    kiln_rotate(b >> 30, swap, s, c, &co, &si);
    return make_float2(__fmul_rn(r, co), __fmul_rn(r, si));
}}
__device__ __forceinline__ double2 kiln_normal2(uint4 w) {{
    unsigned long long x = (((unsigned long long)w.x << 32) | w.y) | 1ull;
    int e = __clzll((long long)x);
    unsigned long long mi = x << e;
    int k = -1 - e;
    unsigned long long ti; bool neg; int sh;
    if (mi > {q63}ull) {{ ti = 0ull - mi; neg = true; sh = -64; k += 1; }} else {{ ti = mi - 0x8000000000000000ull; neg = false; sh = -63; }}
    double t = kiln_cut(ti, sh);
    if (neg) t = -t;
    double kf = (double)k;
    double l;
    {{ {ln64} l = __dmul_rn(-2.0, __dadd_rn(__dmul_rn(kf, {hi64}), __dadd_rn(__dmul_rn(t, p), __dmul_rn(kf, {lo64})))); }}
    float l32 = __fmul_rn(-2.0f, kiln_lnf(ti, neg, sh, k));
    double h = __dmul_rn(0.5, l);
    double y = (double)kiln_rsqrtf(l32);
    for (int i = 0; i < 3; ++i) y = __dmul_rn(y, __dadd_rn(__dmul_rn(__dmul_rn(-h, y), y), 1.5));
    double r = __dmul_rn(l, y);
    unsigned long long xb = (((unsigned long long)w.z << 32) | w.w) << 2;
    bool swap = xb >= 0x8000000000000000ull;
    double g = kiln_cut(swap ? 0ull - xb : xb, -64);
    double g2 = __dmul_rn(g, g);
    double s, c;
    {{ {sin64} s = __dmul_rn(g, p); }}
    {{ {cos64} c = p; }}
    double co, si;
    kiln_rotate(w.z >> 30, swap, s, c, &co, &si);
    return make_double2(__dmul_rn(r, co), __dmul_rn(r, si));
}}
"#,
        ln32 = horner(&c32(&LN_F32), "t", "float", f32_step),
        sin32 = horner(&c32(&SIN_F32), "g2", "float", f32_step),
        cos32 = horner(&c32(&COS_F32), "g2", "float", f32_step),
        ln64 = horner(&c64(&LN_F64), "t", "double", f64_step),
        sin64 = horner(&c64(&SIN_F64), "g2", "double", f64_step),
        cos64 = horner(&c64(&COS_F64), "g2", "double", f64_step),
        hi32 = cuda_f32(LN2_HI_F32),
        lo32 = cuda_f32(LN2_LO_F32),
        hi64 = cuda_f64(LN2_HI_F64),
        lo64 = cuda_f64(LN2_LO_F64),
        q31 = SQRT2_Q31,
        q63 = SQRT2_Q63,
    )
}

/// WGSL's `name(q, s, c)` on `ty`: (cos, sin) of the angle in quadrant `q`
/// whose in-quadrant sine and cosine are (s, c).
fn wgsl_rotate(name: &str, ty: &str) -> String {
    format!(
        "fn {name}(q: u32, s: {ty}, c: {ty}) -> vec2<{ty}> {{
    if (q == 0u) {{ return vec2<{ty}>(c, s); }}
    if (q == 1u) {{ return vec2<{ty}>(-s, c); }}
    if (q == 2u) {{ return vec2<{ty}>(-c, -s); }}
    return vec2<{ty}>(s, -c);
}}"
    )
}

/// WGSL: `kiln_normal2f(a, b)`, and `kiln_normal2(w)` where `f64` is
/// wanted; 64-bit integers are `vec2<u32>(high, low)`.
pub(crate) fn wgsl(f64_too: bool) -> String {
    let c32 = |c: &[f32]| c.iter().map(|&v| wgsl_f32(v)).collect::<Vec<_>>();
    let h = |c: &[String], x: &str| horner(c, x, "var", |x, k| format!("kiln_o(p * {x}) + {k}"));
    let mut src = format!(
        r#"
// Every product passes through kiln_o: an exclusive or with the run-time
// 0 of the parameters, which no compiler can see through, so none can fuse
// the product into a sum or regroup a chain of products.
fn kiln_o(x: f32) -> f32 {{ return bitcast<f32>(bitcast<u32>(x) ^ params.zero); }}
fn kiln_pow2f(e: i32) -> f32 {{ return bitcast<f32>(u32(e + 127) << 23u); }}
fn kiln_clz64(v: vec2<u32>) -> u32 {{ return select(countLeadingZeros(v.x), 32u + countLeadingZeros(v.y), v.x == 0u); }}
fn kiln_shl64(v: vec2<u32>, s: u32) -> vec2<u32> {{
    if (s == 0u) {{ return v; }}
    if (s >= 32u) {{ return vec2<u32>(v.y << (s - 32u), 0u); }}
    return vec2<u32>((v.x << s) | (v.y >> (32u - s)), v.y << s);
}}
fn kiln_neg64(v: vec2<u32>) -> vec2<u32> {{
    let lo = 0u - v.y;
    return vec2<u32>(0u - v.x - select(0u, 1u, v.y != 0u), lo);
}}
fn kiln_gt64(a: vec2<u32>, b: vec2<u32>) -> bool {{ return a.x > b.x || (a.x == b.x && a.y > b.y); }}
// v 2^sh, v cut to its top 24 bits.
fn kiln_cutf(v: vec2<u32>, sh: i32) -> f32 {{
    if (v.x == 0u && v.y == 0u) {{ return 0.0; }}
    let lz = kiln_clz64(v);
    return kiln_o(f32(kiln_shl64(v, lz).x >> 8u) * kiln_pow2f(40 - i32(lz) + sh));
}}
fn kiln_lnf(ti: vec2<u32>, neg: bool, sh: i32, k: i32) -> f32 {{
    var t = kiln_cutf(ti, sh);
    if (neg) {{ t = -t; }}
    {ln32}
    let kf = f32(k);
    return kiln_o(kf * {hi32}) + (kiln_o(t * p) + kiln_o(kf * {lo32}));
}}
fn kiln_rsqrtf(l: f32) -> f32 {{
    let h = kiln_o(0.5 * l);
    var y = bitcast<f32>(0x5f3759dfu - (bitcast<u32>(l) >> 1u));
    for (var i = 0; i < 3; i++) {{
        let hy = kiln_o(-h * y);
        y = kiln_o(y * (kiln_o(hy * y) + 1.5));
    }}
    return y;
}}
{rotate32}
fn kiln_normal2f(a: u32, b: u32) -> vec2<f32> {{
    let x = a | 1u;
    let e = countLeadingZeros(x);
    let mi = x << e;
    var k = -1 - i32(e);
    var ti: u32;
    var neg: bool;
    var sh: i32;
    if (mi > {q31}u) {{ ti = 0u - mi; neg = true; sh = -32; k += 1; }} else {{ ti = mi - 0x80000000u; neg = false; sh = -31; }}
    let l = kiln_o(-2.0 * kiln_lnf(vec2<u32>(0u, ti), neg, sh, k));
    let r = kiln_o(l * kiln_rsqrtf(l));
    let xb = b << 2u;
    let swap = xb >= 0x80000000u;
    let g = kiln_cutf(vec2<u32>(0u, select(xb, 0u - xb, swap)), -32);
    let g2 = kiln_o(g * g);
    var s: f32;
    var c: f32;
    {{ {sin32} s = kiln_o(g * p); }}
    {{ {cos32} c = p; }}
    let cs = kiln_rotatef(b >> 30u, select(s, c, swap), select(c, s, swap));
    return vec2<f32>(r * cs.x, r * cs.y);
}}
"#,
        ln32 = h(&c32(&LN_F32), "t"),
        sin32 = h(&c32(&SIN_F32), "g2"),
        cos32 = h(&c32(&COS_F32), "g2"),
        hi32 = wgsl_f32(LN2_HI_F32),
        lo32 = wgsl_f32(LN2_LO_F32),
        q31 = SQRT2_Q31,
        rotate32 = wgsl_rotate("kiln_rotatef", "f32"),
    );
    if f64_too {
        let c64 = |c: &[f64]| c.iter().map(|&v| wgsl_f64(v)).collect::<Vec<_>>();
        let h = |c: &[String], x: &str| horner(c, x, "var", |x, k| format!("kiln_o64(p * {x}) + {k}"));
        src += &format!(
            r#"
// WGSL cannot reach an f64's bits: an f64 product goes through private
// memory instead, stored at the run-time index 0 and loaded from another
// expression of 0, which no compiler can prove the same (a multiply by a
// run-time 1.0 was still fused by NVIDIA's compiler where two products are
// added, and naga's f64 frexp needs 64-bit integers).
var<private> kiln_scratch: array<f64, 2>;
fn kiln_o64(x: f64) -> f64 {{
    kiln_scratch[params.zero] = x;
    return kiln_scratch[u32(params.one) - 1u];
}}
fn kiln_exact(v: vec2<u32>) -> f64 {{ return f64(v.x) * 4294967296.0lf + f64(v.y); }}
fn kiln_cut(v: vec2<u32>, sh: i32) -> f64 {{
    if (v.x == 0u && v.y == 0u) {{ return 0.0lf; }}
    let lz = kiln_clz64(v);
    let top = kiln_shl64(v, lz);
    let m = vec2<u32>(top.x >> 11u, (top.y >> 11u) | (top.x << 21u));
    return kiln_o64(kiln_exact(m) * f64(kiln_pow2f(11 - i32(lz) + sh)));
}}
{rotate64}
fn kiln_normal2(w: vec4<u32>) -> vec2<f64> {{
    let x = vec2<u32>(w.x, w.y | 1u);
    let e = kiln_clz64(x);
    let mi = kiln_shl64(x, e);
    var k = -1 - i32(e);
    var ti: vec2<u32>;
    var neg: bool;
    var sh: i32;
    if (kiln_gt64(mi, vec2<u32>({q63h}u, {q63l}u))) {{ ti = kiln_neg64(mi); neg = true; sh = -64; k += 1; }} else {{ ti = vec2<u32>(mi.x & 0x7fffffffu, mi.y); neg = false; sh = -63; }}
    var t = kiln_cut(ti, sh);
    if (neg) {{ t = -t; }}
    let kf = f64(k);
    var l: f64;
    {{ {ln64} l = kiln_o64(-2.0lf * (kiln_o64(kf * {hi64}) + (kiln_o64(t * p) + kiln_o64(kf * {lo64})))); }}
    let l32 = kiln_o(-2.0 * kiln_lnf(ti, neg, sh, k));
    let h = kiln_o64(0.5lf * l);
    var y = f64(kiln_rsqrtf(l32));
    for (var i = 0; i < 3; i++) {{
        let hy = kiln_o64(-h * y);
        y = kiln_o64(y * (kiln_o64(hy * y) + 1.5lf));
    }}
    let r = kiln_o64(l * y);
    let xb = kiln_shl64(vec2<u32>(w.z, w.w), 2u);
    let swap = xb.x >= 0x80000000u;
    let g = kiln_cut(select(xb, kiln_neg64(xb), swap), -64);
    let g2 = kiln_o64(g * g);
    var s: f64;
    var c: f64;
    {{ {sin64} s = kiln_o64(g * p); }}
    {{ {cos64} c = p; }}
    let cs = kiln_rotate(w.z >> 30u, select(s, c, swap), select(c, s, swap));
    return vec2<f64>(r * cs.x, r * cs.y);
}}
"#,
            ln64 = h(&c64(&LN_F64), "t"),
            sin64 = h(&c64(&SIN_F64), "g2"),
            cos64 = h(&c64(&COS_F64), "g2"),
            hi64 = wgsl_f64(LN2_HI_F64),
            lo64 = wgsl_f64(LN2_LO_F64),
            q63h = (SQRT2_Q63 >> 32) as u32,
            q63l = SQRT2_Q63 as u32,
            rotate64 = wgsl_rotate("kiln_rotate", "f64"),
        );
    }
    src
}
