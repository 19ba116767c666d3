//! cuBLAS, the devices' vendor GEMM: products against an f64 host reference
//! at many shapes (non-square, k = 1, operands at offsets inside larger
//! buffers), on several streams and threads at once, its refusals, and its
//! handle released with the device.

use kiln_core::{
    bf16, f16, Buffer, DType, Device, Element, Error, Gemm, GemmOperand, MatmulShape, MatrixLayout, Precision,
    Priority, RawDevice, Stream,
};
use kiln_cuda::Cuda;
use rand::Rng;

use super::common::{gpu, rng};

/// Device 0 with cuBLAS, or `None` (with a note) where there is no GPU or no libcublas.
fn blas_gpu() -> Option<Device<Cuda>> {
    let dev = gpu()?;
    match dev.raw().vendor_gemm() {
        Some(v) => {
            assert_eq!(v.name, "cuBLAS");
            Some(dev)
        }
        None if cfg!(feature = "cublas") => {
            eprintln!("skipped: libcublas is not installed here");
            None
        }
        None => {
            eprintln!("skipped: kiln-cuda built without its `cublas` feature");
            None
        }
    }
}

/// (m, n, k): tiny, a row, a column, k = 1 (an outer product), primes,
/// tall, wide, and one large enough for cuBLAS's tiled kernels.
const SHAPES: [(usize, usize, usize); 11] = [
    (1, 1, 1),
    (1, 37, 5),
    (37, 1, 5),
    (64, 64, 1),
    (129, 3, 1),
    (65, 17, 129),
    (130, 129, 9),
    (257, 3, 1000),
    (3, 300, 64),
    (512, 256, 384),
    (1, 1, 4097),
];

/// Elements before each operand inside its buffer, and after it, so that the
/// product must use the offsets and stay inside its range.
const PAD: usize = 3;

/// Enqueue `c = a . b` on `stream` with the matrices `PAD` elements into their buffers.
fn gemm<T: Element, O: Element>(
    dev: &Device<Cuda>,
    stream: &Stream<Cuda>,
    a: &Buffer<Cuda, T>,
    b: &Buffer<Cuda, T>,
    c: &Buffer<Cuda, O>,
    (m, n, k): (usize, usize, usize),
) -> kiln_core::Result<()> {
    gemm_shaped(dev, stream, a, b, c, MatmulShape::new(m, n, k))
}

/// [`gemm`] of any shape, layout and precision.
fn gemm_shaped<T: Element, O: Element>(
    dev: &Device<Cuda>,
    stream: &Stream<Cuda>,
    a: &Buffer<Cuda, T>,
    b: &Buffer<Cuda, T>,
    c: &Buffer<Cuda, O>,
    shape: MatmulShape,
) -> kiln_core::Result<()> {
    let call = Gemm::<Cuda> {
        a: GemmOperand { buffer: a.raw(), offset: PAD * size_of::<T>() },
        b: GemmOperand { buffer: b.raw(), offset: PAD * size_of::<T>() },
        c: GemmOperand { buffer: c.raw(), offset: PAD * size_of::<O>() },
        shape,
        input: T::DTYPE,
        output: O::DTYPE,
        scaled: None,
    };
    call.check()?;
    // SAFETY: every buffer is `dev`'s and `check` passed; nothing else uses
    // them until the caller has read `c`, which waits for the stream.
    unsafe { dev.raw().gemm(stream.raw(), &call) }
}

/// `len` values of `T` from [-1, 1) with `PAD` poison values on each side.
fn padded<T: Copy>(seed: u64, len: usize, from: fn(f32) -> T, poison: T) -> Vec<T> {
    let mut r = rng(seed);
    let mut v = vec![poison; PAD];
    v.extend((0..len).map(|_| from(r.random_range(-1.0f32..1.0))));
    v.extend([poison; PAD]);
    v
}

/// Element (i, j) of an `rows x cols` operand laid out as `l`, product `z`.
fn at(l: &MatrixLayout, z: usize, i: usize, j: usize) -> usize {
    z * l.stride + if l.transposed { j * l.ld + i } else { i * l.ld + j }
}

/// The layouts every shape is tried with: dense; a transposed and two
/// products sharing b; b transposed, every leading dimension padded and
/// three products spaced out.
fn layouts(m: usize, n: usize, k: usize) -> [MatmulShape; 3] {
    let s = MatmulShape::new(m, n, k);
    let padded = |rows: usize, cols: usize, transposed: bool, extra: usize| {
        let d = MatrixLayout::dense(rows, cols, transposed);
        let (r, _) = d.stored(rows, cols);
        MatrixLayout { ld: d.ld + extra, stride: r * (d.ld + extra) + 5, ..d }
    };
    [
        s,
        s.batch(2).transpose_a().broadcast_b(),
        s.batch(3).layouts(padded(m, k, false, 3), padded(k, n, true, 2), padded(m, n, false, 1)),
    ]
}

/// Check the product of every shape in [`SHAPES`], in every layout of
/// [`layouts`], for input `T` and output `O` in mode `precision` against
/// the f64 reference within the mode's bound
/// ([`Precision::error_bound`], with `out_eps`, the output's rounding,
/// added); c's padding and the buffer around it untouched.
fn check_products<T: Element, O: Element>(
    dev: &Device<Cuda>,
    from: fn(f32) -> T,
    to: fn(T) -> f64,
    out: fn(O) -> f64,
    poison: O,
    precision: Precision,
    out_eps: f64,
) {
    let s = dev.stream();
    for (seed, &(m, n, k)) in SHAPES.iter().enumerate() {
        for shape in layouts(m, n, k) {
            let shape = shape.precision(precision);
            let what = format!("{shape} of {} into {}", T::DTYPE, O::DTYPE);
            let [sa, sb, sc] = shape.spans().unwrap();
            let ha = padded(2 * seed as u64, sa, from, from(0.0));
            let hb = padded(2 * seed as u64 + 1, sb, from, from(0.0));
            let (a, b) = (dev.upload(&ha).unwrap(), dev.upload(&hb).unwrap());
            let c = dev.upload(&vec![poison; sc + 2 * PAD]).unwrap();
            gemm_shaped(dev, &s, &a, &b, &c, shape).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = c.to_vec().unwrap();
            let (a, b) = (&ha[PAD..], &hb[PAD..]);
            let mut written = vec![false; sc];
            for z in 0..shape.batch {
                for i in 0..m {
                    for j in 0..n {
                        let (mut sum, mut abs) = (0.0f64, 0.0f64);
                        for p in 0..k {
                            let t = to(a[at(&shape.a, z, i, p)]) * to(b[at(&shape.b, z, p, j)]);
                            sum += t;
                            abs += t.abs();
                        }
                        let e = at(&shape.c, z, i, j);
                        written[e] = true;
                        let g = out(got[PAD + e]);
                        // The output's rounding: relative, or absolute among its
                        // subnormals (f16's spacing there is 2^-24).
                        let out_tiny = if out_eps > 0.0 { 2f64.powi(-25) } else { 0.0 };
                        let bound = precision.error_bound(T::DTYPE, k) * abs + out_eps * sum.abs() + out_tiny;
                        assert!(
                            (g - sum).abs() <= bound,
                            "{what}: c[{z}][{i}][{j}] = {g}, expected {sum} within {bound:.3e}"
                        );
                    }
                }
            }
            let untouched = (0..sc).filter(|e| !written[*e]).map(|e| &got[PAD + e]);
            let outside = got[..PAD].iter().chain(&got[PAD + sc..]).chain(untouched);
            assert!(outside.into_iter().all(|v| *v == poison), "{what}: wrote outside c's matrices");
        }
    }
}

#[test]
fn products_match_the_host_reference() {
    let Some(dev) = blas_gpu() else { return };
    let exact = Precision::Exact;
    check_products::<f32, f32>(&dev, |v| v, |v| v as f64, |v| v as f64, -7.0, exact, 0.0);
    check_products::<f64, f64>(&dev, |v| v as f64, |v| v, |v| v, -7.0, exact, 0.0);
    check_products::<f16, f32>(&dev, f16::from_f32, f16::to_f64, |v| v as f64, -7.0, exact, 0.0);
    check_products::<bf16, f32>(&dev, bf16::from_f32, bf16::to_f64, |v| v as f64, -7.0, exact, 0.0);
    // Into their own type: the f32 sum rounded once more.
    let poison16 = f16::from_f32(-7.0);
    check_products::<f16, f16>(&dev, f16::from_f32, f16::to_f64, f16::to_f64, poison16, exact, 2f64.powi(-11));
    let poison_bf = bf16::from_f32(-7.0);
    check_products::<bf16, bf16>(&dev, bf16::from_f32, bf16::to_f64, bf16::to_f64, poison_bf, exact, 2f64.powi(-8));
}

/// TF32 and bf16 modes: within their bounds at every shape and layout, and
/// really taken: a large product's bits differ from the exact one's (random
/// f32 inputs lose their low mantissa bits when rounded).
#[test]
fn tf32_and_bf16_modes_stay_inside_their_bounds() {
    let Some(dev) = blas_gpu() else { return };
    for mode in [Precision::Tf32, Precision::Bf16] {
        check_products::<f32, f32>(&dev, |v| v, |v| v as f64, |v| v as f64, -7.0, mode, 0.0);
        let s = dev.stream();
        let (m, n, k) = (512, 256, 384);
        let a = dev.upload(&padded(7, m * k, |v| v, 0.0f32)).unwrap();
        let b = dev.upload(&padded(8, k * n, |v| v, 0.0f32)).unwrap();
        let (exact, fast) = (dev.alloc::<f32>(m * n + 2 * PAD).unwrap(), dev.alloc::<f32>(m * n + 2 * PAD).unwrap());
        gemm(&dev, &s, &a, &b, &exact, (m, n, k)).unwrap();
        gemm_shaped(&dev, &s, &a, &b, &fast, MatmulShape::new(m, n, k).precision(mode)).unwrap();
        let (exact, fast) = (exact.to_vec().unwrap(), fast.to_vec().unwrap());
        let differ = exact[PAD..PAD + m * n].iter().zip(&fast[PAD..]).filter(|(x, y)| x != y).count();
        assert!(differ > m * n / 2, "{mode}: only {differ} of {} elements differ from the exact product", m * n);
    }
}

/// Streams other than the device's default, buffers allocated on another
/// stream than the product's, and threads sharing the device's handle.
#[test]
fn products_on_several_streams_and_threads() {
    let Some(dev) = blas_gpu() else { return };
    let (m, n, k) = (96, 80, 64);
    let ha = padded(10, m * k, |v| v, 0.0f32);
    let a = dev.upload(&ha).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let (dev, a, ha) = (&dev, &a, &ha);
            scope.spawn(move || {
                let s = dev.create_stream(if t % 2 == 0 { Priority::High } else { Priority::Low }).unwrap();
                let hb = padded(100 + t, k * n, |v| v, 0.0f32);
                // `b` is the new stream's; `a` and `c` the default stream's.
                let b = s.upload(&hb).unwrap();
                let c = dev.alloc::<f32>(m * n + 2 * PAD).unwrap();
                for _ in 0..8 {
                    gemm(dev, &s, a, &b, &c, (m, n, k)).unwrap();
                }
                s.synchronize().unwrap();
                let got = c.to_vec().unwrap();
                for (i, j) in [(0, 0), (m - 1, n - 1), (m / 2, 7), (5, n / 3)] {
                    let terms = (0..k).map(|p| ha[PAD + i * k + p] as f64 * hb[PAD + p * n + j] as f64);
                    let (want, abs) = terms.fold((0.0, 0.0), |(s, a), t| (s + t, a + t.abs()));
                    let bound = (k as f64 + 2.0) * f32::EPSILON as f64 * abs;
                    let g = got[PAD + i * n + j] as f64;
                    assert!((g - want).abs() <= bound, "thread {t}: c[{i}][{j}] = {g}, expected {want}");
                }
            });
        }
    });
    dev.synchronize().unwrap();
}

#[test]
fn refuses_what_it_does_not_multiply() {
    let Some(dev) = blas_gpu() else { return };
    let v = dev.raw().vendor_gemm().unwrap();
    assert!(v.supports(DType::F32, DType::F32) && v.supports(DType::BF16, DType::F32));
    assert!(v.supports(DType::F16, DType::F16) && v.supports(DType::BF16, DType::BF16));
    assert!(!v.supports(DType::I32, DType::I32) && !v.supports(DType::F16, DType::BF16));
    assert!(v.speeds_up(DType::F32, Precision::Tf32) && !v.speeds_up(DType::F64, Precision::Tf32));
    let x = dev.upload(&[1i32; 2 * PAD + 4]).unwrap();
    let err = gemm(&dev, &dev.stream(), &x, &x, &dev.alloc::<i32>(2 * PAD + 4).unwrap(), (2, 2, 2)).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("f32, f64, and f16 or bf16 into f32 or themselves"), "{err}");
    dev.synchronize().unwrap();
}

/// Each opened device creates its own handle at its first product and
/// destroys it when dropped: after many devices opened, used and dropped,
/// as many handles were destroyed as created (counted by kiln-cuda, so other
/// processes on the GPU do not disturb the check, as they would a
/// comparison of free memory).
#[test]
fn dropped_devices_release_their_handles() {
    let Some(_base) = blas_gpu() else { return };
    let use_once = || {
        let dev = Device::<Cuda>::open(0).unwrap();
        let (m, n, k) = (256, 256, 256);
        let a = dev.upload(&padded(1, m * k, |v| v, 0.0f32)).unwrap();
        let c = dev.alloc::<f32>(m * n + 2 * PAD).unwrap();
        gemm(&dev, &dev.stream(), &a, &a, &c, (m, n, k)).unwrap();
        dev.synchronize().unwrap();
    };
    let before = kiln_cuda::cublas_handles();
    const ROUNDS: u64 = 40;
    for _ in 0..ROUNDS {
        use_once();
    }
    let after = kiln_cuda::cublas_handles();
    eprintln!("cuBLAS handles before {before:?}, after {ROUNDS} devices {after:?}");
    // Other tests of this process may create and drop handles meanwhile;
    // these rounds alone created and destroyed one each.
    assert!(after.created - before.created >= ROUNDS, "{before:?} -> {after:?}");
    assert!(after.destroyed - before.destroyed >= ROUNDS, "a dropped device kept its handle: {before:?} -> {after:?}");
}
