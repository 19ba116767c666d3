//! The bench cases of the 2D patterns (transpose, sgemm and dgemm, the
//! `matmul_*` products in each dtype and mode, grayscale, 3 x 3 blur) and of
//! the sorts: their inputs, rotation among buffer sets, and the timed call.
//!
//! A 2D case of size `n` works on a square of side `sqrt(n)` (every size of
//! the sweep is a square: 1 Ki = 32^2, ..., 64 Mi = 8192^2, 16 Mi gives the
//! 4096^3 sgemm of the targets); a batched product of size `n` on 256
//! squares of `n / 256` elements ([`MatmulMode`]).

use kiln_core::{
    Backend, BackendKind, Buffer, BufferView, DType, Element, Error, F8E4M3, F8E5M2, MatmulShape, RawDevice, Result,
    Stream, bf16, f16,
};
use kiln_kernels::image::{Border, Filter, PixelFormat, convolve, gray};
use kiln_kernels::matmul::{
    Fp8Element, MatmulElement, MatmulStrategy, Precision, RoundedElement, choose, choose_rounded, matmul_rounded,
    matmul_scaled, matmul_with,
};
use kiln_kernels::sort::{SortKey, SortOrder, sort_into, sort_pairs};
use kiln_kernels::transpose::transpose_with;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::case::{Case, MatmulMode, Pattern, square_side};
use crate::options::{RunOptions, set_count};
use crate::peaks::Arithmetic;
use crate::timing::{Timing, time_runs};

/// Products of more flops than this are skipped on wgpu devices: kiln's WGSL
/// kernel on a software Vulkan device (or a small GPU) would take minutes
/// per run.
const SLOW_DEVICE_FLOPS: u64 = 1 << 33;
/// The same on the CPU, whose products go through packed SIMD kernels: up
/// to 2048^3, the size NumPy's matmul is usually quoted at.
const CPU_FLOPS: u64 = 1 << 35;

/// Whether this module runs `pattern`.
pub(crate) fn handles(pattern: Pattern) -> bool {
    matches!(
        pattern,
        Pattern::Transpose(_)
            | Pattern::Sgemm(_)
            | Pattern::Dgemm
            | Pattern::Matmul(_)
            | Pattern::Grayscale
            | Pattern::Blur3x3
            | Pattern::Sort { .. }
    )
}

/// What a product pattern multiplies and how; `None` for the other patterns.
fn mode(pattern: Pattern) -> Option<MatmulMode> {
    match pattern {
        Pattern::Sgemm(strategy) => Some(MatmulMode::square(DType::F32, Precision::Exact, strategy)),
        Pattern::Dgemm => Some(MatmulMode::square(DType::F64, Precision::Exact, MatmulStrategy::Tiled)),
        Pattern::Matmul(mode) => Some(mode),
        _ => None,
    }
}

/// The strategy a product of `mode` at size `n` runs with on `stream`'s
/// device: auto's choice for `Auto`, the one asked for otherwise.
fn resolved<B: Backend>(stream: &Stream<B>, mode: MatmulMode, n: usize) -> MatmulStrategy {
    match mode.strategy {
        MatmulStrategy::Auto if mode.rounded => choose_rounded(stream.device(), mode.input, mode.shape(n)),
        MatmulStrategy::Auto => choose(stream.device(), mode.input, mode.shape(n)),
        s => s,
    }
}

/// Whether the product of `mode` at size `n` takes the device's faster path
/// for its mode (the vendor GEMM's TF32 or bf16 tensor cores, or kiln's own
/// TF32 kernel on the device's matrix units).
fn faster_path<B: Backend>(stream: &Stream<B>, mode: MatmulMode, n: usize) -> bool {
    let tf32 = mode.input == DType::F32 && mode.precision != Precision::Exact;
    match resolved(stream, mode, n) {
        MatmulStrategy::Vendor => {
            stream.device().raw().vendor_gemm().is_some_and(|v| v.speeds_up(mode.input, mode.precision))
        }
        MatmulStrategy::Tiled => tf32 && stream.device().info().features.matrix_units.tf32,
        _ => false,
    }
}

/// The arithmetic a product case runs in on `stream`'s device, which sets
/// its peak: its mode's where the device takes the mode's faster path,
/// plain fp32 for an f32 product computed exactly; `None` for the cases
/// that are no products.
pub(crate) fn arithmetic<B: Backend>(stream: &Stream<B>, case: &Case) -> Option<Arithmetic> {
    let mode = mode(case.pattern)?;
    let precision = if faster_path(stream, mode, case.n) { mode.precision } else { Precision::Exact };
    Arithmetic::of(mode.input, precision)
}

/// The note of a `matmul_*` row that ran: the product, and what computed
/// it ("(4096 x 4096) . (4096 x 4096), tf32: vendor cuBLAS"; "auto chose
/// tiled" for the auto rows); `None` for the other cases.
pub(crate) fn remark<B: Backend>(stream: &Stream<B>, case: &Case) -> Option<String> {
    let Pattern::Matmul(mode) = case.pattern else { return None };
    let used = resolved(stream, mode, case.n);
    let vendor = stream.device().raw().vendor_gemm();
    let by = match (used, vendor) {
        (MatmulStrategy::Vendor, Some(v)) => format!("vendor {}", v.name),
        (s, _) => s.name().to_string(),
    };
    let chose = if mode.strategy == MatmulStrategy::Auto { "auto chose " } else { "" };
    let exactly =
        if mode.precision != Precision::Exact && mode.input == DType::F32 && !faster_path(stream, mode, case.n) {
            " (no faster path for the mode here: computed exactly)"
        } else {
            ""
        };
    Some(format!("{}: {chose}{by}{exactly}", mode.shape(case.n)))
}

/// Why a case of this module is not run on `stream`'s device, if it is not.
pub(crate) fn skip_reason<B: Backend>(stream: &Stream<B>, case: &Case) -> Option<String> {
    let product = mode(case.pattern);
    match product {
        Some(m)
            if m.strategy == MatmulStrategy::Vendor
                && !stream.device().raw().vendor_gemm().is_some_and(|v| {
                    v.supports(m.input, m.output()) || v.supports_scaled(m.input, m.input, m.output())
                }) =>
        {
            Some(format!("{} offers no vendor GEMM of {}", stream.device().name(), m.input))
        }
        Some(_) if case.pattern.flops(case.n) > flop_limit(B::KIND) => Some(format!(
            "{} flops: too slow for a bench run on {}",
            case.pattern.flops(case.n),
            stream.device().name()
        )),
        _ => None,
    }
}

/// The most flops a product of the bench runs on `kind`'s devices.
fn flop_limit(kind: BackendKind) -> u64 {
    match kind {
        BackendKind::Cuda => u64::MAX,
        BackendKind::Cpu => CPU_FLOPS,
        _ => SLOW_DEVICE_FLOPS,
    }
}

/// Time `case` (a pattern [`handles`] accepts) on `stream`.
pub(crate) fn run_case<B: Backend>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ case.n as u64);
    if let Some(mode) = mode(case.pattern) {
        // Uniform in [-1, 1), in each input type.
        let n = case.n;
        return match mode.input {
            DType::F32 => accumulated::<B, f32>(stream, mode, n, opts, || rng.random_range(-1.0..1.0)),
            DType::F64 => accumulated::<B, f64>(stream, mode, n, opts, || rng.random_range(-1.0..1.0)),
            DType::F16 if mode.rounded => {
                rounded::<B, f16>(stream, mode, n, opts, || f16::from_f32(rng.random_range(-1.0..1.0)))
            }
            DType::BF16 if mode.rounded => {
                rounded::<B, bf16>(stream, mode, n, opts, || bf16::from_f32(rng.random_range(-1.0..1.0)))
            }
            DType::F16 => accumulated::<B, f16>(stream, mode, n, opts, || f16::from_f32(rng.random_range(-1.0..1.0))),
            DType::BF16 => {
                accumulated::<B, bf16>(stream, mode, n, opts, || bf16::from_f32(rng.random_range(-1.0..1.0)))
            }
            DType::F8E4M3 => {
                scaled::<B, F8E4M3>(stream, mode, n, opts, || F8E4M3::from_f32(rng.random_range(-1.0..1.0)))
            }
            DType::F8E5M2 => {
                scaled::<B, F8E5M2>(stream, mode, n, opts, || F8E5M2::from_f32(rng.random_range(-1.0..1.0)))
            }
            d => Err(Error::invalid("bench matmul", format!("no bench inputs for {d}"))),
        };
    }
    let side = square_side(case.n);
    match case.pattern {
        Pattern::Transpose(_) => match case.dtype {
            DType::U8 => transpose(stream, case, opts, || rng.random::<u8>()),
            DType::I32 => transpose(stream, case, opts, || rng.random::<i32>()),
            DType::U32 => transpose(stream, case, opts, || rng.random::<u32>()),
            DType::F32 => transpose(stream, case, opts, || rng.random_range(-1.0f32..1.0)),
            DType::F64 => transpose(stream, case, opts, || rng.random_range(-1.0f64..1.0)),
            d => Err(Error::invalid("bench transpose", format!("no bench inputs for {d}"))),
        },
        Pattern::Grayscale => grayscale(stream, side, opts, &mut rng),
        Pattern::Blur3x3 => blur3x3(stream, side, opts, &mut rng),
        Pattern::Sort { key, pairs } => match key {
            DType::U32 => sort::<B, u32>(stream, case.n, pairs, opts, &mut rng, |r| r.random()),
            DType::I32 => sort::<B, i32>(stream, case.n, pairs, opts, &mut rng, |r| r.random()),
            DType::F32 => sort::<B, f32>(stream, case.n, pairs, opts, &mut rng, |r| r.random_range(-1e6..1e6)),
            d => Err(Error::invalid("bench sort", format!("no sort of {d} keys"))),
        },
        p => Err(Error::invalid("bench", format!("{} is not a 2D or sort pattern", p.name()))),
    }
}

/// One buffer set: an input and an output.
type Set<B, I, O> = (Buffer<B, I>, Buffer<B, O>);

/// `sets` copies of `input` and as many outputs of `out_len`, uploaded before timing.
fn buffer_sets<B: Backend, I: Element, O: Element>(
    stream: &Stream<B>,
    input: &[I],
    out_len: usize,
    sets: usize,
) -> Result<Vec<Set<B, I, O>>> {
    let out: Vec<O> = vec![O::zeroed(); out_len];
    let made = (0..sets).map(|_| Ok((stream.upload(input)?, stream.upload(&out)?))).collect::<Result<Vec<_>>>()?;
    stream.synchronize()?;
    Ok(made)
}

fn transpose<B: Backend, T: Element>(
    stream: &Stream<B>,
    case: &Case,
    opts: &RunOptions,
    mut draw: impl FnMut() -> T,
) -> Result<Timing> {
    let Pattern::Transpose(algorithm) = case.pattern else {
        return Err(Error::invalid("bench transpose", format!("{} is not a transpose", case.pattern.name())));
    };
    let side = square_side(case.n);
    let input: Vec<T> = (0..side * side).map(|_| draw()).collect();
    let sets = set_count(stream, case.pattern.bytes(case.n, case.dtype));
    let mut buffers = buffer_sets::<B, T, T>(stream, &input, side * side, sets)?;
    time_runs(stream, &opts.sampling(), |i| {
        let (a, t) = &mut buffers[i % sets];
        transpose_with(stream, algorithm, a, side, side, t)
    })
}

/// The product of `mode` at size `n` (one square product, or a batch of
/// them) on random `T` matrices, a and b in one buffer, into c of `C`
/// (matmul's accumulator type, or for a rounded product `T`) by `call`.
/// Each run must use the strategy asked for (auto's choice for `Auto`).
fn product<B: Backend, T: Element, C: Element>(
    stream: &Stream<B>,
    mode: MatmulMode,
    n: usize,
    opts: &RunOptions,
    mut draw: impl FnMut() -> T,
    call: impl Fn(&BufferView<'_, B, T>, &BufferView<'_, B, T>, &mut Buffer<B, C>, MatmulShape) -> Result<MatmulStrategy>,
) -> Result<Timing> {
    let shape = mode.shape(n);
    let [a_len, b_len, c_len] =
        shape.spans().ok_or_else(|| Error::invalid("bench matmul", format!("{shape} overflows")))?;
    let values: Vec<T> = (0..a_len + b_len).map(|_| draw()).collect();
    let sets = set_count(stream, mode.bytes(n));
    let mut buffers = buffer_sets::<B, T, C>(stream, &values, c_len, sets)?;
    let expected = resolved(stream, mode, n);
    time_runs(stream, &opts.sampling(), |i| {
        let (ab, c) = &mut buffers[i % sets];
        let (a, b) = (ab.slice(..a_len)?, ab.slice(a_len..)?);
        let used = call(&a, &b, c, shape)?;
        if used == expected {
            Ok(())
        } else {
            Err(Error::invalid("bench matmul", format!("asked for {} ({expected}), ran {used}", mode.strategy)))
        }
    })
}

/// [`product`] into matmul's accumulator type.
fn accumulated<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    mode: MatmulMode,
    n: usize,
    opts: &RunOptions,
    draw: impl FnMut() -> T,
) -> Result<Timing> {
    product::<B, T, T::Acc>(stream, mode, n, opts, draw, |a, b, c, shape| {
        matmul_with(stream, mode.strategy, a, b, c, shape)
    })
}

/// [`product`] into the 16-bit input type ([`matmul_rounded`]).
fn rounded<B: Backend, T: RoundedElement>(
    stream: &Stream<B>,
    mode: MatmulMode,
    n: usize,
    opts: &RunOptions,
    draw: impl FnMut() -> T,
) -> Result<Timing> {
    product::<B, T, T>(stream, mode, n, opts, draw, |a, b, c, shape| {
        matmul_rounded(stream, mode.strategy, a, b, c, shape)
    })
}

/// [`product`] of 8-bit floats into bf16 ([`matmul_scaled`], scales of 1).
fn scaled<B: Backend, T: Fp8Element>(
    stream: &Stream<B>,
    mode: MatmulMode,
    n: usize,
    opts: &RunOptions,
    draw: impl FnMut() -> T,
) -> Result<Timing> {
    // A buffer each, as scales usually are (torch's are tensors of their own).
    let (sa, sb) = (stream.upload(&[1.0f32])?, stream.upload(&[1.0f32])?);
    product::<B, T, bf16>(stream, mode, n, opts, draw, |a, b, c, shape| matmul_scaled(stream, a, b, c, shape, &sa, &sb))
}

fn grayscale<B: Backend>(stream: &Stream<B>, side: usize, opts: &RunOptions, rng: &mut ChaCha8Rng) -> Result<Timing> {
    let rgb: Vec<u8> = (0..3 * side * side).map(|_| rng.random()).collect();
    let sets = set_count(stream, 4 * (side * side) as u64);
    let mut buffers = buffer_sets::<B, u8, u8>(stream, &rgb, side * side, sets)?;
    time_runs(stream, &opts.sampling(), |i| {
        let (input, out) = &mut buffers[i % sets];
        gray(stream, PixelFormat::Rgb, input, side, side, out)
    })
}

fn blur3x3<B: Backend>(stream: &Stream<B>, side: usize, opts: &RunOptions, rng: &mut ChaCha8Rng) -> Result<Timing> {
    let image: Vec<f32> = (0..side * side).map(|_| rng.random_range(0.0f32..255.0)).collect();
    let sets = set_count(stream, 2 * (side * side * 4) as u64);
    let mut buffers = buffer_sets::<B, f32, f32>(stream, &image, side * side, sets)?;
    // The filter is uploaded once, outside the timed runs.
    let filter = Filter::box_blur(3)?.upload(stream)?;
    time_runs(stream, &opts.sampling(), |i| {
        let (input, out) = &mut buffers[i % sets];
        convolve(stream, input, side, side, &filter, Border::Clamp, out)
    })
}

/// Random keys sorted ascending: out of place when alone, so every run sorts
/// the same unsorted keys; in place with u32 values, each run first copying
/// the unsorted keys and values into the buffers it sorts.
fn sort<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    n: usize,
    pairs: bool,
    opts: &RunOptions,
    rng: &mut ChaCha8Rng,
    draw: impl Fn(&mut ChaCha8Rng) -> K,
) -> Result<Timing> {
    let keys: Vec<K> = (0..n).map(|_| draw(rng)).collect();
    if !pairs {
        let sets = set_count(stream, 2 * (n * 4) as u64);
        let mut buffers = buffer_sets::<B, K, K>(stream, &keys, n, sets)?;
        return time_runs(stream, &opts.sampling(), |i| {
            let (input, out) = &mut buffers[i % sets];
            sort_into(stream, input, out, SortOrder::Ascending)
        });
    }
    let values: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let sets = set_count(stream, 4 * (n * 4) as u64);
    let mut keys_sets = buffer_sets::<B, K, K>(stream, &keys, n, sets)?;
    let mut value_sets = buffer_sets::<B, u32, u32>(stream, &values, n, sets)?;
    time_runs(stream, &opts.sampling(), |i| {
        let ((keys_in, keys), (values_in, values)) = (&mut keys_sets[i % sets], &mut value_sets[i % sets]);
        stream.copy(keys_in, keys)?;
        stream.copy(values_in, values)?;
        sort_pairs(stream, keys, values, SortOrder::Ascending)
    })
}

#[cfg(test)]
mod tests {
    use kiln_kernels::transpose::TransposeAlgorithm;

    use super::*;
    use crate::testing::{cpu, every_case_times};

    /// Whether a product pattern asks for the vendor GEMM, which the CPU does not offer.
    fn asks_for_vendor(p: Pattern) -> bool {
        mode(p).is_some_and(|m| m.strategy == MatmulStrategy::Vendor)
    }

    #[test]
    fn every_case_runs_on_the_cpu() {
        // The CPU offers no vendor GEMM: the cases that ask for one alone are skipped.
        every_case_times(
            |p| handles(p) && !asks_for_vendor(p),
            &[DType::F32],
            |s, case, opts| {
                assert_eq!(skip_reason(s, case), None, "{}", case.pattern.name());
                run_case(s, case, opts)
            },
        );
        let (s, _) = cpu();
        let vendor = Case { pattern: Pattern::Sgemm(MatmulStrategy::Vendor), dtype: DType::F32, n: 1 << 12 };
        assert!(skip_reason(&s, &vendor).unwrap().contains("offers no vendor GEMM of f32"));
        let huge = Case { pattern: Pattern::Sgemm(MatmulStrategy::Tiled), dtype: DType::F32, n: 1 << 26 };
        assert!(skip_reason(&s, &huge).unwrap().contains("flops"));
    }

    /// On the CPU the modes have no faster path: the rows of f32 in TF32 or
    /// bf16 mode, and of f16 and bf16 inputs (which ask for the vendor
    /// GEMM), are skipped with the reason; the exact f32 and f64 rows run
    /// kiln's own kernel, and say so, as do the `_own` rows (the TF32 one
    /// computed exactly); products past the CPU's flop limit
    /// (8192^3, the batch of 256 x 512^3) are skipped.
    #[test]
    fn the_cpu_runs_the_exact_products_and_skips_the_modes() {
        let (s, opts) = cpu();
        let products: Vec<Pattern> = Pattern::ALL.into_iter().filter(|p| matches!(p, Pattern::Matmul(_))).collect();
        for pattern in products {
            let Pattern::Matmul(m) = pattern else { unreachable!() };
            let small = Case { pattern, dtype: m.input, n: 1 << 12 };
            let name = pattern.name();
            if m.strategy == MatmulStrategy::Vendor {
                let reason = skip_reason(&s, &small).unwrap_or_else(|| panic!("{name} runs"));
                assert_eq!(reason, format!("{} offers no vendor GEMM of {}", s.device().name(), m.input), "{name}");
                continue;
            }
            assert_eq!(skip_reason(&s, &small), None, "{name}");
            assert!(run_case(&s, &small, &opts).is_ok(), "{name}");
            let note = remark(&s, &small).unwrap();
            let said = match (m.strategy, m.precision) {
                (MatmulStrategy::Auto, _) => ": auto chose tiled",
                (_, Precision::Exact) => ": tiled",
                _ => ": tiled (no faster path for the mode here: computed exactly)",
            };
            assert!(note.ends_with(said), "{name}: {note}");
            assert_eq!(arithmetic(&s, &small), Arithmetic::of(m.input, Precision::Exact), "{name}");
            let big = Case { n: pattern.fixed_size().unwrap_or(1 << 26), ..small };
            assert!(skip_reason(&s, &big).unwrap().contains("too slow"), "{name}");
        }
        // kiln's own f32 kernel on a mode it has no faster path for: plain
        // fp32 arithmetic, said in the note.
        let tiled_tf32 = MatmulMode::square(DType::F32, Precision::Tf32, MatmulStrategy::Tiled);
        let case = Case { pattern: Pattern::Matmul(tiled_tf32), dtype: DType::F32, n: 1 << 12 };
        assert_eq!(arithmetic(&s, &case), Some(Arithmetic::Fp32));
        assert_eq!(
            remark(&s, &case).unwrap(),
            "(64 x 64) . (64 x 64), tf32: tiled (no faster path for the mode here: computed exactly)"
        );
        assert!(run_case(&s, &case, &opts).is_ok());
        let sgemm = Case { pattern: Pattern::Sgemm(MatmulStrategy::Tiled), dtype: DType::F32, n: 1 << 12 };
        assert_eq!((arithmetic(&s, &sgemm), remark(&s, &sgemm)), (Some(Arithmetic::Fp32), None));
    }

    #[test]
    fn models_count_the_square() {
        let n = 1 << 24;
        assert_eq!(Pattern::Sgemm(MatmulStrategy::Tiled).flops(n), 2 * 4096u64.pow(3));
        assert_eq!(Pattern::Grayscale.bytes(n, DType::U8), 4 * n as u64);
        assert_eq!(Pattern::Transpose(TransposeAlgorithm::Tiled).bytes(n, DType::F32), 8 * n as u64);
        assert_eq!(Pattern::Sort { key: DType::U32, pairs: false }.bytes(n, DType::U32), 8 * n as u64);
        assert_eq!(Pattern::Sort { key: DType::F32, pairs: true }.bytes(n, DType::F32), 16 * n as u64);
        assert_eq!(Pattern::Dgemm.flops(n), 2 * 4096u64.pow(3));
        let product = |name: &str| Pattern::from_name(name).unwrap();
        // a and b of f16, c of f32.
        assert_eq!(product("matmul_f16").bytes(n, DType::F16), (2 + 2 + 4) * n as u64);
        assert_eq!(product("matmul_f32_tf32").bytes(n, DType::F32), 12 * n as u64);
        assert_eq!(product("matmul_f64").flops(n), 2 * 4096u64.pow(3));
        // 256 products of 512^3 at the batch's fixed size.
        let batch = product("matmul_batch_f32_tf32");
        assert_eq!(batch.fixed_size(), Some(1 << 26));
        assert_eq!(batch.flops(1 << 26), 2 * 512u64.pow(3) * 256);
        assert_eq!(batch.bytes(1 << 26, DType::F32), 12 << 26);
        assert_eq!(product("matmul_batch_f16").arrays(), 4);
    }
}
