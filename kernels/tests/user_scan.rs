//! User scans on the CPU backend: results against sequential plain Rust at
//! edge sizes (around the chunk and run boundaries), an operator that is
//! associative but not commutative, and bad definitions and launches
//! refused with errors that name the kernel and leave outputs untouched.

use kiln_core::{Args, DType, Error};
use kiln_kernels::expr::{Expr, index, var};
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::{Scan, ScanKernel};

mod common;
use common::{stream, values};

const SIZES: [usize; 10] = [1, 2, 255, 256, 257, 1000, 32767, 32768, 32769, 100_003];

/// Maps of {0, 1, 2, 3} to itself, two bits per image: `a` then `b`.
fn compose(a: u32, b: u32) -> u32 {
    (0..4).fold(0, |c, k| c | (((b >> (((a >> (2 * k)) & 3) * 2)) & 3) << (2 * k)))
}

fn composition() -> ScanKernel {
    let (a, b) = (var("a"), var("b"));
    let image = |k: u32| ((b.clone() >> (((a.clone() >> (2 * k)) & 3u32) * 2u32)) & 3u32) << (2 * k);
    Scan::new("compose", DType::U32)
        .input("x", DType::U32)
        .map(var("x") & 0xffu32)
        .scan(image(0) | image(1) | image(2) | image(3))
        .identity(0xe4u32)
        .build()
        .unwrap()
}

/// Sequential inclusive or exclusive scan of `xs` from `id`.
fn sequential<T: Copy>(kind: ScanKind, xs: &[T], id: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = id;
    xs.iter()
        .map(|&x| {
            let before = acc;
            acc = op(acc, x);
            if kind == ScanKind::Inclusive { acc } else { before }
        })
        .collect()
}

#[test]
fn composition_of_maps_keeps_the_order_at_edge_sizes() {
    let s = stream();
    let k = composition();
    assert_eq!(compose(0xe4, 0x1b), 0x1b);
    for n in SIZES {
        let xs: Vec<u32> = values(n, n as u64).iter().map(|&v| v as u32).collect();
        let x = s.upload(&xs).unwrap();
        let mapped: Vec<u32> = xs.iter().map(|v| v & 0xff).collect();
        for kind in ScanKind::ALL {
            let mut y = s.upload(&vec![0xdead_beefu32; n]).unwrap();
            k.scan(&s, kind, Args::new().arg(&x), &mut y).unwrap();
            assert_eq!(y.to_vec().unwrap(), sequential(kind, &mapped, 0xe4, compose), "{kind} n = {n}");
        }
    }
}

#[test]
fn wrapping_sums_with_a_gather_a_scalar_and_the_index() {
    // y = scan of (x * k + r[x % 5] + i), i64 wrapping.
    let k = Scan::new("mixed", DType::I64)
        .input("x", DType::I64)
        .raw("r", DType::I64)
        .scalar("k", DType::I64)
        .local("g", var("r").at(var("x") % 5))
        .map(var("x") * var("k") + var("g") + index().cast(DType::I64))
        .scan(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap();
    let s = stream();
    let r = [i64::MAX, -3, 7, i64::MIN, 11];
    let rb = s.upload(&r).unwrap();
    for n in SIZES {
        let xs: Vec<i64> = values(n, 3 * n as u64).iter().map(|&v| v as i64).collect();
        let x = s.upload(&xs).unwrap();
        let mapped: Vec<i64> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let g = usize::try_from(x.wrapping_rem(5)).ok().and_then(|j| r.get(j)).copied().unwrap_or(0);
                x.wrapping_mul(-9).wrapping_add(g).wrapping_add(i as i64)
            })
            .collect();
        for kind in ScanKind::ALL {
            let mut y = s.upload(&vec![0x5a5a_5a5a_5a5ai64; n]).unwrap();
            k.scan(&s, kind, Args::new().arg(&x).arg(&rb).scalar(-9i64), &mut y).unwrap();
            assert_eq!(y.to_vec().unwrap(), sequential(kind, &mapped, 0, i64::wrapping_add), "{kind} n = {n}");
        }
    }
}

#[test]
fn float_running_sums_within_the_documented_bound() {
    // A running sum of squares in f64 from f32 inputs, and an f32 running minimum.
    let sq = Scan::new("sumsq", DType::F64)
        .input("x", DType::F32)
        .map(var("x").cast(DType::F64) * var("x").cast(DType::F64))
        .scan(var("a") + var("b"))
        .identity(0.0)
        .build()
        .unwrap();
    let min = Scan::new("runmin", DType::F32)
        .input("x", DType::F32)
        .scan(var("a").min(var("b")))
        .identity(f32::INFINITY)
        .build()
        .unwrap();
    let s = stream();
    for n in SIZES {
        // x = (k - 2^23) / 2^24 exactly, so x^2 * 2^48 is an integer and the
        // exact prefix sums are integer sums.
        let ks: Vec<i64> = values(n, 11 + n as u64).iter().map(|&v| (v >> 40) as i64 - (1 << 23)).collect();
        let xs: Vec<f32> = ks.iter().map(|&k| k as f32 / (1u64 << 24) as f32).collect();
        let x = s.upload(&xs).unwrap();
        let mut y = s.upload(&vec![f64::NAN; n]).unwrap();
        sq.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y).unwrap();
        let got = y.to_vec().unwrap();
        let mut fixed = 0i128;
        for (i, &k) in ks.iter().enumerate() {
            fixed += i128::from(k) * i128::from(k);
            let exact = fixed as f64 / (1u64 << 48) as f64;
            // Runs of at most 128 in order, then trees over runs and chunks.
            let bound = f64::EPSILON * (160.0 + (n as f64).log2()) * exact;
            assert!((got[i] - exact).abs() <= bound, "n = {n}, i = {i}: {} vs {exact}", got[i]);
        }
        let mut y = s.upload(&vec![f32::NAN; n]).unwrap();
        min.scan(&s, ScanKind::Exclusive, Args::new().arg(&x), &mut y).unwrap();
        assert_eq!(y.to_vec().unwrap(), sequential(ScanKind::Exclusive, &xs, f32::INFINITY, f32::min), "n = {n}");
    }
}

#[test]
fn bad_definitions_and_launches_are_errors_that_lose_nothing() {
    let s = stream();
    let invalid = |e: Error, words: &[&str]| {
        let m = e.to_string();
        assert!(words.iter().all(|w| m.contains(w)), "{m}");
    };
    let no_identity = Scan::new("noid", DType::I32).input("x", DType::I32).scan(var("a") + var("b")).build();
    invalid(no_identity.unwrap_err(), &["noid", "identity"]);
    let two = Scan::new("two", DType::I32)
        .input("x", DType::I32)
        .input("y", DType::I32)
        .scan(var("a") + var("b"))
        .identity(0)
        .build();
    invalid(two.unwrap_err(), &["two", "map"]);
    let typed =
        Scan::new("typed", DType::I32).input("x", DType::I32).scan(var("a") + Expr::from(1.5)).identity(0).build();
    invalid(typed.unwrap_err(), &["typed", "combining expression"]);
    let uses_index =
        Scan::new("idx", DType::U32).input("x", DType::U32).scan(var("a") + index()).identity(0u32).build();
    invalid(uses_index.unwrap_err(), &["idx", "combining expression", "index()"]);
    // The identity must be neutral on both sides: for `a * b + a`, 1 is on neither.
    let five = Scan::new("five", DType::F32).input("x", DType::F32).scan(var("a") + var("b")).identity(5).build();
    invalid(five.unwrap_err(), &["five", "identity 5", "(a + b)", "not neutral"]);
    let left =
        Scan::new("left", DType::U32).input("x", DType::U32).scan(var("a") * var("b") + var("a")).identity(1).build();
    invalid(left.unwrap_err(), &["left", "identity 1", "a = 1, b = 0 it gives 1, not 0"]);

    let k = composition();
    let x = s.upload(&[1u32, 2, 3]).unwrap();
    let mut short = s.upload(&[7u32; 2]).unwrap();
    invalid(k.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut short).unwrap_err(), &["compose", "output"]);
    assert_eq!(short.to_vec().unwrap(), [7, 7]);
    let mut wrong = s.upload(&[7i32; 3]).unwrap();
    invalid(k.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut wrong).unwrap_err(), &["compose", "i32"]);
    assert_eq!(wrong.to_vec().unwrap(), [7, 7, 7]);
    let xf = s.upload(&[1.0f32; 3]).unwrap();
    let mut y = s.upload(&[7u32; 3]).unwrap();
    invalid(k.scan(&s, ScanKind::Inclusive, Args::new().arg(&xf), &mut y).unwrap_err(), &["compose", "`x`", "f32"]);
    assert_eq!(y.to_vec().unwrap(), [7, 7, 7]);
    let empty = s.upload::<u32>(&[]).unwrap();
    let mut out = s.alloc::<u32>(0).unwrap();
    k.scan(&s, ScanKind::Exclusive, Args::new().arg(&empty), &mut out).unwrap();
}

/// Scans of `op` over `map` of a random i32 input, against a sequential
/// fold, at sizes around the CPU's chunks of 65536.
fn one_operation(
    name: &str,
    map: Expr,
    combine: Expr,
    id: i32,
    f: impl Fn(i32, i32) -> i32,
    mapped: impl Fn(i32) -> i32,
) {
    let s = stream();
    let k = Scan::new(name, DType::I32).input("x", DType::I32).map(map).scan(combine).identity(id).build().unwrap();
    for n in [65535, 65536, 65537, 3 * 65536 + 5] {
        let xs: Vec<i32> = values(n, 5 * n as u64).iter().map(|&v| v as i32).collect();
        let want: Vec<i32> = xs.iter().map(|&x| mapped(x)).collect();
        let x = s.upload(&xs).unwrap();
        for kind in ScanKind::ALL {
            let mut y = s.upload(&vec![0x5a5a_5a5a; n]).unwrap();
            k.scan(&s, kind, Args::new().arg(&x), &mut y).unwrap();
            let (got, want) = (y.to_vec().unwrap(), sequential(kind, &want, id, &f));
            let wrong = got.iter().zip(&want).position(|(g, w)| g != w);
            assert!(wrong.is_none(), "{name}: {kind} n = {n}: first wrong at {wrong:?}");
        }
    }
}

#[test]
fn single_operations_at_chunk_edges() {
    let (a, b) = (var("a"), var("b"));
    // Read in place, and mapped first; either order of `a` and `b`.
    let x = || var("x");
    let odd = || var("x") * 2 + 1;
    let o = |x: i32| x.wrapping_mul(2).wrapping_add(1);
    one_operation("add", x(), a.clone() + b.clone(), 0, i32::wrapping_add, |x| x);
    one_operation("add_mapped", odd(), b.clone() + a.clone(), 0, i32::wrapping_add, o);
    one_operation("mul", odd(), a.clone() * b.clone(), 1, i32::wrapping_mul, o);
    one_operation("min", x(), a.clone().min(b.clone()), i32::MAX, i32::min, |x| x);
    one_operation("max", odd(), b.clone().max(a.clone()), i32::MIN, i32::max, o);
    one_operation("and", odd(), a.clone() & b.clone(), -1, |p, q| p & q, o);
    one_operation("or", x() & 0xff_ffff, a.clone() | b.clone(), 0, |p, q| p | q, |x| x & 0xff_ffff);
    one_operation("xor", x(), a.clone() ^ b.clone(), 0, |p, q| p ^ q, |x| x);
    // Not one operation, or not from its neutral element: the interpreter.
    one_operation("max_twice", x(), a.clone().max(b.clone()).max(a.clone()), i32::MIN, i32::max, |x| x);
    one_operation("max_from_zero", x() & 0xffff, a.max(b), 0, i32::max, |x| x & 0xffff);
}

#[test]
fn f32_sums_in_place_and_mapped_are_the_f64_prefix_rounded_once() {
    let s = stream();
    let plain = Scan::new("sum", DType::F32).input("x", DType::F32).scan(var("a") + var("b")).identity(0.0f32).build();
    let halved = Scan::new("half_sum", DType::F32)
        .input("x", DType::F32)
        .map(var("x") * 0.5f32)
        .scan(var("a") + var("b"))
        .identity(0.0f32)
        .build();
    for n in [1, 65535, 65537, 2 * 65536 + 9] {
        let xs: Vec<f32> =
            values(n, 7 + n as u64).iter().map(|&v| (v >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect();
        let x = s.upload(&xs).unwrap();
        for (k, scale) in [(plain.as_ref().unwrap(), 1.0f64), (halved.as_ref().unwrap(), 0.5)] {
            for kind in ScanKind::ALL {
                let mut y = s.upload(&vec![f32::NAN; n]).unwrap();
                k.scan(&s, kind, Args::new().arg(&x), &mut y).unwrap();
                let got = y.to_vec().unwrap();
                let mut acc = 0.0f64;
                for (i, &v) in xs.iter().enumerate() {
                    let before = acc;
                    acc += v as f64 * scale;
                    let want = if kind == ScanKind::Inclusive { acc } else { before };
                    let step = (want as f32).abs().max(f32::MIN_POSITIVE) * f32::EPSILON;
                    assert!(
                        (got[i] as f64 - want).abs() <= step as f64,
                        "{kind} n = {n}, i = {i}: {} vs {want}",
                        got[i]
                    );
                }
            }
        }
    }
}
