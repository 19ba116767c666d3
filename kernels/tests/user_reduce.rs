//! User reductions on the CPU backend: results against plain Rust at edge
//! sizes and dtypes, and bad definitions and launches refused with errors
//! that name the kernel and leave outputs untouched.

use kiln_core::{Args, DType, Error};
use kiln_kernels::expr::{Expr, Ty, index, len, var};
use kiln_kernels::user::Reduction;

mod common;
use common::{stream, values};

#[test]
fn wrapping_sums_and_extremes_of_64_bit_integers_at_edge_sizes() {
    let s = stream();
    let sum = Reduction::new("wsum", DType::I64)
        .input("x", DType::I64)
        .map(var("x") * 3 + index().cast(DType::I64))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap();
    let max = Reduction::new("umax", DType::U64)
        .input("x", DType::U64)
        .map(var("x") >> 1)
        .reduce(var("a").max(var("b")))
        .identity(0)
        .build()
        .unwrap();
    for n in [0usize, 1, 2047, 2048, 2049, 100_003] {
        let raw = values(n, n as u64);
        let xs: Vec<i64> = raw.iter().map(|&v| v as i64).collect();
        let want =
            xs.iter().enumerate().fold(0i64, |a, (i, &x)| a.wrapping_add(x.wrapping_mul(3).wrapping_add(i as i64)));
        let x = s.upload(&xs).unwrap();
        assert_eq!(sum.reduce::<_, i64>(&s, Args::new().arg(&x)).unwrap(), want, "n = {n}");
        let x = s.upload(&raw).unwrap();
        let want = raw.iter().map(|v| v >> 1).max().unwrap_or(0);
        assert_eq!(max.reduce::<_, u64>(&s, Args::new().arg(&x)).unwrap(), want, "n = {n}");
    }
}

#[test]
fn axes_with_raw_gathers_scalars_and_a_post_map() {
    // out = scale * sum of r[x] over a line, r read at computed indices.
    let k = Reduction::new("gathered", DType::F64)
        .input("x", DType::I32)
        .raw("r", DType::F64)
        .scalar("scale", DType::F64)
        .map(var("r").at(var("x")))
        .reduce(var("a") + var("b"))
        .identity(0)
        .post(DType::F64, var("a") * var("scale"))
        .build()
        .unwrap();
    let s = stream();
    let r = [0.5f64, 1.5, 2.5, 4.0];
    let rb = s.upload(&r).unwrap();
    for (rows, cols) in [(3usize, 5usize), (1, 4097), (4097, 1), (70, 70), (0, 3), (3, 0)] {
        let xs: Vec<i32> = values(rows * cols, 7).iter().map(|&v| (v % 7) as i32 - 1).collect();
        let at = |i: usize| usize::try_from(xs[i]).ok().and_then(|k| r.get(k)).copied().unwrap_or(0.0);
        let xb = s.upload(&xs).unwrap();
        let args = || Args::new().arg(&xb).arg(&rb).scalar(2.0f64);
        let by_row: Vec<f64> = (0..rows).map(|i| 2.0 * (0..cols).map(|j| at(i * cols + j)).sum::<f64>()).collect();
        let mut out = s.upload(&vec![f64::NAN; rows]).unwrap();
        k.reduce_axis(&s, args(), rows, cols, 1, &mut out).unwrap();
        assert_eq!(out.to_vec().unwrap(), by_row, "{rows} x {cols} along axis 1");
        let by_col: Vec<f64> = (0..cols).map(|j| 2.0 * (0..rows).map(|i| at(i * cols + j)).sum::<f64>()).collect();
        let mut out = s.upload(&vec![f64::NAN; cols]).unwrap();
        k.reduce_axis(&s, args(), rows, cols, 0, &mut out).unwrap();
        assert_eq!(out.to_vec().unwrap(), by_col, "{rows} x {cols} along axis 0");
    }
}

#[test]
fn the_fold_of_nothing_is_the_post_map_of_the_identity() {
    let mean = Reduction::new("mean", Ty::param("T"))
        .input("x", Ty::param("T"))
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .post(Ty::param("T"), var("a") / len().cast(Ty::param("T")))
        .build()
        .unwrap();
    let s = stream();
    let empty = s.alloc::<f32>(0).unwrap();
    assert!(mean.reduce::<_, f32>(&s, Args::new().arg(&empty)).unwrap().is_nan());
    let x = s.upload(&[1.0f32, 2.0, 6.0]).unwrap();
    assert_eq!(mean.reduce::<_, f32>(&s, Args::new().arg(&x)).unwrap(), 3.0);
}

fn invalid(r: kiln_core::Result<impl std::fmt::Debug>, words: &[&str]) {
    match r {
        Err(e @ (Error::InvalidArgument { .. } | Error::LengthMismatch { .. })) => {
            let text = e.to_string();
            for w in words {
                assert!(text.contains(w), "{text:?} does not name {w:?}");
            }
        }
        other => panic!("expected an invalid-argument error naming {words:?}, got {other:?}"),
    }
}

#[test]
fn bad_definitions_are_refused_naming_the_part() {
    let base = || Reduction::new("r", DType::F32).input("x", DType::F32);
    let full = || base().map(var("x")).reduce(var("a") + var("b")).identity(0);
    invalid(base().reduce(var("a") + var("b")).identity(0).build(), &["`r`", "no map"]);
    invalid(base().map(var("x")).identity(0).build(), &["`r`", "combining"]);
    invalid(base().map(var("x")).reduce(var("a") + var("b")).build(), &["`r`", "identity"]);
    invalid(full().identity(var("x")).build(), &["identity"]);
    invalid(full().reduce(var("a") + index().cast(DType::F32)).build(), &["combining", "index()"]);
    invalid(full().post(DType::F32, var("x")).build(), &["post-map"]);
    invalid(full().map(var("x").cast(DType::I32)).build(), &["map", "i32"]);
    invalid(
        Reduction::new("r", DType::F32)
            .scalar("a", DType::F32)
            .input("x", DType::F32)
            .map(var("x"))
            .reduce(var("a") + var("b"))
            .identity(0)
            .post(DType::F32, var("a"))
            .build(),
        &["named `a`"],
    );
    invalid(
        Reduction::new("r", DType::F32).raw("x", DType::F32).map(Expr::from(1.0)).reduce(var("a")).identity(0).build(),
        &["no input"],
    );
}

#[test]
fn bad_launches_are_refused_and_touch_nothing() {
    let k = Reduction::new("sum", DType::F32)
        .input("x", DType::F32)
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap();
    let s = stream();
    let x = s.upload(&[1.0f32; 6]).unwrap();
    let mut two = s.upload(&[7.0f32; 2]).unwrap();
    invalid(k.reduce_into(&s, Args::new().arg(&x), &mut two), &["`sum`", "output"]);
    assert_eq!(two.to_vec().unwrap(), [7.0; 2]);
    let mut wrong = s.upload(&[7.0f64]).unwrap();
    invalid(k.reduce_into(&s, Args::new().arg(&x), &mut wrong), &["`sum`", "f64"]);
    assert_eq!(wrong.to_vec().unwrap(), [7.0]);
    let mut out = s.upload(&[7.0f32; 3]).unwrap();
    invalid(k.reduce_axis(&s, Args::new().arg(&x), 2, 4, 1, &mut out), &["2 x 4"]);
    invalid(k.reduce_axis(&s, Args::new().arg(&x), 2, 3, 2, &mut out), &["axis"]);
    invalid(k.reduce_axis(&s, Args::new().arg(&x), 3, 2, 0, &mut out), &["output"]);
    assert_eq!(out.to_vec().unwrap(), [7.0; 3]);
    let ints = s.upload(&[1i32, 2]).unwrap();
    invalid(k.reduce::<_, f32>(&s, Args::new().arg(&ints)), &["`sum`", "`x`"]);
}

#[test]
fn single_operations_over_several_ranges() {
    // Each operation read in place and mapped, from its neutral element
    // and (max from zero, a sum written twice) not: every way the CPU runs.
    let s = stream();
    let x = || var("x");
    let odd = || var("x") * 2 + 1;
    type Op = fn(i32, i32) -> i32;
    type Map = fn(i32) -> i32;
    let (same, o, low): (Map, Map, Map) = (|v| v, |v| v.wrapping_mul(2).wrapping_add(1), |v| v & 0xffff);
    let cases: [(&str, Expr, Expr, i32, Op, Map); 9] = [
        ("add", x(), var("a") + var("b"), 0, i32::wrapping_add, same),
        ("add_mapped", odd(), var("b") + var("a"), 0, i32::wrapping_add, o),
        ("mul", odd(), var("a") * var("b"), 1, i32::wrapping_mul, o),
        ("min", x(), var("a").min(var("b")), i32::MAX, i32::min, same),
        ("max", odd(), var("b").max(var("a")), i32::MIN, i32::max, o),
        ("and", odd(), var("a") & var("b"), -1, |p, q| p & q, o),
        ("xor", x(), var("a") ^ var("b"), 0, |p, q| p ^ q, same),
        ("max_from_zero", x() & 0xffff, var("a").max(var("b")), 0, i32::max, low),
        ("add_add_zero", x(), var("a") + var("b") + 0, 0, i32::wrapping_add, same),
    ];
    for (name, map, combine, id, f, m) in cases {
        let k = Reduction::new(name, DType::I32)
            .input("x", DType::I32)
            .map(map)
            .reduce(combine)
            .identity(id)
            .build()
            .unwrap();
        for n in [1usize, 32767, 32768, 32769, 5 * 32768 + 2049] {
            let xs: Vec<i32> = values(n, 9 * n as u64).iter().map(|&v| v as i32).collect();
            let want = xs.iter().map(|&v| m(v)).fold(id, f);
            let x = s.upload(&xs).unwrap();
            assert_eq!(k.reduce::<_, i32>(&s, Args::new().arg(&x)).unwrap(), want, "{name}, n = {n}");
        }
        // Long rows fold the same way, each row in its own ranges.
        for (rows, cols) in [(4usize, 2048usize), (3, 32769), (2, 5 * 32768 + 2049)] {
            let xs: Vec<i32> = values(rows * cols, cols as u64).iter().map(|&v| v as i32).collect();
            let want: Vec<i32> = xs.chunks(cols).map(|row| row.iter().map(|&v| m(v)).fold(id, f)).collect();
            let x = s.upload(&xs).unwrap();
            let mut out = s.upload(&vec![0x5EED_i32; rows]).unwrap();
            k.reduce_axis(&s, Args::new().arg(&x), rows, cols, 1, &mut out).unwrap();
            assert_eq!(out.to_vec().unwrap(), want, "{name}, {rows} x {cols} along axis 1");
        }
    }
    // f32 sums, in place and mapped: the f64 sum rounded once.
    let plain = Reduction::new("fsum", DType::F32)
        .input("x", DType::F32)
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(0.0f32);
    let squares = Reduction::new("fsq", DType::F32)
        .input("x", DType::F32)
        .map(var("x") * var("x"))
        .reduce(var("a") + var("b"))
        .identity(0.0f32);
    let (plain, squares) = (plain.build().unwrap(), squares.build().unwrap());
    for n in [1usize, 32769, 3 * 32768 + 7] {
        // Multiples of 2^-12 in (-0.5, 0.5): squares are exact in f32 and
        // every partial sum exact in f64.
        let xs: Vec<f32> = values(n, n as u64).iter().map(|&v| ((v >> 52) as f32 - 2048.0) / 4096.0).collect();
        let x = s.upload(&xs).unwrap();
        let sum: f64 = xs.iter().map(|&v| v as f64).sum();
        let sq: f64 = xs.iter().map(|&v| v as f64 * v as f64).sum();
        assert_eq!(plain.reduce::<_, f32>(&s, Args::new().arg(&x)).unwrap(), sum as f32, "n = {n}");
        assert_eq!(squares.reduce::<_, f32>(&s, Args::new().arg(&x)).unwrap(), sq as f32, "n = {n}");
        // As two rows, each its own f64 sum rounded once.
        let cols = n / 2;
        if cols > 0 {
            let want: Vec<f32> =
                xs[..2 * cols].chunks(cols).map(|r| r.iter().map(|&v| v as f64).sum::<f64>() as f32).collect();
            let mut out = s.upload(&[f32::NAN; 2]).unwrap();
            let x = s.upload(&xs[..2 * cols]).unwrap();
            plain.reduce_axis(&s, Args::new().arg(&x), 2, cols, 1, &mut out).unwrap();
            assert_eq!(out.to_vec().unwrap(), want, "2 x {cols} along axis 1");
        }
    }
}

#[test]
fn an_identity_that_is_not_neutral_is_refused_naming_it_and_the_combining_expression() {
    let sum = |id: Expr| {
        Reduction::new("r", DType::F32).input("x", DType::F32).map(var("x")).reduce(var("a") + var("b")).identity(id)
    };
    invalid(sum(Expr::from(5)).build(), &["`r`", "identity 5", "(a + b)", "not neutral"]);
    invalid(sum(Expr::from(f64::NAN)).build(), &["`r`", "identity NaN", "(a + b)"]);
    invalid(sum(Expr::from(0.5)).build(), &["identity 0.5", "(a + b)"]);
    // NaN is refused even where kiln's max would leave it out.
    let max = |id: Expr| {
        Reduction::new("m", DType::F64).input("x", DType::F64).map(var("x")).reduce(var("a").max(var("b"))).identity(id)
    };
    invalid(max(Expr::from(f64::NAN)).build(), &["`m`", "NaN", "max(a, b)"]);
    invalid(max(Expr::from(1.0)).build(), &["identity 1.0", "max(a, b)"]);
    // Neutral on one side only: `a - b` from 0.
    let sub = Reduction::new("d", DType::I32).input("x", DType::I32).map(var("x")).reduce(var("a") - var("b"));
    invalid(sub.identity(0).build(), &["`d`", "identity 0", "(a - b)", "a = 0, b = 1 it gives -1, not 1"]);
    // Neutral identities of each standard operation, and -inf for max, build.
    let id = |combine: Expr, id: Expr| {
        Reduction::new("ok", DType::F32).input("x", DType::F32).map(var("x")).reduce(combine).identity(id).build()
    };
    id(var("a") + var("b"), Expr::from(0)).unwrap();
    id(var("a") * var("b"), Expr::from(1)).unwrap();
    id(var("a").max(var("b")), Expr::from(f32::NEG_INFINITY)).unwrap();
    id(var("a").min(var("b")), Expr::from(f32::INFINITY)).unwrap();
}

#[test]
fn a_placeholder_identity_is_checked_when_a_launch_binds_it_even_of_nothing() {
    let k = Reduction::new("r", Ty::param("T"))
        .input("x", Ty::param("T"))
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(5)
        .build()
        .unwrap();
    let s = stream();
    let empty = s.alloc::<f32>(0).unwrap();
    invalid(k.reduce::<_, f32>(&s, Args::new().arg(&empty)), &["`r`", "identity 5", "(a + b)"]);
    let x = s.upload(&[1u32, 1, 1]).unwrap();
    invalid(k.reduce::<_, u32>(&s, Args::new().arg(&x)), &["identity 5", "a = 5, b = 0 it gives 5, not 0"]);
}

#[test]
fn an_identity_neutral_only_at_the_samples_is_left_out_of_every_fold() {
    // 0 is neutral for max at the check's non-negative samples, not at
    // negative values: each fold is the max of the values other than 0,
    // however often a backend's plan folds the identity in.
    let k = Reduction::new("max0", DType::I32)
        .input("x", DType::I32)
        .map(var("x"))
        .reduce(var("a").max(var("b")))
        .identity(0)
        .build()
        .unwrap();
    let s = stream();
    let xs: Vec<i32> = (0..3 * 2048).map(|i| -3 - (i % 17)).collect();
    let x = s.upload(&xs).unwrap();
    assert_eq!(k.reduce::<_, i32>(&s, Args::new().arg(&x)).unwrap(), -3);
    let mut rows = s.upload(&[7; 3]).unwrap();
    k.reduce_axis(&s, Args::new().arg(&x), 3, 2048, 1, &mut rows).unwrap();
    assert_eq!(rows.to_vec().unwrap(), [-3; 3]);
    let mut cols = s.upload(&[7; 2048]).unwrap();
    k.reduce_axis(&s, Args::new().arg(&x), 3, 2048, 0, &mut cols).unwrap();
    let want: Vec<i32> = (0..2048).map(|c| (0..3).map(|r| xs[r * 2048 + c]).max().unwrap_or(0)).collect();
    assert_eq!(cols.to_vec().unwrap(), want);
}
