//! What a device is and what it can do: its backend (generated from the
//! one list of backends, [`backend_list!`](crate::backend_list)), names,
//! limits, optional features.

use std::fmt;
use std::str::FromStr;

use crate::{Error, IndexWidth, Result};

/// `BackendKind` and its names, from the entries of [`backend_list!`](crate::backend_list).
macro_rules! backend_kinds {
    (() $(
        $(#[doc = $doc:literal])*
        $variant:ident { name: $name:literal, preference: $preference:literal, $(feature: $feature:literal,)? backend: $backend:path },
    )*) => {
        /// The backends kiln knows, one per entry of
        /// [`backend_list!`](crate::backend_list), in its order.
        ///
        /// # Examples
        /// ```
        /// use kiln_core::BackendKind;
        /// assert_eq!("cuda".parse::<BackendKind>().unwrap(), BackendKind::Cuda);
        /// let unknown = "opencl".parse::<BackendKind>().unwrap_err();
        /// assert_eq!(unknown.to_string(), r#"unknown backend "opencl": expected one of cpu, cuda, wgpu"#);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum BackendKind {
            $($(#[doc = $doc])* $variant,)*
        }

        /// Every backend, in the list's order.
        const LISTED: &[BackendKind] = &[$(BackendKind::$variant),*];

        impl BackendKind {
            /// Lower-case name ("cuda").
            pub const fn name(self) -> &'static str {
                match self {
                    $(BackendKind::$variant => $name,)*
                }
            }

            /// Where `kiln::Device::best` tries the backend, lower first
            /// (GPUs before the CPU): the order of [`ALL`](Self::ALL).
            ///
            /// # Examples
            /// ```
            /// use kiln_core::BackendKind;
            /// assert!(BackendKind::Cuda.preference() < BackendKind::Cpu.preference());
            /// ```
            pub const fn preference(self) -> u8 {
                match self {
                    $(BackendKind::$variant => $preference,)*
                }
            }
        }

        impl FromStr for BackendKind {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $($name => Ok(BackendKind::$variant),)*
                    _ => Err(Error::UnknownBackend { name: s.to_string() }),
                }
            }
        }
    };
}
crate::backend_list!(backend_kinds!());

impl BackendKind {
    /// Every backend, in order of preference (GPUs first), as `kiln::Device::best` tries them.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::BackendKind;
    /// assert_eq!(BackendKind::ALL, [BackendKind::Cuda, BackendKind::Wgpu, BackendKind::Cpu]);
    /// ```
    pub const ALL: [BackendKind; LISTED.len()] = by_preference();

    /// The names a backend may be asked for by, in the list's order: "cpu, cuda, wgpu".
    pub(crate) fn names() -> String {
        LISTED.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
    }
}

/// [`LISTED`], ordered by [`BackendKind::preference`] (an insertion sort:
/// `ALL` is a constant).
const fn by_preference() -> [BackendKind; LISTED.len()] {
    let mut kinds = [BackendKind::Cpu; LISTED.len()];
    let mut i = 0;
    while i < LISTED.len() {
        let mut j = i;
        while j > 0 && kinds[j - 1].preference() > LISTED[i].preference() {
            kinds[j] = kinds[j - 1];
            j -= 1;
        }
        kinds[j] = LISTED[i];
        i += 1;
    }
    kinds
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Launch and memory limits of a device; [`LaunchConfig`](crate::LaunchConfig)
/// is checked against these before every launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most threads (work items) in one block (workgroup).
    pub max_threads_per_block: u32,
    /// Most threads along each block dimension.
    pub max_block: [u32; 3],
    /// Most blocks along each grid dimension.
    pub max_grid: [u32; 3],
    /// Most shared (workgroup) memory one block may use, in bytes.
    pub max_shared_mem_per_block: u32,
    /// Largest single buffer, in bytes.
    pub max_buffer_bytes: u64,
    /// Largest range one kernel argument may bind, in bytes (wgpu's storage
    /// binding limit; equal to `max_buffer_bytes` where there is none).
    pub max_binding_bytes: u64,
    /// Threads that execute in lock-step (warp, subgroup); 1 on the CPU.
    /// Where the size varies between kernels (some wgpu adapters), the largest.
    pub warp_size: u32,
    /// The fewest threads a warp (subgroup) may have; equal to `warp_size`
    /// where the size is fixed.
    pub min_warp_size: u32,
}

/// Optional features of a device, and the properties kernels choose their
/// plans from: whether blocks may wait on each other, how wide kernels
/// index, how wide one thread's accesses should be. Patterns branch on
/// these, never on the backend's name, so a new backend (or a device of an
/// existing one that differs) gets the plans its properties call for.
///
/// The [`Default`] is the least a device can offer: no optional feature, no
/// forward progress between blocks, 32-bit indices, 4-byte accesses.
///
/// | field | CUDA | wgpu | CPU |
/// |---|---|---|---|
/// | `f64` | yes | `SHADER_F64` | yes |
/// | `f16` | sm_53 and later | `SHADER_F16` | yes |
/// | `bf16` | yes | no | yes |
/// | `wide_multiply` | yes | Vulkan | yes |
/// | `forward_progress` | yes | no | yes |
/// | `index_width` | `U64` | `U32` | `U64` |
/// | `vector_bytes` | 16 | 4 | 16 |
/// | `matrix_units` | sm_80 and later | none | none |
///
/// # Examples
/// ```
/// use kiln_core::{Device, IndexWidth};
/// let cpu = Device::<kiln_cpu::Cpu>::open(0)?;
/// let f = cpu.info().features;
/// assert!(f.forward_progress && f.bf16);
/// assert_eq!((f.index_width, f.vector_bytes), (IndexWidth::U64, 16));
/// # Ok::<(), kiln_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// 64-bit floats in kernels.
    pub f64: bool,
    /// 16-bit floats in kernels.
    pub f16: bool,
    /// bfloat16 arithmetic in kernels (CUDA through kiln's own `kiln_bf16`,
    /// on every architecture; WGSL has no bfloat16 type).
    pub bf16: bool,
    /// Atomic add on 32-bit floats.
    pub float_atomics: bool,
    /// 64-bit integer arithmetic in kernels: always in CUDA C and on the
    /// CPU; in WGSL where the adapter has `SHADER_INT64` (naga's `u64` and
    /// `i64`), which kiln's kernels use for the high word of a 32-bit
    /// product where that is faster than its 16-bit halves.
    pub int64: bool,
    /// The high word of a 32-bit product takes one instruction in kiln's
    /// kernels: `__umulhi` in CUDA C; 64-bit products on the CPU; on wgpu
    /// where kiln writes the SPIR-V of kernels that call the WGSL function
    /// `kiln_mul_wide(a: u32, b: u32) -> vec2<u32>` itself, each call one
    /// `OpUMulExtended` (Vulkan, with wgpu's passthrough shaders). Where it
    /// is false, WGSL builds the high word from 16-bit halves or, where
    /// `int64` is true, a 64-bit product.
    pub wide_multiply: bool,
    /// Subgroup (warp) operations.
    pub subgroups: bool,
    /// Device-side timestamps, so events can measure elapsed time.
    pub timestamps: bool,
    /// Blocks of one launch make progress independently of each other, so
    /// a block may spin until an earlier block publishes a value without
    /// starving it: what decoupled look-back (the one-pass scan, compaction
    /// and sort) needs. CUDA keeps every resident block running and hands
    /// out tiles in launch order; WGSL and Vulkan promise nothing between
    /// workgroups (a spinning workgroup may hold the only core the awaited
    /// one could run on), so there patterns take several launches instead.
    /// The CPU's host fns run on threads the OS schedules preemptively.
    pub forward_progress: bool,
    /// How wide the device's kernels index arrays, and so the type of every
    /// length they take ([`Args::length`](crate::Args::length)): 64 bits on
    /// CUDA and the CPU, 32 on WGSL, which has no 64-bit integers.
    pub index_width: IndexWidth,
    /// The widest global-memory access one thread of a memory-bound kernel
    /// should make, in bytes, where the operands' alignment allows: 16 on
    /// CUDA (128-bit vector loads and stores), 4 on wgpu (kiln's WGSL
    /// kernels move 32-bit words, packing narrower elements into them), 16
    /// on the CPU (the SIMD width of every x86-64 and aarch64 host). Launch
    /// shapes are sized from it; kernels loop grid-stride, so it never
    /// changes results.
    pub vector_bytes: u32,
    /// Matrix multiply-accumulate units that kiln's own kernels program
    /// directly (NVIDIA's tensor cores through `mma.sync`, cooperative
    /// matrices on wgpu), by input type.
    pub matrix_units: MatrixUnits,
}

/// The input types a device's matrix units (tensor cores) multiply in
/// kernels kiln writes itself, each into sums of its accumulator type.
/// All false where kiln has no kernel for them ([`Default`]): the CPU, CUDA
/// devices before sm_80, and wgpu adapters without cooperative matrices.
///
/// | field | inputs, sums | CUDA | wgpu |
/// |---|---|---|---|
/// | `half` | f16 and bf16, f32 | `mma.sync.m16n8k16`, sm_80 and later | f16: `coop_mat16x16` where the adapter offers f16 into f32 (`VK_KHR_cooperative_matrix`) to 32-invocation subgroups, and `KILN_WGPU_COOPERATIVE_MATRIX=1` asks for them |
/// | `tf32` | f32 rounded to TF32, f32 | `mma.sync.m16n8k8`, sm_80 and later | - |
/// | `f64` | f64, f64 (exact FMA) | `mma.sync.m16n8k8` on sm_90, `m8n8k4` on sm_80 to sm_89 | - |
///
/// # Examples
/// ```
/// let cpu = kiln_core::Device::<kiln_cpu::Cpu>::open(0)?;
/// assert_eq!(cpu.info().features.matrix_units, kiln_core::MatrixUnits::default());
/// # Ok::<(), kiln_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatrixUnits {
    /// f16 and bf16 inputs, f32 sums.
    pub half: bool,
    /// f32 inputs rounded to TF32 (10 mantissa bits), f32 sums.
    pub tf32: bool,
    /// f64 inputs and sums.
    pub f64: bool,
}

impl MatrixUnits {
    /// Every unit kiln has kernels for.
    pub const ALL: MatrixUnits = MatrixUnits { half: true, tf32: true, f64: true };
}

impl Default for Features {
    fn default() -> Self {
        Features {
            f64: false,
            f16: false,
            bf16: false,
            float_atomics: false,
            int64: false,
            wide_multiply: false,
            subgroups: false,
            timestamps: false,
            forward_progress: false,
            index_width: IndexWidth::U32,
            vector_bytes: 4,
            matrix_units: MatrixUnits::default(),
        }
    }
}

/// What sort of hardware runs a device's kernels, as its driver reports it.
///
/// [`Software`](DeviceKind::Software) is a GPU API emulated on the host's CPU
/// (Mesa's lavapipe or llvmpipe, SwiftShader): it runs kernels correctly but
/// more slowly than kiln's own CPU backend, so `kiln::Device::best` never
/// picks one unless it is asked for by name.
///
/// # Examples
/// ```
/// use kiln_core::DeviceKind;
/// assert!(DeviceKind::Software.is_software());
/// assert!(DeviceKind::DiscreteGpu.is_gpu() && !DeviceKind::Software.is_gpu());
/// assert_eq!(DeviceKind::Software.to_string(), "software GPU");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A GPU with its own memory (an NVIDIA or AMD card, an H100).
    DiscreteGpu,
    /// A GPU sharing the host's memory (most laptop and phone GPUs).
    IntegratedGpu,
    /// A GPU seen through a virtual machine's driver.
    VirtualGpu,
    /// A GPU API emulated in software on the host's CPU (lavapipe, llvmpipe).
    Software,
    /// The host's CPU, driven directly (kiln's CPU backend).
    Cpu,
    /// The driver does not say.
    Other,
}

impl DeviceKind {
    /// Whether kernels run on GPU hardware (discrete, integrated or virtual).
    pub const fn is_gpu(self) -> bool {
        matches!(self, DeviceKind::DiscreteGpu | DeviceKind::IntegratedGpu | DeviceKind::VirtualGpu)
    }

    /// Whether the device is a GPU emulated in software on the CPU.
    pub const fn is_software(self) -> bool {
        matches!(self, DeviceKind::Software)
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::DiscreteGpu => "discrete GPU",
            DeviceKind::IntegratedGpu => "integrated GPU",
            DeviceKind::VirtualGpu => "virtual GPU",
            DeviceKind::Software => "software GPU",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "unknown device type",
        })
    }
}

/// A device's identity, limits and features.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// The backend the device belongs to.
    pub backend: BackendKind,
    /// Its position in the backend's device list.
    pub ordinal: usize,
    /// Human-readable name ("NVIDIA H100 80GB HBM3").
    pub name: String,
    /// GPU hardware, a GPU emulated in software, or the CPU.
    pub kind: DeviceKind,
    /// Multiprocessors, compute units or CPU threads.
    pub compute_units: u32,
    /// Total device memory in bytes (host memory on the CPU).
    pub memory_bytes: u64,
    /// CUDA compute capability, where it applies.
    pub compute_capability: Option<(u32, u32)>,
    /// Driver or API version, free text ("CUDA driver 13.0", "Vulkan 1.3 (lavapipe)").
    pub driver: String,
    /// Launch and memory limits.
    pub limits: Limits,
    /// Optional features.
    pub features: Features,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} {} ({}, {} compute units, {:.1} GiB",
            self.backend,
            self.ordinal,
            self.name,
            self.kind,
            self.compute_units,
            self.memory_bytes as f64 / (1u64 << 30) as f64
        )?;
        if let Some((ma, mi)) = self.compute_capability {
            write!(f, ", sm_{ma}{mi}")?;
        }
        write!(f, ", {})", self.driver)
    }
}

/// Free and total memory of a device, and what this process's allocator
/// holds there, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes free now (for every process: the driver's figure).
    pub free: u64,
    /// Bytes in all.
    pub total: u64,
    /// Bytes of live allocations this process holds on the device, where
    /// the backend counts them: CUDA's stream-ordered pool (used memory),
    /// wgpu's allocator report; `None` elsewhere.
    pub allocated: Option<u64>,
    /// Bytes the allocator has taken from the device, allocated or kept for
    /// reuse (at least `allocated`): CUDA's pool (reserved memory), wgpu's
    /// memory blocks; `None` where not counted.
    pub reserved: Option<u64>,
}
