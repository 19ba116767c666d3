//! The languages kernels are written in, and how a length reaches a kernel.
//!
//! A [`Program`](crate::Program) holds one source per [`Language`]; each
//! backend says which language it compiles ([`Backend::LANGUAGE`]), so that
//! a new backend that reads an existing language needs no change to
//! `Program` or to the programs written for that language.
//!
//! Lengths are the one kernel argument whose type depends on the device:
//! [`IndexWidth`] says how wide the device's kernels index, and
//! [`Args::length`] passes a length in that width, refusing one that does
//! not fit. Every length of the kernel ABI goes through it.

use std::fmt;

use crate::{Args, Backend, Error, Result};

/// A language a kernel's source is written in.
///
/// # Examples
/// ```
/// use kiln_core::{Backend, Language};
/// assert_eq!(<kiln_cpu::Cpu as Backend>::LANGUAGE, Language::Host);
/// assert_eq!(Language::Wgsl.to_string(), "WGSL");
/// assert!(Language::Host.runs_whole_launch() && !Language::Cuda.runs_whole_launch());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Language {
    /// CUDA C++, compiled at run time by NVRTC (the CUDA backend).
    Cuda,
    /// WGSL, compiled by naga (the wgpu backend); defines substitute whole
    /// identifiers (see [`Program::expanded`](crate::Program::expanded)).
    Wgsl,
    /// A Rust function, a [`HostFn`](crate::HostFn), run on the host (the CPU backend).
    Host,
}

impl Language {
    /// Every language.
    pub const ALL: [Language; 3] = [Language::Cuda, Language::Wgsl, Language::Host];

    /// The name error messages use ("CUDA C++").
    pub const fn name(self) -> &'static str {
        match self {
            Language::Cuda => "CUDA C++",
            Language::Wgsl => "WGSL",
            Language::Host => "host fn",
        }
    }

    /// Whether a kernel in this language runs a whole launch (every block
    /// and thread) in one call, as a host fn does: the launch's grid is
    /// then a formality, and a plan gains nothing by splitting the work
    /// into tiles or passes for it.
    pub const fn runs_whole_launch(self) -> bool {
        matches!(self, Language::Host)
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How wide a device's kernels index arrays, and so the type a length is
/// passed in (the kernel ABI's length convention, `kiln-kernels`' README).
///
/// The default is the narrower, [`U32`](IndexWidth::U32).
///
/// # Examples
/// ```
/// use kiln_core::IndexWidth;
/// assert_eq!(IndexWidth::U32.max_len(), u32::MAX as u64);
/// assert!(IndexWidth::U32.check::<kiln_cpu::Cpu>(1 << 32, "a copy").is_err());
/// assert!(IndexWidth::U64.check::<kiln_cpu::Cpu>(1 << 32, "a copy").is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexWidth {
    /// 32-bit indices; lengths are passed as `u32` (WGSL, which has no 64-bit integers).
    #[default]
    U32,
    /// 64-bit indices; lengths are passed as `u64` (CUDA's `unsigned long
    /// long`, the CPU's host fns), so arrays past 2^32 elements work.
    U64,
}

impl IndexWidth {
    /// Bits of an index.
    pub const fn bits(self) -> u32 {
        match self {
            IndexWidth::U32 => 32,
            IndexWidth::U64 => 64,
        }
    }

    /// The largest count of elements (or words) a kernel can index.
    pub const fn max_len(self) -> u64 {
        match self {
            IndexWidth::U32 => u32::MAX as u64,
            IndexWidth::U64 => u64::MAX,
        }
    }

    /// `Err(Unsupported)` from backend `B` when `count` elements (or words:
    /// whatever the kernels index) cannot be indexed at this width; `what`
    /// names the operation.
    pub fn check<B: Backend>(self, count: u64, what: &str) -> Result<()> {
        if count <= self.max_len() {
            return Ok(());
        }
        let reason = format!("{count} elements exceed the device's {}-bit kernel indices", self.bits());
        Err(Error::unsupported(B::KIND, what, reason))
    }
}

impl<B: Backend> Args<'_, B> {
    /// Append the length `n` as the device's kernels take it: a `u32` at
    /// [`IndexWidth::U32`], a `u64` at [`IndexWidth::U64`]. `what` names the
    /// kernel or operation for the error when `n` does not fit.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Args, IndexWidth};
    /// use kiln_cpu::Cpu;
    /// let args = Args::<Cpu>::new().length(IndexWidth::U64, 1 << 33, "kernel `k`")?;
    /// assert_eq!(args.len(), 1);
    /// assert!(Args::<Cpu>::new().length(IndexWidth::U32, 1 << 33, "kernel `k`").is_err());
    /// # Ok::<(), kiln_core::Error>(())
    /// ```
    pub fn length(self, width: IndexWidth, n: usize, what: &str) -> Result<Self> {
        width.check::<B>(n as u64, what)?;
        Ok(match width {
            IndexWidth::U32 => self.arg(n as u32),
            IndexWidth::U64 => self.arg(n as u64),
        })
    }
}
