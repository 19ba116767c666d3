//! The bench cases of the 2D patterns (transpose, sgemm and dgemm,
//! grayscale, 3 x 3 blur) and of the sorts: their inputs, rotation among
//! buffer sets, and the timed call.
//!
//! A 2D case of size `n` works on a square of side `sqrt(n)` (every size of
//! the sweep is a square: 1 Ki = 32^2, ..., 64 Mi = 8192^2, 16 Mi gives the
//! 4096^3 sgemm of the targets).

use kiln_core::{Backend, BackendKind, Buffer, DType, Element, Error, RawDevice, Result, Stream};
use kiln_kernels::image::{Border, Filter, PixelFormat, convolve, gray};
use kiln_kernels::matmul::{MatmulElement, MatmulShape, MatmulStrategy, matmul_with};
use kiln_kernels::sort::{SortKey, SortOrder, sort_into, sort_pairs};
use kiln_kernels::transpose::transpose_with;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::case::{Case, Pattern, square_side};
use crate::options::{RunOptions, set_count};
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
            | Pattern::Grayscale
            | Pattern::Blur3x3
            | Pattern::Sort { .. }
    )
}

/// Why a case of this module is not run on `stream`'s device, if it is not.
pub(crate) fn skip_reason<B: Backend>(stream: &Stream<B>, case: &Case) -> Option<String> {
    match case.pattern {
        Pattern::Sgemm(MatmulStrategy::Vendor)
            if !stream.device().raw().vendor_gemm().is_some_and(|v| v.supports(DType::F32, DType::F32)) =>
        {
            Some(format!("{} offers no vendor GEMM of f32", stream.device().name()))
        }
        Pattern::Sgemm(_) | Pattern::Dgemm if case.pattern.flops(case.n) > flop_limit(B::KIND) => Some(format!(
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
        Pattern::Sgemm(strategy) => gemm::<B, f32>(stream, strategy, side, opts, || rng.random_range(-1.0..1.0)),
        Pattern::Dgemm => gemm::<B, f64>(stream, MatmulStrategy::Tiled, side, opts, || rng.random_range(-1.0..1.0)),
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

/// A product of two random square matrices of `T` (a and b in one buffer)
/// into c.
fn gemm<B: Backend, T: MatmulElement<Acc = T>>(
    stream: &Stream<B>,
    strategy: MatmulStrategy,
    side: usize,
    opts: &RunOptions,
    mut draw: impl FnMut() -> T,
) -> Result<Timing> {
    let values: Vec<T> = (0..2 * side * side).map(|_| draw()).collect();
    let sets = set_count(stream, 3 * (side * side * size_of::<T>()) as u64);
    let mut buffers = buffer_sets::<B, T, T>(stream, &values, side * side, sets)?;
    let shape = MatmulShape::new(side, side, side);
    time_runs(stream, &opts.sampling(), |i| {
        let (ab, c) = &mut buffers[i % sets];
        let (a, b) = (ab.slice(..side * side)?, ab.slice(side * side..)?);
        let used = matmul_with(stream, strategy, &a, &b, c, shape)?;
        if used == strategy {
            Ok(())
        } else {
            Err(Error::invalid("bench matmul", format!("asked for {strategy}, ran {used}")))
        }
    })
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

    #[test]
    fn every_case_runs_on_the_cpu() {
        // The CPU offers no vendor GEMM: that case alone is skipped.
        let vendor = Pattern::Sgemm(MatmulStrategy::Vendor);
        every_case_times(
            |p| handles(p) && p != vendor,
            &[DType::F32],
            |s, case, opts| {
                assert_eq!(skip_reason(s, case), None, "{}", case.pattern.name());
                run_case(s, case, opts)
            },
        );
        let (s, _) = cpu();
        let vendor = Case { pattern: vendor, dtype: DType::F32, n: 1 << 12 };
        assert!(skip_reason(&s, &vendor).unwrap().contains("offers no vendor GEMM"));
        let huge = Case { pattern: Pattern::Sgemm(MatmulStrategy::Tiled), dtype: DType::F32, n: 1 << 26 };
        assert!(skip_reason(&s, &huge).unwrap().contains("flops"));
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
    }
}
