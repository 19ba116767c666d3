//! Launch shapes and their validation against a device's limits.

use crate::{Error, Limits, Result};

/// A 1-3D extent: grid in blocks, or block in threads.
///
/// # Examples
/// ```
/// use kiln_core::Dim3;
/// assert_eq!(Dim3::from(256), Dim3 { x: 256, y: 1, z: 1 });
/// assert_eq!(Dim3::from((16, 16)).count(), 256);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent along x.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// Product of the three extents, saturating at `u64::MAX` (three `u32`
    /// extents can multiply to nearly 2^96).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Dim3;
    /// assert_eq!(Dim3::from((1 << 16, 1 << 16, 1 << 16)).count(), 1 << 48);
    /// assert_eq!(Dim3::from((u32::MAX, u32::MAX, 2)).count(), u64::MAX);
    /// ```
    pub const fn count(self) -> u64 {
        (self.x as u64 * self.y as u64).saturating_mul(self.z as u64)
    }

    /// Whether any extent is zero (the product is then zero; tested directly,
    /// so no overflow can make a non-empty extent look empty).
    pub const fn is_empty(self) -> bool {
        self.x == 0 || self.y == 0 || self.z == 0
    }

    fn as_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// Grid, block and dynamic shared memory of one launch.
///
/// A launch with zero threads in all (any extent 0) is a no-op, not an error.
/// Everything else is checked against the device's [`Limits`] before it
/// reaches the driver.
///
/// # Examples
/// ```
/// use kiln_core::LaunchConfig;
/// let cfg = LaunchConfig::for_elements(1000, 256);
/// assert_eq!(cfg.grid.x, 4);
/// assert_eq!(cfg.block.x, 256);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks (workgroups) in the grid.
    pub grid: Dim3,
    /// Threads (work items) in one block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A launch of `grid` blocks of `block` threads, with no dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig { grid: grid.into(), block: block.into(), shared_mem_bytes: 0 }
    }

    /// One thread per element: `ceil(n / block)` blocks of `block` threads.
    /// The grid saturates at `u32::MAX` blocks; validation then names the limit.
    pub fn for_elements(n: usize, block: u32) -> Self {
        let blocks = if block == 0 { 0 } else { n.div_ceil(block as usize) };
        LaunchConfig::new(u32::try_from(blocks).unwrap_or(u32::MAX), block)
    }

    /// One thread per pixel of a `width` x `height` grid, in `bx` x `by` blocks.
    pub fn for_2d(width: usize, height: usize, bx: u32, by: u32) -> Self {
        let cx = |n: usize, b: u32| {
            if b == 0 {
                0
            } else {
                u32::try_from(n.div_ceil(b as usize)).unwrap_or(u32::MAX)
            }
        };
        LaunchConfig::new((cx(width, bx), cx(height, by)), (bx, by))
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Threads in the whole launch, saturating at `u64::MAX` (a grid at
    /// CUDA's limits of blocks of 1024 threads holds about 2^73).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::LaunchConfig;
    /// assert_eq!(LaunchConfig::new((4, 2), 32).threads(), 256);
    /// assert_eq!(LaunchConfig::new((1 << 16, 1 << 16), (1 << 16, 1 << 16)).threads(), u64::MAX);
    /// ```
    pub fn threads(&self) -> u64 {
        self.grid.count().saturating_mul(self.block.count())
    }

    /// Whether the launch has no threads at all (and so does nothing): some
    /// extent of the grid or the block is zero.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::LaunchConfig;
    /// assert!(LaunchConfig::new((4, 0), 32).is_empty());
    /// // 2^32 blocks of 2^32 threads: 2^64 threads, not zero.
    /// assert!(!LaunchConfig::new((1 << 16, 1 << 16), (1 << 16, 1 << 16)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty() || self.block.is_empty()
    }

    /// Check this launch against `limits`; the error names the limit and the excess.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{LaunchConfig, Limits};
    /// let limits = Limits {
    ///     max_threads_per_block: 1024, max_block: [1024, 1024, 64],
    ///     max_grid: [i32::MAX as u32, 65535, 65535], max_shared_mem_per_block: 49152,
    ///     max_buffer_bytes: 1 << 40, max_binding_bytes: 1 << 40, warp_size: 32,
    ///     min_warp_size: 32,
    /// };
    /// let err = LaunchConfig::new(1, (33, 33)).validate(&limits, "k").unwrap_err();
    /// assert!(err.to_string().contains("block (33,33,1) = 1089 threads; this device allows 1024"));
    /// ```
    pub fn validate(&self, limits: &Limits, kernel: &str) -> Result<()> {
        let fail = |reason: String| Err(Error::InvalidLaunch { kernel: kernel.to_string(), reason });
        if self.is_empty() {
            return Ok(());
        }
        let threads = self.block.count();
        if threads > limits.max_threads_per_block as u64 {
            return fail(format!(
                "block {} = {threads} threads; this device allows {}",
                self.block, limits.max_threads_per_block
            ));
        }
        for (axis, ((b, g), (mb, mg))) in ["x", "y", "z"].iter().zip(
            self.block
                .as_array()
                .into_iter()
                .zip(self.grid.as_array())
                .zip(limits.max_block.into_iter().zip(limits.max_grid)),
        ) {
            if b > mb {
                return fail(format!("block {} has {b} threads along {axis}; this device allows {mb}", self.block));
            }
            if g > mg {
                return fail(format!("grid {} has {g} blocks along {axis}; this device allows {mg}", self.grid));
            }
        }
        if self.shared_mem_bytes > limits.max_shared_mem_per_block {
            return fail(format!(
                "{} bytes of dynamic shared memory per block; this device allows {}",
                self.shared_mem_bytes, limits.max_shared_mem_per_block
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::limits;

    const BIG: u32 = 1 << 16;

    #[test]
    fn counts_saturate_instead_of_overflowing() {
        assert_eq!(Dim3::from((u32::MAX, u32::MAX)).count(), u64::from(u32::MAX) * u64::from(u32::MAX));
        assert_eq!(Dim3::from((u32::MAX, u32::MAX, 2)).count(), u64::MAX);
        assert_eq!(Dim3::from((u32::MAX, u32::MAX, u32::MAX)).count(), u64::MAX);
        assert_eq!(LaunchConfig::new((u32::MAX, u32::MAX, u32::MAX), 1024).threads(), u64::MAX);
        assert_eq!(LaunchConfig::new((u32::MAX, 2), 1024).threads(), u64::from(u32::MAX) * 2 * 1024);
    }

    #[test]
    fn a_product_of_2_pow_64_is_not_empty() {
        // 2^32 blocks of 2^32 threads: the product wraps to 0 in 64 bits.
        let cfg = LaunchConfig::new((BIG, BIG), (BIG, BIG));
        assert!(!cfg.is_empty());
        assert_eq!(cfg.threads(), u64::MAX);
        let err = cfg.validate(&limits(), "k").unwrap_err();
        assert!(err.to_string().contains("4294967296 threads; this device allows 1024"), "{err}");
    }

    #[test]
    fn any_zero_extent_is_empty() {
        for cfg in [
            LaunchConfig::new((0, u32::MAX, u32::MAX), 1024),
            LaunchConfig::new((u32::MAX, u32::MAX, u32::MAX), (1024, 0)),
            LaunchConfig::new(1, (1, 1, 0)),
        ] {
            assert!(cfg.is_empty(), "{cfg:?}");
            assert_eq!(cfg.threads(), 0);
            assert!(cfg.validate(&limits(), "k").is_ok());
        }
    }
}
