//! User kernels on the CPU backend: kiln's semantics at edge values, and
//! every kind of bad input giving an error that names the kernel and the
//! argument.

use kiln_core::{Args, DType, Error};
use kiln_kernels::expr::{Expr, Ty, index, select, var};
use kiln_kernels::user::Elementwise;

mod common;
use common::dev;

#[test]
fn float_semantics_at_edge_values() {
    let x = [f32::NAN, -0.0, 1.0, -1.0, f32::INFINITY, 3.0e9, -3.0e9, 2.5];
    let y = [1.0f32, f32::NAN, 0.0, 2.0, -1.0, 0.5, 4.0, f32::NEG_INFINITY];
    let k = Elementwise::new("edges")
        .input("x", DType::F32)
        .input("y", DType::F32)
        .output("lo", DType::F32)
        .output("as_int", DType::I32)
        .output("as_uint", DType::U32)
        .output("root", DType::F32)
        .output("p", DType::F32)
        .set("lo", var("x").min(var("y")))
        .set("as_int", var("x").cast(DType::I32))
        .set("as_uint", var("x").cast(DType::U32))
        .set("root", var("x").sqrt())
        .set("p", var("x").pow(var("y")))
        .build()
        .unwrap();
    let d = dev();
    let s = d.stream();
    let (xb, yb) = (s.upload(&x).unwrap(), s.upload(&y).unwrap());
    let mut lo = s.upload(&[7.0f32; 8]).unwrap();
    let mut ai = s.upload(&[7i32; 8]).unwrap();
    let mut au = s.upload(&[7u32; 8]).unwrap();
    let mut root = s.upload(&[7.0f32; 8]).unwrap();
    let mut p = s.upload(&[7.0f32; 8]).unwrap();
    let args = Args::new().arg(&xb).arg(&yb).arg(&mut lo).arg(&mut ai).arg(&mut au).arg(&mut root).arg(&mut p);
    k.launch(&s, args).unwrap();
    let lo = lo.to_vec().unwrap();
    // min ignores a NaN operand.
    assert_eq!(lo[0], 1.0);
    assert_eq!(lo[1], 0.0);
    assert_eq!(lo[3], -1.0);
    // Saturating, truncating, NaN to 0.
    assert_eq!(ai.to_vec().unwrap(), [0, 0, 1, -1, i32::MAX, i32::MAX, i32::MIN, 2]);
    assert_eq!(au.to_vec().unwrap(), [0, 0, 1, 0, u32::MAX, 3_000_000_000, 0, 2]);
    let root = root.to_vec().unwrap();
    assert!(root[0].is_nan() && root[3].is_nan());
    assert_eq!(root[1].to_bits(), (-0.0f32).to_bits());
    let p = p.to_vec().unwrap();
    // C's pow: pow(NaN, 1) is NaN; pow(-1, 2) == 1; pow(inf, -1) == 0; pow(2.5, -inf) == 0.
    assert!(p[0].is_nan());
    assert_eq!((p[3], p[4], p[7]), (1.0, 0.0, 0.0));
}

#[test]
fn integer_semantics_and_gathers() {
    let x = [7i32, i32::MIN, -7, 5, 1, -1];
    let y = [0i32, -1, 2, 33, -1, 31];
    let table = [10i32, 20, 30];
    let k = Elementwise::new("ints")
        .input("x", DType::I32)
        .input("y", DType::I32)
        .raw("t", DType::I32)
        .output("q", DType::I32)
        .output("r", DType::I32)
        .output("sh", DType::I32)
        .output("g", DType::I32)
        .set("q", var("x") / var("y"))
        .set("r", var("x") % var("y"))
        .set("sh", var("x") << var("y"))
        // Out of range indices (negative, past the end) read 0.
        .set("g", var("t").at(index().cast(DType::I32) - 1))
        .build()
        .unwrap();
    let d = dev();
    let s = d.stream();
    let (xb, yb, tb) = (s.upload(&x).unwrap(), s.upload(&y).unwrap(), s.upload(&table).unwrap());
    let mut outs: Vec<_> = (0..4).map(|_| s.upload(&[99i32; 6]).unwrap()).collect();
    let [q, r, sh, g] = &mut outs[..] else { unreachable!() };
    k.launch(&s, Args::new().arg(&xb).arg(&yb).arg(&tb).arg(q).arg(r).arg(sh).arg(g)).unwrap();
    assert_eq!(outs[0].to_vec().unwrap(), [7, i32::MIN, -3, 0, -1, 0]);
    assert_eq!(outs[1].to_vec().unwrap(), [0, 0, -1, 5, 0, -1]);
    assert_eq!(outs[2].to_vec().unwrap(), [7, 0, -28, 10, i32::MIN, i32::MIN]);
    assert_eq!(outs[3].to_vec().unwrap(), [0, 10, 20, 30, 0, 0]);
}

#[test]
fn placeholders_inout_and_locals() {
    let t = Ty::param("T");
    let k = Elementwise::new("clamp_in_place")
        .scalar("lo", t.clone())
        .scalar("hi", t.clone())
        .inout("v", t)
        .local("c", var("v").max(var("lo")))
        .set("v", select(var("c").gt(var("hi")), var("hi"), var("c")))
        .build()
        .unwrap();
    let d = dev();
    let s = d.stream();
    let data: Vec<f64> = (0..5000).map(|i| f64::from(i) * 0.01 - 20.0).collect();
    let mut v = s.upload(&data).unwrap();
    k.launch(&s, Args::new().arg(-1.0f64).arg(1.5f64).arg(&mut v)).unwrap();
    let want: Vec<f64> = data.iter().map(|x| x.clamp(-1.0, 1.5)).collect();
    assert_eq!(v.to_vec().unwrap(), want);
    // The same kernel on u32, bound at launch.
    let mut w = s.upload(&[0u32, 5, 10]).unwrap();
    k.launch(&s, Args::new().arg(2u32).arg(7u32).arg(&mut w)).unwrap();
    assert_eq!(w.to_vec().unwrap(), [2, 5, 7]);
}

fn invalid(e: Error) -> String {
    let text = e.to_string();
    assert!(text.contains("user kernel `"), "{text}");
    text
}

#[test]
fn bad_definitions_name_the_kernel_and_the_argument() {
    let e = Elementwise::new("k").input("x", DType::F32).output("y", DType::F32).set("y", var("w")).build();
    assert!(invalid(e.unwrap_err()).contains("`w`"));
    let e = Elementwise::new("k")
        .input("x", DType::F32)
        .input("n", DType::I32)
        .output("y", DType::F32)
        .set("y", var("x") + var("n"))
        .build();
    let text = invalid(e.unwrap_err());
    assert!(text.contains("f32 and i32") && text.contains("cast"), "{text}");
    let e = Elementwise::new("k").input("x", DType::F32).output("y", DType::F32).set("x", var("x")).build();
    assert!(invalid(e.unwrap_err()).contains("writes the input `x`"));
    let e = Elementwise::new("k").input("x", DType::F32).output("y", DType::F32).build();
    assert!(invalid(e.unwrap_err()).contains("never assigns its output `y`"));
    let e = Elementwise::new("k").input("x", DType::F32).output("y", DType::F32).set("y", var("x") % 2.0).build();
    assert!(invalid(e.unwrap_err()).contains("%"));
    let e = Elementwise::new("k").input("x", DType::I32).output("y", DType::I32).set("y", var("x") * 2.5).build();
    assert!(invalid(e.unwrap_err()).contains("2.5"));
    let e = Elementwise::new("k").input("x", DType::F32).output("y", DType::F32).set("y", var("x").at(0)).build();
    assert!(invalid(e.unwrap_err()).contains("only raw inputs"));
    let e = Elementwise::new("not a name").input("x", DType::F32).output("y", DType::F32).set("y", var("x")).build();
    assert!(invalid(e.unwrap_err()).contains("identifier"));
    let e = Elementwise::new("k").input("x", DType::U8).output("y", DType::U8).set("y", var("x")).build();
    assert!(invalid(e.unwrap_err()).contains("u8"));
}

#[test]
fn bad_launches_name_the_argument_and_leave_buffers_alone() {
    let t = Ty::param("T");
    let k = Elementwise::new("axpy")
        .scalar("a", t.clone())
        .input("x", t.clone())
        .input("y", t.clone())
        .output("z", t)
        .set("z", var("a") * var("x") + var("y"))
        .build()
        .unwrap();
    let d = dev();
    let s = d.stream();
    let (x, y, short) =
        (s.upload(&[1.0f32, 2.0]).unwrap(), s.upload(&[3.0f32, 4.0]).unwrap(), s.upload(&[1.0f32]).unwrap());
    let mut z = s.upload(&[-5.0f32, -5.0]).unwrap();
    let e = k.launch(&s, Args::new().arg(2.0f32).arg(&x).arg(&y)).unwrap_err();
    assert!(invalid(e).contains("takes 4 arguments"));
    let e = k.launch(&s, Args::new().arg(2.0f32).arg(&x).arg(&y).arg(&z)).unwrap_err();
    assert!(invalid(e).contains("output `z`"));
    let e = k.launch(&s, Args::new().arg(2.0f64).arg(&x).arg(&y).arg(&mut z)).unwrap_err();
    let text = invalid(e);
    assert!(text.contains("input `x` is f32, but T is f64 from `a`"), "{text}");
    let e = k.launch(&s, Args::new().arg(2.0f32).arg(&x).arg(&short).arg(&mut z)).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { expected: 2, actual: 1, .. }), "{e}");
    assert!(e.to_string().contains("input `y`"), "{e}");
    assert_eq!(z.to_vec().unwrap(), [-5.0, -5.0]);
    k.launch(&s, Args::new().arg(2.0f32).arg(&x).arg(&y).arg(&mut z)).unwrap();
    assert_eq!(z.to_vec().unwrap(), [5.0, 8.0]);
}

#[test]
fn a_literal_without_a_type_is_refused() {
    let e = Elementwise::new("k")
        .input("x", DType::F32)
        .output("y", DType::F32)
        .set("y", select(Expr::from(1).lt(2), var("x"), var("x")))
        .build();
    assert!(invalid(e.unwrap_err()).contains("literal"));
}

/// An elementwise kernel `y = body` over `x` and `y` of `dtype`, built.
fn one_output(dtype: DType, body: Expr) -> kiln_core::Result<kiln_kernels::user::ElementwiseKernel> {
    Elementwise::new("lit").input("x", dtype).output("y", dtype).set("y", body).build()
}

#[test]
fn literals_that_do_not_fit_their_dtype_are_refused_at_build() {
    let refused = |dtype: DType, body: Expr, words: &[&str]| {
        let text = invalid(one_output(dtype, body).unwrap_err());
        for w in words {
            assert!(text.contains(w), "{text:?} does not name {w:?}");
        }
    };
    // Overflow to an infinity, and a value lost to zero.
    refused(DType::F32, var("x") + 1e300, &["1e300", "f32"]);
    refused(DType::F32, var("x") * -1e39, &["-1e39", "f32"]);
    refused(DType::F32, var("x") + 1e-50, &["1e-50", "f32", "0"]);
    refused(DType::F32, Expr::from(1e300).cast(DType::F32) + var("x"), &["1e300", "f32"]);
    // Integers out of range, in arithmetic, comparisons, selects and casts.
    refused(DType::I32, var("x") + 3000000000u32, &["3000000000", "i32"]);
    refused(DType::I32, select(var("x").lt(3000000000u32), var("x"), 0), &["3000000000", "i32"]);
    refused(DType::U32, var("x") - -1, &["-1", "u32"]);
    refused(DType::U32, Expr::from(-1).cast(DType::U32) + var("x"), &["-1", "u32"]);
    refused(DType::I64, var("x") * u64::MAX, &["18446744073709551615", "i64"]);
    refused(DType::I32, var("x") & 0x1_0000_0000i64, &["4294967296", "i32"]);
    // A float literal never becomes an integer.
    refused(DType::I32, var("x") + 2.0, &["2.0", "i32"]);
}

#[test]
fn literals_that_fit_keep_their_value() {
    let s = dev().stream();
    let run_i32 = |body: Expr, x: &[i32]| {
        let k = one_output(DType::I32, body).unwrap();
        let xb = s.upload(x).unwrap();
        let mut y = s.upload(&vec![7; x.len()]).unwrap();
        k.launch(&s, Args::new().arg(&xb).arg(&mut y)).unwrap();
        y.to_vec().unwrap()
    };
    // Bitwise operands may give the bits of the other signedness.
    assert_eq!(run_i32(var("x") & 0xffff_0000u32, &[-1, 0x1234_5678]), [-65536, 0x1234_0000]);
    assert_eq!(run_i32(var("x") + i32::MIN, &[1, -1]), [i32::MIN + 1, i32::MAX]);
    let k = one_output(DType::U32, (Expr::from(-8) >> 1).cast(DType::U32) + var("x")).unwrap();
    let xb = s.upload(&[0u32, 4]).unwrap();
    let mut y = s.upload(&[7u32; 2]).unwrap();
    k.launch(&s, Args::new().arg(&xb).arg(&mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [0x7fff_fffc, 0x8000_0000]);
    // f32: the largest finite value, subnormals, infinities and NaN are kept.
    let k = Elementwise::new("floats")
        .input("x", DType::F32)
        .output("big", DType::F32)
        .output("tiny", DType::F32)
        .output("inf", DType::F32)
        .output("nan", DType::F32)
        .set("big", var("x") + f64::from(f32::MAX))
        .set("tiny", var("x") + 1e-40)
        .set("inf", var("x") + f64::INFINITY)
        .set("nan", var("x") + f64::NAN)
        .build()
        .unwrap();
    let xb = s.upload(&[0.0f32]).unwrap();
    let poisoned = || s.upload(&[7.0f32]).unwrap();
    let (mut big, mut tiny, mut inf, mut nan) = (poisoned(), poisoned(), poisoned(), poisoned());
    k.launch(&s, Args::new().arg(&xb).arg(&mut big).arg(&mut tiny).arg(&mut inf).arg(&mut nan)).unwrap();
    assert_eq!(big.to_vec().unwrap(), [f32::MAX]);
    assert_eq!(tiny.to_vec().unwrap(), [1e-40f32]);
    assert_eq!(inf.to_vec().unwrap(), [f32::INFINITY]);
    assert!(nan.to_vec().unwrap()[0].is_nan());
}

#[test]
fn a_literal_that_does_not_fit_a_placeholder_is_refused_before_a_launch_of_nothing() {
    let k = Elementwise::new("lit")
        .input("x", Ty::param("T"))
        .output("y", Ty::param("T"))
        .set("y", var("x") + 3000000000u32)
        .build()
        .unwrap();
    let s = dev().stream();
    let x = s.upload::<i32>(&[]).unwrap();
    let mut y = s.upload::<i32>(&[]).unwrap();
    let text = invalid(k.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap_err());
    assert!(text.contains("3000000000") && text.contains("i32"), "{text}");
    // On u32 the literal fits.
    let x = s.upload(&[1u32]).unwrap();
    let mut y = s.upload(&[0u32]).unwrap();
    k.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [3000000001]);
}

#[test]
fn any_declaration_order_takes_the_count_from_the_inputs() {
    // An output declared before the input and a raw input of another
    // length after it: the element count is still the input's.
    let k = Elementwise::new("order")
        .output("z", DType::I32)
        .input("x", DType::I32)
        .raw("r", DType::I32)
        .scalar("a", DType::I32)
        .set("z", var("x") * var("a") + var("r").at(index().cast(DType::I32)))
        .build()
        .unwrap();
    let d = dev();
    let s = d.stream();
    let x = s.upload(&[1, 2, 3, 4, 5]).unwrap();
    let r = s.upload(&[100]).unwrap();
    let mut z = s.upload(&[-7; 5]).unwrap();
    k.launch(&s, Args::new().arg(&mut z).arg(&x).arg(&r).scalar(3)).unwrap();
    assert_eq!(z.to_vec().unwrap(), [103, 6, 9, 12, 15]);
}

#[test]
fn outputs_too_large_for_the_cache_hold_every_element() {
    use rand::{Rng, SeedableRng};
    // Launches whose outputs reach 32 MiB in all are written past the
    // cache: one output just past it, then two that pass it only together
    // (one stored from an input in place, one in-out).
    let k = Elementwise::new("axpy_and_more")
        .scalar("a", Ty::Is(DType::F32))
        .input("x", Ty::Is(DType::F32))
        .input("i", Ty::Is(DType::U64))
        .output("y", Ty::Is(DType::F32))
        .output("j", Ty::Is(DType::U64))
        .inout("z", Ty::Is(DType::F32))
        .set("y", var("a") * var("x") + var("z"))
        .set("j", var("i"))
        .set("z", var("z") - var("x"))
        .build()
        .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let s = dev().stream();
    for n in [(8 << 20) + 5, (2 << 20) + 3] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let i: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let z0: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (xd, id) = (s.upload(&x).unwrap(), s.upload(&i).unwrap());
        let (mut y, mut j, mut z) =
            (s.upload(&vec![f32::NAN; n]).unwrap(), s.upload(&vec![7u64; n]).unwrap(), s.upload(&z0).unwrap());
        let args = Args::new().arg(0.5f32).arg(&xd).arg(&id).arg(&mut y).arg(&mut j).arg(&mut z);
        k.launch(&s, args).unwrap();
        let (y, j, z) = (y.to_vec().unwrap(), j.to_vec().unwrap(), z.to_vec().unwrap());
        for e in 0..n {
            assert_eq!(y[e], 0.5 * x[e] + z0[e], "y[{e}] of {n}");
            assert_eq!(j[e], i[e], "j[{e}] of {n}");
            assert_eq!(z[e], z0[e] - x[e], "z[{e}] of {n}");
        }
    }
}

#[test]
fn nodes_computed_from_cache_match_a_reference_at_every_length() {
    use rand::{Rng, SeedableRng};
    // Nodes that read no argument in place (a square root of a product, a
    // sum of two such, a cast of one) run in steps that ask for the next
    // chunk's lines: every length around the steps, the chunks and the
    // parallel tasks, with each form of operand (column and column, column
    // and one value, one value and column). The first such node asks for
    // them all, so `pair` starts with one of two columns.
    let pair = Elementwise::new("pair_from_cache")
        .input("x", Ty::Is(DType::F32))
        .input("y", Ty::Is(DType::F32))
        .output("p", Ty::Is(DType::F32))
        .set("p", var("x") * 0.5f32 + var("y") * var("y"))
        .build()
        .unwrap();
    let k = Elementwise::new("from_cache")
        .input("x", Ty::Is(DType::F32))
        .input("y", Ty::Is(DType::F32))
        .input("w", Ty::Is(DType::F64))
        .output("f", Ty::Is(DType::F32))
        .output("g", Ty::Is(DType::F32))
        .output("h", Ty::Is(DType::I32))
        .output("d", Ty::Is(DType::F64))
        .set("f", (var("x") * 2.0f32 + var("y")).sqrt() * 3.0f32)
        .set("g", Expr::from(1.5f32) - var("x").sqrt() + (var("y") * var("y")).sqrt())
        .set("h", ((var("x") * 1000.0f32).sqrt() * 7.0f32).cast(DType::I32))
        .set("d", (var("w") * var("w") + 1.0f64).sqrt() / 3.0f64)
        .build()
        .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
    let s = dev().stream();
    for n in [1, 15, 16, 17, 2047, 2048, 2049, 3 * 2048 + 17, 16 * 2048 + 1, 40 * 2048 + 33] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(0.0..4.0)).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
        let w: Vec<f64> = (0..n).map(|_| rng.random_range(-9.0..9.0)).collect();
        let (xd, yd, wd) = (s.upload(&x).unwrap(), s.upload(&y).unwrap(), s.upload(&w).unwrap());
        let mut f = s.upload(&vec![f32::NAN; n]).unwrap();
        let mut g = s.upload(&vec![f32::NAN; n]).unwrap();
        let mut h = s.upload(&vec![-9i32; n]).unwrap();
        let mut d = s.upload(&vec![f64::NAN; n]).unwrap();
        let args = Args::new().arg(&xd).arg(&yd).arg(&wd).arg(&mut f).arg(&mut g).arg(&mut h).arg(&mut d);
        k.launch(&s, args).unwrap();
        let (f, g, h, d) = (f.to_vec().unwrap(), g.to_vec().unwrap(), h.to_vec().unwrap(), d.to_vec().unwrap());
        let mut p = s.upload(&vec![f32::NAN; n]).unwrap();
        pair.launch(&s, Args::new().arg(&xd).arg(&yd).arg(&mut p)).unwrap();
        let p = p.to_vec().unwrap();
        for e in 0..n {
            assert_eq!(p[e].to_bits(), (x[e] * 0.5 + y[e] * y[e]).to_bits(), "p[{e}] of {n}");
            let (xe, ye, we) = (x[e], y[e], w[e]);
            assert_eq!(f[e].to_bits(), ((xe * 2.0 + ye).sqrt() * 3.0).to_bits(), "f[{e}] of {n}");
            assert_eq!(g[e].to_bits(), (1.5 - xe.sqrt() + (ye * ye).sqrt()).to_bits(), "g[{e}] of {n}");
            assert_eq!(h[e], ((xe * 1000.0).sqrt() * 7.0) as i32, "h[{e}] of {n}");
            assert_eq!(d[e].to_bits(), ((we * we + 1.0).sqrt() / 3.0).to_bits(), "d[{e}] of {n}");
        }
    }
}
