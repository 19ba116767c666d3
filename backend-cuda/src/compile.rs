//! Compiling a `Program`'s CUDA source with NVRTC, through the disk cache.
//!
//! NVRTC targets the device's own architecture (`sm_90` on the H100) and
//! hands back a CUBIN, which loads without the driver's PTX JIT. Where this
//! NVRTC does not know the device (a device newer than the toolkit), it
//! targets the newest virtual architecture it knows and the driver compiles
//! the PTX at load time.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cudarc::nvrtc::Ptx;
use kiln_core::{BackendKind, Error, Program, Result};

use crate::cache::{self, CacheStatus, Lookup};
use crate::error::is_bad_image;
use crate::ffi::{self, NvrtcFailure, NvrtcImage};
use crate::state::DeviceState;
use crate::CudaKernel;

/// Version tag of the cache key layout; bump it to orphan old entries.
const KEY_VERSION: &[u8] = b"kiln-nvrtc-key-1";

/// NVRTC for one device: the target, NVRTC's version and the cache directory.
pub(crate) struct Compiler {
    /// NVRTC's version, or why NVRTC cannot be used.
    nvrtc: std::result::Result<(i32, i32), String>,
    /// `sm_XY` (CUBIN) or `compute_XY` (PTX).
    target: String,
    cubin: bool,
    /// The CUDA toolkit's include directory, when one is installed, so that
    /// sources can include `cuda_fp16.h` and friends.
    toolkit_include: Option<PathBuf>,
    cache_dir: Mutex<Option<PathBuf>>,
}

/// The target for a device of compute capability `cc` (90 for 9.0), given
/// the real architectures NVRTC supports.
fn choose_target(cc: i32, supported: &[i32]) -> (String, bool) {
    if supported.contains(&cc) {
        return (format!("sm_{cc}"), true);
    }
    let newest = supported.iter().copied().filter(|&a| a <= cc).max().unwrap_or(cc);
    (format!("compute_{newest}"), false)
}

fn toolkit_include() -> Option<PathBuf> {
    let roots = ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"].iter().filter_map(|v| std::env::var_os(v).map(PathBuf::from));
    roots.chain([PathBuf::from("/usr/local/cuda")]).map(|r| r.join("include")).find(|d| d.join("cuda_fp16.h").is_file())
}

/// Entry points are C identifiers; anything else cannot be looked up by name.
fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            format!("kernel name {name:?}"),
            "a CUDA entry point must be a C identifier (letters, digits, '_', not starting with a digit)",
        ))
    }
}

impl Compiler {
    /// Set up NVRTC for a device of compute capability (major, minor).
    pub(crate) fn new((major, minor): (u32, u32)) -> Self {
        let cc = (major * 10 + minor) as i32;
        let nvrtc = if ffi::nvrtc_present() {
            ffi::nvrtc_version()
        } else {
            Err("NVRTC not found: libnvrtc.so could not be loaded (install the CUDA toolkit's NVRTC)".to_string())
        };
        let archs = if nvrtc.is_ok() { ffi::nvrtc_archs().unwrap_or_default() } else { Vec::new() };
        let (target, cubin) = choose_target(cc, &archs);
        Compiler {
            nvrtc,
            target,
            cubin,
            toolkit_include: toolkit_include(),
            cache_dir: Mutex::new(cache::dir_from_env()),
        }
    }

    /// NVRTC's version, when NVRTC is present.
    pub(crate) fn nvrtc_version(&self) -> Option<(i32, i32)> {
        self.nvrtc.as_ref().ok().copied()
    }

    pub(crate) fn cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_cache_dir(&self, dir: Option<PathBuf>) {
        *self.cache_dir.lock().unwrap_or_else(|p| p.into_inner()) = dir;
    }

    /// The options NVRTC receives: the target, the toolkit's includes, then
    /// the program's flags, defines and include paths.
    fn options(&self, program: &Program) -> Vec<String> {
        let mut out = vec![format!("--gpu-architecture={}", self.target)];
        out.extend(self.toolkit_include.iter().map(|d| format!("--include-path={}", d.display())));
        let o = program.options();
        out.extend(o.flags.iter().cloned());
        out.extend(o.defines.iter().map(|(k, v)| format!("-D{k}={v}")));
        out.extend(o.include_paths.iter().map(|p| format!("--include-path={}", p.display())));
        out
    }

    /// Compile `program` (or load it from the disk cache) and load it into the device.
    pub(crate) fn compile(&self, state: &Arc<DeviceState>, program: &Program, shared_limit: u32) -> Result<CudaKernel> {
        let name = program.name();
        let source = program.cuda_source().ok_or_else(|| {
            Error::unsupported(BackendKind::Cuda, format!("kernel `{name}`"), "the program has no CUDA source")
        })?;
        check_name(name)?;
        let (major, minor) = *self
            .nvrtc
            .as_ref()
            .map_err(|why| Error::unsupported(BackendKind::Cuda, format!("compiling kernel `{name}`"), why.clone()))?;
        state.check_usable()?;
        let options = self.options(program);
        let job = Job { name, source, options: &options, cubin: self.cubin };
        let (image, status) = match self.cache_dir() {
            None => (job.run()?, CacheStatus::Disabled),
            Some(dir) => {
                let version = format!("{major}.{minor}");
                let joined = options.join("\0");
                let key = cache::key(&[
                    KEY_VERSION,
                    name.as_bytes(),
                    source.as_bytes(),
                    joined.as_bytes(),
                    self.target.as_bytes(),
                    version.as_bytes(),
                ]);
                match cache::load(&dir, &key) {
                    Lookup::Hit(e) => {
                        let image = NvrtcImage { bytes: e.bytes, cubin: e.cubin };
                        match load_module(state, &image) {
                            Ok(module) => return self.finish(state, &module, name, shared_limit, CacheStatus::Hit),
                            Err(e) if is_bad_image(e) => {
                                let reason =
                                    format!("the driver refused the cached image: {}", crate::error::describe(e));
                                job.run_and_store(&dir, &key, Some(reason))?
                            }
                            Err(e) => return Err(state.fail("cuModuleLoadData", e, 0)),
                        }
                    }
                    Lookup::Miss => job.run_and_store(&dir, &key, None)?,
                    Lookup::Damaged(reason) => job.run_and_store(&dir, &key, Some(reason))?,
                }
            }
        };
        let module = load_module(state, &image).map_err(|e| {
            if is_bad_image(e) {
                job.error(format!(
                    "the driver refused the module NVRTC built for {}: {}",
                    self.target,
                    crate::error::describe(e)
                ))
            } else {
                state.fail("cuModuleLoadData", e, 0)
            }
        })?;
        self.finish(state, &module, name, shared_limit, status)
    }

    fn finish(
        &self,
        state: &Arc<DeviceState>,
        module: &Arc<cudarc::driver::CudaModule>,
        name: &str,
        shared_limit: u32,
        status: CacheStatus,
    ) -> Result<CudaKernel> {
        CudaKernel::load(state, module, name, shared_limit, status, self.target.clone())
    }
}

/// One NVRTC compilation.
struct Job<'a> {
    name: &'a str,
    source: &'a str,
    options: &'a [String],
    cubin: bool,
}

impl Job<'_> {
    fn error(&self, log: String) -> Error {
        Error::Compile {
            backend: BackendKind::Cuda,
            kernel: self.name.to_string(),
            options: self.options.to_vec(),
            log,
        }
    }

    fn run(&self) -> Result<NvrtcImage> {
        let nul = |what: &str| Error::invalid(format!("{what} of kernel `{}`", self.name), "contains a NUL byte");
        let source = CString::new(self.source).map_err(|_| nul("the CUDA source"))?;
        let name = CString::new(format!("{}.cu", self.name)).map_err(|_| nul("the name"))?;
        let options = self
            .options
            .iter()
            .map(|o| CString::new(o.as_str()).map_err(|_| nul(&format!("compile option {o:?}"))))
            .collect::<Result<Vec<_>>>()?;
        ffi::nvrtc_compile(&source, &name, &options, self.cubin).map_err(|f| match f {
            NvrtcFailure::Compile(log) => self.error(log),
            NvrtcFailure::Call(detail) => {
                Error::driver(BackendKind::Cuda, format!("NVRTC compiling kernel `{}`", self.name), detail)
            }
        })
    }

    /// Compile and write the cache entry; `damaged` says why an existing entry is being replaced.
    fn run_and_store(
        &self,
        dir: &std::path::Path,
        key: &str,
        damaged: Option<String>,
    ) -> Result<(NvrtcImage, CacheStatus)> {
        let image = self.run()?;
        let status = match (cache::store(dir, key, image.cubin, &image.bytes), damaged) {
            (Err(reason), _) => CacheStatus::NotStored { reason },
            (Ok(()), Some(reason)) => CacheStatus::Rebuilt { reason },
            (Ok(()), None) => CacheStatus::Stored,
        };
        Ok((image, status))
    }
}

fn load_module(
    state: &DeviceState,
    image: &NvrtcImage,
) -> std::result::Result<Arc<cudarc::driver::CudaModule>, cudarc::driver::DriverError> {
    state.ctx.load_module(Ptx::from_binary(image.bytes.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_the_device_when_nvrtc_knows_it() {
        assert_eq!(choose_target(90, &[75, 80, 86, 89, 90, 100, 120]), ("sm_90".to_string(), true));
        assert_eq!(choose_target(130, &[75, 80, 90, 120]), ("compute_120".to_string(), false));
    }

    #[test]
    fn entry_points_must_be_identifiers() {
        assert!(check_name("saxpy_f32").is_ok());
        assert!(check_name("_k2").is_ok());
        for bad in ["", "2k", "a-b", "a b", "k\0"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
