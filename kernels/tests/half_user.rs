//! User kernels and Arrays on f16 and bf16: values are computed in f32 and
//! each operation's result rounded once to its 16-bit dtype, which equals
//! the correctly rounded 16-bit result; reductions accumulate in f32.

use kiln_core::{Args, DType, Device, Language, bf16, f16};
use kiln_cpu::Cpu;
use kiln_kernels::array::Array;
use kiln_kernels::expr::{Expr, Ty, var};
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::{Elementwise, Reduction, Scan};
use rand::{Rng, SeedableRng};

fn bits16(n: usize, seed: u64) -> Vec<u16> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// `z = x * y + 1.5`, each operation rounded: on f16 and bf16 every bit
/// pattern of x and y, NaN and infinities included.
#[test]
fn elementwise_rounds_each_operation_once() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let t = Ty::param("T");
    let k = Elementwise::new("mul_add_const")
        .input("x", t.clone())
        .input("y", t.clone())
        .output("z", t)
        .set("z", var("x") * var("y") + 1.5)
        .build()
        .unwrap();
    let n = 5003;
    let (xb, yb) = (bits16(n, 1), bits16(n, 2));
    macro_rules! check {
        ($t:ty) => {{
            let x: Vec<$t> = xb.iter().map(|&b| <$t>::from_bits(b)).collect();
            let y: Vec<$t> = yb.iter().map(|&b| <$t>::from_bits(b)).collect();
            let (dx, dy) = (s.upload(&x).unwrap(), s.upload(&y).unwrap());
            let mut z = s.upload(&vec![<$t>::from_bits(0x7c01); n]).unwrap();
            k.launch(&s, Args::new().arg(&dx).arg(&dy).arg(&mut z)).unwrap();
            let got = z.to_vec().unwrap();
            for i in 0..n {
                let p = <$t>::from_f64(x[i].to_f64() * y[i].to_f64());
                let want = <$t>::from_f64(p.to_f64() + 1.5);
                let same = got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan());
                assert!(same, "{} at {i}: {} * {} + 1.5 = {} (got {})", stringify!($t), x[i], y[i], want, got[i]);
            }
        }};
    }
    check!(f16);
    check!(bf16);
}

/// A 16-bit scalar, a gather from a 16-bit raw input, casts both ways.
#[test]
fn scalars_gathers_and_casts() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let k = Elementwise::new("gather_scale")
        .scalar("a", DType::BF16)
        .raw("table", DType::BF16)
        .input("i", DType::I32)
        .output("y", DType::F32)
        .output("h", DType::F16)
        .set("y", (var("a") * var("table").at(var("i"))).cast(DType::F32))
        .set("h", var("i").cast(DType::F16))
        .build()
        .unwrap();
    let table: Vec<bf16> = [0.5f32, -3.0, 1e30, 7.0].map(bf16::from_f32).to_vec();
    let idx = [0i32, 1, 2, 3, -1, 4, 70000];
    let (dt, di) = (s.upload(&table).unwrap(), s.upload(&idx).unwrap());
    let mut y = s.upload(&[f32::NAN; 7]).unwrap();
    let mut h = s.upload(&[f16::NAN; 7]).unwrap();
    let a = bf16::from_f32(3.0);
    k.launch(&s, Args::new().arg(a).arg(&dt).arg(&di).arg(&mut y).arg(&mut h)).unwrap();
    // 3 * 1e30 rounds in bf16; outside the table the gather reads 0.
    let big = bf16::from_f64(3.0 * bf16::from_f32(1e30).to_f64()).to_f32();
    assert_eq!(y.to_vec().unwrap(), [1.5, -9.0, big, 21.0, 0.0, 0.0, 0.0]);
    let want: Vec<f16> = idx.iter().map(|&i| f16::from_f64(f64::from(i))).collect();
    assert_eq!(h.to_vec().unwrap(), want);
    assert!(h.to_vec().unwrap()[6].is_infinite()); // 70000 is past f16's range
}

/// A sum of squares accumulated in f32, rounded to f16 in the post-map;
/// a 16-bit accumulator is refused with the way to write it.
#[test]
fn reductions_accumulate_in_f32() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let sumsq = Reduction::new("sumsq_half", DType::F32)
        .input("x", DType::F16)
        .map(var("x").cast(DType::F32) * var("x").cast(DType::F32))
        .reduce(var("a") + var("b"))
        .identity(0)
        .post(DType::F16, var("a").cast(DType::F16))
        .build()
        .unwrap();
    let x = s.upload(&vec![f16::from_f32(0.5); 30_000]).unwrap();
    assert_eq!(sumsq.reduce::<_, f16>(&s, Args::new().arg(&x)).unwrap(), f16::from_f32(7500.0));
    let mut rows = s.upload(&[f16::NAN; 3]).unwrap();
    sumsq.reduce_axis(&s, Args::new().arg(&x), 3, 10_000, 1, &mut rows).unwrap();
    assert_eq!(rows.to_vec().unwrap(), [f16::from_f32(2500.0); 3]);
    let err = Reduction::new("sum_in_half", DType::F16)
        .input("x", DType::F16)
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("accumulate 16-bit floats in f32"), "{err}");
}

#[test]
fn scans_of_16_bit_inputs() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let cumsum = Scan::new("cumsum_bf16", DType::F32)
        .input("x", DType::BF16)
        .map(var("x").cast(DType::F32))
        .scan(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap();
    let x = s.upload(&vec![bf16::ONE; 3000]).unwrap();
    let mut y = s.upload(&vec![f32::NAN; 3000]).unwrap();
    cumsum.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), (1..=3000).map(|i| i as f32).collect::<Vec<_>>());
}

/// Array arithmetic fuses and rounds per operation; its folds accumulate in f32.
#[test]
fn arrays_of_halves() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let n = 4099;
    let av: Vec<f16> = (0..n).map(|i| f16::from_f32((i % 37) as f32 * 0.25 - 4.0)).collect();
    let bv: Vec<f16> = (0..n).map(|i| f16::from_f32((i % 11) as f32 * 0.125 + 0.5)).collect();
    let a = Array::from_vec(&s, &[n], &av).unwrap();
    let b = Array::from_vec(&s, &[n], &bv).unwrap();
    let c = ((&a + &b) * &a).eval().unwrap();
    let want: Vec<f16> = (0..n)
        .map(|i| f16::from_f64(f16::from_f64(av[i].to_f64() + bv[i].to_f64()).to_f64() * av[i].to_f64()))
        .collect();
    assert_eq!(c.to_vec().unwrap(), want);
    let total: f64 = want.iter().map(|v| v.to_f64()).sum();
    assert_eq!(c.sum().unwrap(), f16::from_f64(total));
    let max = want.iter().copied().fold(f16::NEG_INFINITY, f16::max);
    assert_eq!(c.max().unwrap(), max);
    let bf: Vec<bf16> = av.iter().map(|v| bf16::from_f32(v.to_f32())).collect();
    let ab = Array::from_vec(&s, &[n], &bf).unwrap();
    let mean: f64 = bf.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
    assert_eq!(ab.mean().unwrap(), bf16::from_f64(mean));
}

/// The CUDA and WGSL texts of a 16-bit kernel store the 16-bit types and compute in f32.
#[test]
fn generated_sources_store_halves_and_compute_in_f32() {
    let k = Elementwise::new("scale")
        .input("x", DType::F16)
        .output("y", DType::F16)
        .set("y", var("x") * Expr::constant(f16::from_f32(3.0)))
        .build()
        .unwrap();
    let cuda = k.programs(Language::Cuda, kiln_core::IndexWidth::U64, &[]).unwrap();
    let src = cuda[0].cuda_source().unwrap();
    assert!(src.contains("const kiln_half* __restrict__ a0") && src.contains("kx_round_f16("), "{src}");
    let wgsl = k.programs(Language::Wgsl, kiln_core::IndexWidth::U32, &[]).unwrap();
    let w = wgsl[0].wgsl_source().unwrap();
    assert!(w.starts_with("enable f16;") && w.contains("f32(f16("), "{w}");
}
