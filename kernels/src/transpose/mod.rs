//! transpose: the rows x cols row-major matrix `input` written as the
//! cols x rows row-major matrix `output`, for every element type and shape.
//!
//! The default algorithm is the coalesced, tiled transpose (shared-memory
//! tiles padded against bank conflicts); the naive one (coalesced reads,
//! strided writes) is kept as the baseline the benches measure it against.
//! Elements are moved as raw bits, so one kernel serves every dtype of a size.

mod cpu;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, Device, Element, Error, Language, LaunchConfig, Program, Result, Stream, View, ViewMut,
};

use crate::launch::{WGSL_ABI, blocks, cuda_source, host_fn, index_width, program};

/// How the transpose is computed.
///
/// # Examples
/// ```
/// use kiln_kernels::transpose::TransposeAlgorithm;
/// assert_eq!(TransposeAlgorithm::default(), TransposeAlgorithm::Tiled);
/// assert_eq!(TransposeAlgorithm::Naive.to_string(), "naive");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TransposeAlgorithm {
    /// Tiles staged through shared memory: coalesced reads and writes.
    #[default]
    Tiled,
    /// One thread per element: coalesced reads, strided writes (the baseline).
    Naive,
}

impl TransposeAlgorithm {
    /// Every algorithm.
    pub const ALL: [TransposeAlgorithm; 2] = [TransposeAlgorithm::Tiled, TransposeAlgorithm::Naive];

    /// Lower-case name ("tiled").
    pub const fn name(self) -> &'static str {
        match self {
            TransposeAlgorithm::Tiled => "tiled",
            TransposeAlgorithm::Naive => "naive",
        }
    }
}

impl std::fmt::Display for TransposeAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// CUDA tile side and rows per block (the block is 32 x 8 threads).
const CUDA_TILE: usize = 32;
const CUDA_ROWS: u32 = 8;
/// WGSL tile side of the tiled kernel (32 x 8 invocations, four rows
/// each) and of the naive one (16 x 16 invocations).
const WGSL_TILE: usize = 32;
const WGSL_TILE_ROWS: u32 = 8;
const WGSL_NAIVE_TILE: usize = 16;
/// Invocations per workgroup of WGSL's packed kernel (1- and 2-byte elements).
const WGSL_PACKED_BLOCK: u32 = 256;

fn transpose_program<T: Element>(algorithm: TransposeAlgorithm) -> Arc<Program> {
    let name = format!("kiln_transpose_{algorithm}_{}", T::DTYPE);
    program(&name, || {
        let size = T::DTYPE.size();
        // WGSL moves 32-bit words: 1- and 2-byte elements go through the
        // packed kernel, 8-byte ones as two words each.
        let entry = match (size, algorithm) {
            (1 | 2, _) => "PACKED",
            (_, TransposeAlgorithm::Tiled) => "TILED",
            (_, TransposeAlgorithm::Naive) => "NAIVE",
        };
        let per_word = if size < 4 { 4 / size } else { 1 };
        let bits = if size < 4 { 8 * size } else { 8 };
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(format!("{WGSL_ABI}{}", include_str!("kernel.wgsl")))
            .host(host_fn!(cpu::transpose::<T>))
            .define("KERNEL", &name)
            .define(entry, &name)
            .define("ALGO", algorithm as u8)
            .define("ELEM_BYTES", size)
            .define("WORDS", format!("{}u", size.div_ceil(4)))
            .define("PER_WORD", format!("{per_word}u"))
            .define("BITS", format!("{bits}u"))
    })
}

/// The launch shape for a `rows` x `cols` matrix of `size`-byte elements,
/// in the geometry the source backend `B` compiles is written for (a host
/// fn ignores it).
fn launch_config<B: Backend>(
    device: &Device<B>,
    algorithm: TransposeAlgorithm,
    rows: usize,
    cols: usize,
    size: usize,
) -> LaunchConfig {
    let max = device.info().limits.max_grid;
    match B::LANGUAGE {
        // WGSL moves 32-bit words: 1- and 2-byte elements go through the
        // packed kernel, one invocation per output word.
        Language::Wgsl if size < 4 => {
            let words = rows.saturating_mul(cols).saturating_mul(size).div_ceil(4);
            LaunchConfig::new(blocks(words, WGSL_PACKED_BLOCK as usize, max[0]), WGSL_PACKED_BLOCK)
        }
        Language::Wgsl => match algorithm {
            TransposeAlgorithm::Tiled => LaunchConfig::new(
                (blocks(cols, WGSL_TILE, max[0]), blocks(rows, WGSL_TILE, max[1])),
                (WGSL_TILE as u32, WGSL_TILE_ROWS),
            ),
            TransposeAlgorithm::Naive => LaunchConfig::new(
                (blocks(cols, WGSL_NAIVE_TILE, max[0]), blocks(rows, WGSL_NAIVE_TILE, max[1])),
                (WGSL_NAIVE_TILE as u32, WGSL_NAIVE_TILE as u32),
            ),
        },
        _ => {
            let rows_per_block = match algorithm {
                TransposeAlgorithm::Tiled => CUDA_TILE,
                TransposeAlgorithm::Naive => CUDA_ROWS as usize,
            };
            LaunchConfig::new(
                (blocks(cols, CUDA_TILE, max[0]), blocks(rows, rows_per_block, max[1])),
                (CUDA_TILE as u32, CUDA_ROWS),
            )
        }
    }
}

/// `output = input^T`: `input` is `rows` x `cols` row-major, `output` becomes
/// `cols` x `rows` row-major, on `stream`, with the tiled algorithm. Any
/// element type, any shape (not only multiples of the tile).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let a = s.upload(&[1u8, 2, 3, 4, 5, 6])?;            // 2 x 3
/// let mut t = s.alloc::<u8>(6)?;
/// kiln_kernels::transpose::transpose(&s, &a, 2, 3, &mut t)?;
/// assert_eq!(t.to_vec()?, vec![1, 4, 2, 5, 3, 6]);      // 3 x 2
/// # Ok(()) }
/// ```
pub fn transpose<B: Backend, T: Element>(
    stream: &Stream<B>,
    input: &impl View<B, T>,
    rows: usize,
    cols: usize,
    output: &mut impl ViewMut<B, T>,
) -> Result<()> {
    transpose_with(stream, TransposeAlgorithm::Tiled, input, rows, cols, output)
}

/// [`transpose()`] with a chosen algorithm.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::transpose::{transpose_with, TransposeAlgorithm};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let a = s.upload(&[1.0f64, 2.0, 3.0])?;               // 1 x 3
/// let mut t = s.alloc::<f64>(3)?;
/// transpose_with(&s, TransposeAlgorithm::Naive, &a, 1, 3, &mut t)?;
/// assert_eq!(t.to_vec()?, vec![1.0, 2.0, 3.0]);         // 3 x 1
/// assert!(transpose_with(&s, TransposeAlgorithm::Naive, &a, 2, 2, &mut t).is_err());
/// # Ok(()) }
/// ```
pub fn transpose_with<B: Backend, T: Element>(
    stream: &Stream<B>,
    algorithm: TransposeAlgorithm,
    input: &impl View<B, T>,
    rows: usize,
    cols: usize,
    output: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let what = format!("transpose ({algorithm}) of a {rows} x {cols} {} matrix", T::DTYPE);
    let n = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::invalid(what.clone(), "rows x cols overflows the address space"))?;
    if input.view().len() != n {
        return Err(Error::LengthMismatch { what: format!("{what}: input"), expected: n, actual: input.view().len() });
    }
    if output.view().len() != n {
        return Err(Error::LengthMismatch {
            what: format!("{what}: output"),
            expected: n,
            actual: output.view().len(),
        });
    }
    if n == 0 {
        return Ok(());
    }
    let prog = transpose_program::<T>(algorithm);
    let kernel = stream.device().kernel(&prog)?;
    let size = T::DTYPE.size();
    let config = launch_config(stream.device(), algorithm, rows, cols, size);
    // Kernels index elements, or the 32-bit words WGSL moves them in: both must fit the device's indices.
    let width = index_width(stream);
    let words = (n as u64) * size.div_ceil(4) as u64;
    width.check::<B>(words.max(n as u64), &what)?;
    let args = Args::new().arg(input.view()).arg(output.view_mut());
    let args = args.length(width, rows, &what)?.length(width, cols, &what)?;
    // SAFETY: the kernel reads input[0..rows * cols) and writes output[0..rows * cols),
    // both checked to be exactly that long (WGSL's packed kernel writes whole
    // words, keeping the bytes past the end as they were).
    unsafe { stream.launch(&kernel, config, args) }
}
