//! Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and
//! Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
//! generator of cuRAND's `PHILOX4_32_10` and NumPy's `Philox`.
//!
//! A seed (the 64-bit key) names a stream of 128-bit blocks: block `c` is
//! the cipher of the counter `(c, 0, 0)` (its low and high 32-bit words
//! first). A fill from counter `c` takes its values from blocks `c, c + 1,
//! ...` in order, [`Uniform::PER_BLOCK`] values from each, and the next fill
//! starts at the next whole block. Every value is computed with integer
//! operations and exact conversions, so CUDA, wgpu and the CPU give the
//! same bits for the same seed and counter.
//!
//! - `u32`: the block's four words.
//! - `f32`: `(w >> 8) * 2^-24` for each word `w`: every multiple of 2^-24
//!   in `[0, 1)`, equally likely.
//! - `f64`: `((a >> 5) * 2^26 + (b >> 6)) * 2^-53` for each pair of words
//!   `a, b`: every multiple of 2^-53 in `[0, 1)`, equally likely (NumPy's
//!   `random_standard_uniform` from two 32-bit words).
//!
//! Standard normal values ([`Philox::fill_normal`], `f32` four per block and
//! `f64` two) are the Box-Muller transform of the same words with kiln's
//! own logarithm, square root, sine and cosine, built from exactly rounded
//! additions and multiplications only, so they too are the same bits on
//! every backend (to a few ulps of the exact transform):
//!
//! - `f32`: from the words `a, b`: `r = sqrt(-2 ln u)` with `u = (a | 1)
//!   2^-32` (never 0; `|z| <= 6.66`, as cuRAND's), the angle `2 pi b 2^-32`;
//!   `(r cos, r sin)`.
//! - `f64`: `u` from the 64 bits of the first two words (`|z| <= 9.42`), the
//!   angle from the other two.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::random::Philox;
//! # fn main() -> kiln_core::Result<()> {
//! let s = Device::<Cpu>::open(0)?.stream();
//! let mut rng = Philox::new(42);
//! let mut a = s.alloc::<f32>(6)?;
//! rng.fill_uniform(&s, &mut a)?; // blocks 0 and 1
//! assert_eq!(rng.counter(), 2);
//! let v = a.to_vec()?;
//! assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
//! // The same seed and counter give the same values, on any backend.
//! let mut b = s.alloc::<f32>(6)?;
//! Philox::new(42).fill_uniform(&s, &mut b)?;
//! assert_eq!(b.to_vec()?, v);
//! # Ok(()) }
//! ```

mod cpu;
mod normal;
mod normal_src;

use kiln_core::{Args, Backend, Element, Error, Language, LaunchConfig, Program, Result, Stream, ViewMut};

use crate::launch::{
    Access, BLOCK, blocks, check_dtype, cuda_source, host_fn, index_width, program, wgsl_preamble, wgsl_source,
};

/// Philox4x32-10's round multipliers and key increments (Weyl constants).
pub(crate) const M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
pub(crate) const W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];

/// The Philox4x32-10 block of `counter` under `key`, as the GPU kernels
/// compute it.
///
/// # Examples
/// ```
/// use kiln_kernels::random::philox4x32_10;
/// // A known-answer vector of the Random123 reference.
/// assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for _ in 0..10 {
        let p0 = u64::from(M[0]) * u64::from(c[0]);
        let p1 = u64::from(M[1]) * u64::from(c[2]);
        c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
        k = [k[0].wrapping_add(W[0]), k[1].wrapping_add(W[1])];
    }
    c
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The element types a Philox stream fills with uniform values: `u32`,
/// `f32` and `f64`.
pub trait Uniform: Element + sealed::Sealed {
    /// Values one 128-bit block gives.
    const PER_BLOCK: u64;
    /// Value `k` of block `w`.
    fn value(w: &[u32; 4], k: usize) -> Self;
    /// The CUDA function `kiln_pack kiln_values(uint4 w)`.
    #[doc(hidden)]
    const CUDA: &'static str;
    /// The WGSL function `fn kiln_values(w: vec4<u32>) -> array<T, 4>`
    /// (the first `PER_BLOCK` used).
    #[doc(hidden)]
    const WGSL: &'static str;
}

impl Uniform for u32 {
    const PER_BLOCK: u64 = 4;
    fn value(w: &[u32; 4], k: usize) -> u32 {
        w[k]
    }
    const CUDA: &'static str = "__device__ __forceinline__ kiln_pack kiln_values(uint4 w) {
    kiln_pack p; p.v[0] = w.x; p.v[1] = w.y; p.v[2] = w.z; p.v[3] = w.w; return p;
}";
    const WGSL: &'static str =
        "fn kiln_values(w: vec4<u32>) -> array<T, 4> { return array<T, 4>(w.x, w.y, w.z, w.w); }";
}

impl Uniform for f32 {
    const PER_BLOCK: u64 = 4;
    fn value(w: &[u32; 4], k: usize) -> f32 {
        (w[k] >> 8) as f32 * (1.0 / 16_777_216.0)
    }
    const CUDA: &'static str = "__device__ __forceinline__ float kiln_unit(unsigned w) {
    return (float)(w >> 8) * 5.9604644775390625e-8f;
}
__device__ __forceinline__ kiln_pack kiln_values(uint4 w) {
    kiln_pack p; p.v[0] = kiln_unit(w.x); p.v[1] = kiln_unit(w.y); p.v[2] = kiln_unit(w.z); p.v[3] = kiln_unit(w.w);
    return p;
}";
    const WGSL: &'static str = "fn kiln_unit(w: u32) -> T { return f32(w >> 8u) * 5.9604644775390625e-8; }
fn kiln_values(w: vec4<u32>) -> array<T, 4> {
    return array<T, 4>(kiln_unit(w.x), kiln_unit(w.y), kiln_unit(w.z), kiln_unit(w.w));
}";
}

impl Uniform for f64 {
    const PER_BLOCK: u64 = 2;
    fn value(w: &[u32; 4], k: usize) -> f64 {
        let (a, b) = (w[2 * k] >> 5, w[2 * k + 1] >> 6);
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }
    const CUDA: &'static str = "__device__ __forceinline__ double kiln_unit(unsigned a, unsigned b) {
    return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * 1.1102230246251565e-16;
}
__device__ __forceinline__ kiln_pack kiln_values(uint4 w) {
    kiln_pack p; p.v[0] = kiln_unit(w.x, w.y); p.v[1] = kiln_unit(w.z, w.w); return p;
}";
    const WGSL: &'static str = "fn kiln_unit(a: u32, b: u32) -> T {
    return (f64(a >> 5u) * 67108864.0lf + f64(b >> 6u)) * 1.1102230246251565e-16lf;
}
fn kiln_values(w: vec4<u32>) -> array<T, 4> { return array<T, 4>(kiln_unit(w.x, w.y), kiln_unit(w.z, w.w), 0.0lf, 0.0lf); }";
}

/// The element types a Philox stream fills with standard normal values:
/// `f32` and `f64` (see [`Philox::fill_normal`]).
pub trait Normal: Element + sealed::Sealed {
    /// Values one 128-bit block gives.
    const PER_BLOCK: u64;
    /// The values of block `w` (the first `PER_BLOCK` used).
    #[doc(hidden)]
    fn normals(w: &[u32; 4]) -> [Self; 4];
    /// The CUDA function `kiln_pack kiln_values(uint4 w)`.
    #[doc(hidden)]
    fn cuda() -> String;
    /// The WGSL function `fn kiln_values(w: vec4<u32>) -> array<T, 4>`.
    #[doc(hidden)]
    fn wgsl() -> String;
}

impl Normal for f32 {
    const PER_BLOCK: u64 = 4;
    fn normals(w: &[u32; 4]) -> [f32; 4] {
        let ([a, b], [c, d]) = (normal::pair_f32(w[0], w[1]), normal::pair_f32(w[2], w[3]));
        [a, b, c, d]
    }
    fn cuda() -> String {
        normal_src::cuda()
            + "__device__ __forceinline__ kiln_pack kiln_values(uint4 w) {
    float2 a = kiln_normal2f(w.x, w.y), b = kiln_normal2f(w.z, w.w);
    kiln_pack p; p.v[0] = a.x; p.v[1] = a.y; p.v[2] = b.x; p.v[3] = b.y; return p;
}"
    }
    fn wgsl() -> String {
        normal_src::wgsl(false)
            + "fn kiln_values(w: vec4<u32>) -> array<T, 4> {
    let a = kiln_normal2f(w.x, w.y);
    let b = kiln_normal2f(w.z, w.w);
    return array<T, 4>(a.x, a.y, b.x, b.y);
}"
    }
}

impl Normal for f64 {
    const PER_BLOCK: u64 = 2;
    fn normals(w: &[u32; 4]) -> [f64; 4] {
        let [a, b] = normal::pair_f64(w);
        [a, b, 0.0, 0.0]
    }
    fn cuda() -> String {
        normal_src::cuda()
            + "__device__ __forceinline__ kiln_pack kiln_values(uint4 w) {
    double2 a = kiln_normal2(w);
    kiln_pack p; p.v[0] = a.x; p.v[1] = a.y; return p;
}"
    }
    fn wgsl() -> String {
        normal_src::wgsl(true)
            + "fn kiln_values(w: vec4<u32>) -> array<T, 4> {
    let a = kiln_normal2(w);
    return array<T, 4>(a.x, a.y, 0.0lf, 0.0lf);
}"
    }
}

/// What a fill draws from each block: the values per block, the values on
/// the host, and the kernels' `kiln_values` functions.
pub(crate) trait Draw<T: Element> {
    const NAME: &'static str;
    const PER_BLOCK: u64;
    /// Whether the WGSL kernel takes the high words of its products from
    /// one 64-bit multiply where the adapter has 64-bit integers, rather
    /// than from 16-bit halves: chosen by measurement, as it helps one draw
    /// and hurts the other (64 Mi f32 on the H200's Vulkan driver: uniform
    /// 0.221 ms with the halves against 0.284 with 64-bit, normal 0.413
    /// against 0.289; the carry form of the halves, now in their place, ran
    /// the uniform fill at 0.219 in the probe's lab). Neither where the
    /// device compiles `kiln_mul_wide` to one instruction
    /// (`Features::wide_multiply`): uniform 0.0826 ms so, normal 0.2700.
    const WIDE_MULTIPLY: bool;
    /// Whether the WGSL fill's grid is capped at [`WGSL_GROUPS`], so that
    /// each invocation strides over several blocks with the round keys
    /// worked out once: chosen by measurement (64 Mi f32 on the H200's
    /// Vulkan driver: uniform 0.0739 ms capped against 0.0826 with a block
    /// per invocation; normal 0.2783 against 0.2700).
    const WGSL_STRIDE: bool;
    fn values(w: &[u32; 4]) -> [T; 4];
    fn cuda() -> String;
    fn wgsl() -> String;
}

/// Uniform values ([`Uniform`]).
pub(crate) struct Uniforms;
/// Standard normal values ([`Normal`]).
pub(crate) struct Normals;

impl<T: Uniform> Draw<T> for Uniforms {
    const NAME: &'static str = "uniform";
    const PER_BLOCK: u64 = T::PER_BLOCK;
    const WIDE_MULTIPLY: bool = false;
    const WGSL_STRIDE: bool = true;
    fn values(w: &[u32; 4]) -> [T; 4] {
        std::array::from_fn(|k| if (k as u64) < T::PER_BLOCK { T::value(w, k) } else { T::default() })
    }
    fn cuda() -> String {
        T::CUDA.to_string()
    }
    fn wgsl() -> String {
        T::WGSL.to_string()
    }
}

impl<T: Normal> Draw<T> for Normals {
    const NAME: &'static str = "normal";
    const PER_BLOCK: u64 = T::PER_BLOCK;
    const WIDE_MULTIPLY: bool = true;
    const WGSL_STRIDE: bool = false;
    fn values(w: &[u32; 4]) -> [T; 4] {
        T::normals(w)
    }
    fn cuda() -> String {
        T::cuda()
    }
    fn wgsl() -> String {
        T::wgsl()
    }
}

/// A Philox4x32-10 stream: a seed and the counter of its next block.
/// Fills advance the counter past the blocks they use, so consecutive
/// fills never share values; [`at`](Self::at) starts anywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Philox {
    seed: u64,
    counter: u64,
}

impl Philox {
    /// The stream of `seed`, at block 0.
    pub fn new(seed: u64) -> Self {
        Philox { seed, counter: 0 }
    }

    /// The stream of `seed` at block `counter`.
    pub fn at(seed: u64, counter: u64) -> Self {
        Philox { seed, counter }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The block the next fill starts at.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// The counter of a fill of `n` values of `T`, `per` from each block,
    /// the stream moved past it; `Err` where the 64-bit counter would run out.
    pub(crate) fn take<T: Element>(&mut self, n: usize, per: u64) -> Result<u64> {
        let used = (n as u64).div_ceil(per);
        let next = self.counter.checked_add(used).ok_or_else(|| {
            Error::invalid(
                "Philox",
                format!("{n} values of {} from block {} run past the last block, 2^64 - 1", T::DTYPE, self.counter),
            )
        })?;
        Ok(std::mem::replace(&mut self.counter, next))
    }

    /// Fill `dst` with uniform values of `T` from this stream, on `stream`
    /// (see the [module](self) for the values), and move past them.
    pub fn fill_uniform<B: Backend, T: Uniform>(
        &mut self,
        stream: &Stream<B>,
        dst: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        self.fill::<B, T, Uniforms>(stream, dst)
    }

    /// Fill `dst` with standard normal values of `T` (mean 0, standard
    /// deviation 1) from this stream, on `stream`, and move past them.
    ///
    /// The values are the Box-Muller transform of the blocks' words (two
    /// words to two values), computed with kiln's own logarithm, square
    /// root, sine and cosine from exactly rounded operations, so CUDA, wgpu
    /// and the CPU give the same bits: see the [module](self). A normal of
    /// another mean and deviation is an expression away (`&z * sd + mean`).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::random::Philox;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let mut z = s.alloc::<f64>(100_000)?;
    /// let mut rng = Philox::new(3);
    /// rng.fill_normal(&s, &mut z)?;
    /// assert_eq!(rng.counter(), 50_000); // two f64 values per block
    /// let v = z.to_vec()?;
    /// let mean = v.iter().sum::<f64>() / v.len() as f64;
    /// let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64;
    /// assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03);
    /// # Ok(()) }
    /// ```
    pub fn fill_normal<B: Backend, T: Normal>(
        &mut self,
        stream: &Stream<B>,
        dst: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        self.fill::<B, T, Normals>(stream, dst)
    }

    fn fill<B: Backend, T: Element, D: Draw<T>>(
        &mut self,
        stream: &Stream<B>,
        dst: &mut impl ViewMut<B, T>,
    ) -> Result<()> {
        let n = dst.view().len();
        let mut next = *self;
        let ctr = next.take::<T>(n, D::PER_BLOCK)?;
        fill::<B, T, D>(stream, dst, self.seed, ctr)?;
        *self = next;
        Ok(())
    }
}

/// `rng.fill_uniform(stream, dst)`, with the stream first as in every
/// pattern function (the run-time tier's `kiln::kernels::random` has this
/// form).
pub fn fill_uniform<B: Backend, T: Uniform>(
    stream: &Stream<B>,
    rng: &mut Philox,
    dst: &mut impl ViewMut<B, T>,
) -> Result<()> {
    rng.fill_uniform(stream, dst)
}

/// `rng.fill_normal(stream, dst)`, with the stream first as in every
/// pattern function.
pub fn fill_normal<B: Backend, T: Normal>(
    stream: &Stream<B>,
    rng: &mut Philox,
    dst: &mut impl ViewMut<B, T>,
) -> Result<()> {
    rng.fill_normal(stream, dst)
}

/// Blocks per multiprocessor of a CUDA fill: its threads stride over the
/// Philox blocks with the round keys worked out once (kernel.cu).
const CUDA_BLOCKS_PER_SM: u32 = 16;

/// Most workgroups of a WGSL fill whose draw strides ([`Draw::WGSL_STRIDE`];
/// wgpu reports no unit count): past 2 Mi 4-byte values, each invocation
/// strides over several blocks with the round keys worked out once
/// (philox.wgsl), as CUDA's threads do.
const WGSL_GROUPS: u32 = 2048;

/// Values of `T` drawn by `D` from the blocks of `seed` from `counter` into `dst`.
///
/// In WGSL, four 4-byte values a block go out as one `vec4` store each
/// (four scalar stores a thread cost the uniform fill a fifth of its rate
/// on the H200's Vulkan driver: 0.247 against 0.194 ms for 64 Mi f32), and
/// a last partial block through the scalar kernel.
fn fill<B: Backend, T: Element, D: Draw<T>>(
    stream: &Stream<B>,
    dst: &mut impl ViewMut<B, T>,
    seed: u64,
    counter: u64,
) -> Result<()> {
    let n = dst.view().len();
    let whole = n / 4 * 4;
    if B::LANGUAGE == Language::Wgsl && D::PER_BLOCK == 4 && size_of::<T>() == 4 && whole > 0 {
        let mut view = dst.view_mut();
        launch::<B, T, D>(stream, &mut view.slice_mut(..whole)?, seed, counter, true)?;
        if whole == n {
            return Ok(());
        }
        // The partial block's values are those of block counter + whole / 4
        // (no overflow: the stream's `take` checked the blocks of all n).
        let next = counter.wrapping_add((whole / 4) as u64);
        return launch::<B, T, D>(stream, &mut view.slice_mut(whole..)?, seed, next, false);
    }
    launch::<B, T, D>(stream, dst, seed, counter, false)
}

/// One launch of [`fill`]: the scalar kernel, or (`vec4`, WGSL only, for
/// `dst` of whole blocks of four 4-byte values) the vector one.
fn launch<B: Backend, T: Element, D: Draw<T>>(
    stream: &Stream<B>,
    dst: &mut impl ViewMut<B, T>,
    seed: u64,
    counter: u64,
    vec4: bool,
) -> Result<()> {
    let n = dst.view().len();
    if n == 0 {
        return Ok(());
    }
    // WGSL's high words of products: one instruction where the device
    // compiles `kiln_mul_wide` to one (`Features::wide_multiply`), else one
    // 64-bit multiply where the draw gains by it and the adapter has them,
    // else 16-bit halves (the same bits every way).
    let features = stream.device().info().features;
    let wide = B::LANGUAGE == Language::Wgsl && D::WIDE_MULTIPLY && features.int64 && !features.wide_multiply;
    let name = format!(
        "kiln_philox_{}_{}{}{}",
        D::NAME,
        T::DTYPE,
        if wide { "_w64" } else { "" },
        if vec4 { "_v4" } else { "" }
    );
    check_dtype(stream, T::DTYPE, &format!("Philox {} fill", D::NAME))?;
    let per = format!("{}u", D::PER_BLOCK);
    let prog = program(&name, || {
        let mul = if wide { include_str!("mul_wide64.wgsl") } else { include_str!("../mul_wide16.wgsl") };
        let philox = format!("{}\n{mul}\n{}", D::wgsl(), include_str!("philox.wgsl"));
        let prog = Program::new(&name).define("KERNEL", &name).define("PER", &per);
        if vec4 {
            let body = format!("{philox}\n{}", include_str!("kernel_vec4.wgsl"));
            return prog.wgsl(format!("{}\n{body}", wgsl_preamble(T::DTYPE, &[("dst", "vec4<T>", true)])));
        }
        let body = format!("{philox}\n{}", include_str!("kernel.wgsl"));
        prog.cuda(cuda_source(T::DTYPE, &format!("{}\n{}", D::cuda(), include_str!("kernel.cu"))))
            .wgsl(wgsl_source(T::DTYPE, &[("dst", Access::ReadWrite)], &body))
            .host(host_fn!(cpu::fill::<T, D>))
    });
    let kernel = stream.device().kernel(&prog)?;
    let info = stream.device().info();
    let mut grid = blocks(n.div_ceil(D::PER_BLOCK as usize), BLOCK as usize, info.limits.max_grid[0]);
    if B::LANGUAGE == Language::Cuda && info.compute_units > 0 {
        grid = grid.min(info.compute_units.saturating_mul(CUDA_BLOCKS_PER_SM));
    }
    if B::LANGUAGE == Language::Wgsl && D::WGSL_STRIDE {
        grid = grid.min(WGSL_GROUPS);
    }
    let cfg = LaunchConfig::new(grid, BLOCK);
    let args = Args::new()
        .arg(dst.view_mut())
        .scalar(seed as u32)
        .scalar((seed >> 32) as u32)
        .scalar(counter as u32)
        .scalar((counter >> 32) as u32)
        .scalar(1.0f32)
        .scalar(0u32)
        .length(index_width(stream), n, &name)?;
    // SAFETY: the kernel writes dst[0..n) only, n being dst's length (the
    // vector kernel, whole blocks of four of them, as n / 4 vec4s).
    unsafe { stream.launch(&kernel, cfg, args) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_of_the_random123_reference() {
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
        assert_eq!(
            philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn float_values_span_the_unit_interval_exactly() {
        assert_eq!(f32::value(&[0, 0, 0, u32::MAX], 3), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(f32::value(&[0xff, 0, 0, 0], 0), 0.0);
        assert_eq!(f64::value(&[u32::MAX; 4], 1), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(f64::value(&[0, 0x40, 0, 0], 0), f64::EPSILON / 2.0);
    }

    #[test]
    fn a_fill_past_the_last_block_is_refused() {
        let mut rng = Philox::at(1, u64::MAX - 1);
        assert!(rng.take::<f32>(8, 4).is_err());
        assert_eq!(rng.counter(), u64::MAX - 1);
        assert_eq!(rng.take::<f32>(4, 4).unwrap(), u64::MAX - 1);
    }
}
