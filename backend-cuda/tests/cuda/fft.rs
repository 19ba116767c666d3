//! cuFFT, the devices' vendor FFT, at the level of `Stream::vendor_fft`: its
//! work area is a buffer of kiln's, counted in the memory stats and held to
//! their limit, and a refused call leaves the output as it was.

use kiln_core::{Complex32, DType, Device, Error, FftDirection, FftKind, FftLayout, FftSide, MemoryLimit, RawDevice};
use kiln_cuda::Cuda;
use rand::Rng;

use super::common::{gpu, rng};

/// Device 0 with cuFFT, or `None` (with a note) where there is no GPU or no libcufft.
fn fft_gpu() -> Option<Device<Cuda>> {
    let dev = gpu()?;
    match dev.raw().vendor_fft() {
        Some(v) => {
            assert_eq!(v.name, "cuFFT");
            Some(dev)
        }
        None => {
            eprintln!("skipped: no cuFFT here (libcufft missing, or kiln-cuda built without `cufft`)");
            None
        }
    }
}

/// One forward transform of `n` complex values (a prime length: cuFFT's
/// Bluestein path, which always needs scratch).
fn layout(n: usize) -> FftLayout {
    let side = FftSide { stride: 1, dist: n, embed: [n, 1, 1] };
    FftLayout {
        kind: FftKind::C2C,
        precision: DType::F32,
        rank: 1,
        dims: [n, 1, 1],
        batch: 1,
        input: side,
        output: side,
    }
}

#[test]
fn the_work_area_is_counted_and_held_to_the_limit() {
    let Some(dev) = fft_gpu() else { return };
    const N: usize = 1_000_003;
    let layout = layout(N);
    let work = dev.raw().fft_work_size(&layout).unwrap() as u64;
    assert!(work > 0, "a Bluestein plan of {N} needs scratch");
    let mut r = rng(46);
    let x: Vec<Complex32> =
        (0..N).map(|_| Complex32::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))).collect();
    let s = dev.stream();
    let input = s.upload(&x).unwrap();
    const POISON: Complex32 = Complex32::new(-7777.25, 3.5);
    let mut output = s.upload(&vec![POISON; N]).unwrap();
    s.synchronize().unwrap();

    // Past the limit: refused by name, the output untouched.
    let used = dev.memory_stats().unwrap().used;
    dev.set_memory_limit(Some(MemoryLimit::Bytes(used + work / 2))).unwrap();
    match s.vendor_fft(&input, &mut output, &layout, FftDirection::Forward) {
        Err(Error::OutOfMemory { what, requested, .. }) => {
            assert!(what.contains("work area"), "{what}");
            assert_eq!(requested, work);
        }
        other => panic!("expected OutOfMemory for the work area, got {other:?}"),
    }
    assert!(output.to_vec().unwrap().iter().all(|&v| v == POISON), "a refused call wrote its output");

    // Within it: the peak counts the work area, which is gone afterwards.
    dev.set_memory_limit(Some(MemoryLimit::Bytes(used + work))).unwrap();
    dev.reset_peak_memory();
    s.vendor_fft(&input, &mut output, &layout, FftDirection::Forward).unwrap();
    s.synchronize().unwrap();
    let stats = dev.memory_stats().unwrap();
    assert_eq!(stats.used, used, "{stats:?}");
    assert_eq!(stats.peak, used + work, "{stats:?}");
    dev.set_memory_limit(None).unwrap();

    // And it computed the transform: bin 0 is the sum, bin 1 one twiddled sum.
    let y = output.to_vec().unwrap();
    for k in [0usize, 1, N - 1] {
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for (j, v) in x.iter().enumerate() {
            let t = -2.0 * std::f64::consts::PI * ((j as u128 * k as u128) % N as u128) as f64 / N as f64;
            re += v.re as f64 * t.cos() - v.im as f64 * t.sin();
            im += v.re as f64 * t.sin() + v.im as f64 * t.cos();
        }
        // 16 log2(n) eps ||x||_2, the conformance bound.
        let norm = x.iter().map(|v| (v.re as f64).powi(2) + (v.im as f64).powi(2)).sum::<f64>().sqrt();
        let bound = 16.0 * (N as f64).log2() * f32::EPSILON as f64 * norm;
        let err = ((y[k].re as f64 - re).powi(2) + (y[k].im as f64 - im).powi(2)).sqrt();
        assert!(err <= bound, "bin {k}: {} vs ({re}, {im}), error {err} > {bound}", y[k]);
    }
}
