//! Compiling a `Program`'s CUDA source with NVRTC, through the disk cache.
//!
//! NVRTC targets the device's own architecture (`sm_90` on the H100) and
//! hands back a CUBIN, which loads without the driver's PTX JIT. Where this
//! NVRTC does not know the device (a device newer than the toolkit), it
//! targets the newest virtual architecture it knows and the driver compiles
//! the PTX at load time. So does an NVRTC too old to list its architectures
//! (before 11.2) or to hand back a CUBIN (before 11.1): each such call is
//! looked up in the library before it is made, as cudarc panics on a missing
//! one.

use std::ffi::CString;
use std::path::{Path, PathBuf};
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
        // Without the list of real architectures (NVRTC before 11.2) or a way
        // to fetch a CUBIN (before 11.1), target PTX, which the driver finishes.
        let archs =
            if nvrtc.is_ok() && ffi::nvrtc_has_cubin() { ffi::nvrtc_archs().unwrap_or_default() } else { Vec::new() };
        let (target, cubin) = choose_target(cc, &archs);
        let cache_dir = cache::dir_from_env();
        if let Some(dir) = &cache_dir {
            cache::remove_stale_temporaries(dir);
        }
        Compiler { nvrtc, target, cubin, toolkit_include: toolkit_include(), cache_dir: Mutex::new(cache_dir) }
    }

    /// What NVRTC targets: `sm_XY` (a CUBIN) or `compute_XY` (PTX).
    #[cfg(test)]
    fn target(&self) -> &str {
        &self.target
    }

    /// NVRTC's version, when NVRTC is present.
    pub(crate) fn nvrtc_version(&self) -> Option<(i32, i32)> {
        self.nvrtc.as_ref().ok().copied()
    }

    pub(crate) fn cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_cache_dir(&self, dir: Option<PathBuf>) {
        if let Some(dir) = &dir {
            cache::remove_stale_temporaries(dir);
        }
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
        let source = program.source_for::<crate::Cuda>()?.text().ok_or_else(|| {
            Error::unsupported(BackendKind::Cuda, format!("kernel `{name}`"), "its CUDA source is a host fn, not text")
        })?;
        check_name(name)?;
        let (major, minor) = *self
            .nvrtc
            .as_ref()
            .map_err(|why| Error::unsupported(BackendKind::Cuda, format!("compiling kernel `{name}`"), why.clone()))?;
        state.check_usable()?;
        let options = self.options(program);
        let job = Job { name, source, options: &options, cubin: self.cubin };
        let dir = self.cache_dir();
        let key = dir.as_ref().map(|_| {
            let version = format!("{major}.{minor}");
            let joined = options.join("\0");
            cache::key(&[
                KEY_VERSION,
                name.as_bytes(),
                source.as_bytes(),
                joined.as_bytes(),
                self.target.as_bytes(),
                version.as_bytes(),
            ])
        });
        let load = |image: &NvrtcImage| {
            load_module(state, image).map_err(|e| {
                if is_bad_image(e) {
                    LoadFailure::Refused(crate::error::describe(e))
                } else {
                    LoadFailure::Other(state.fail("cuModuleLoadData", e, 0))
                }
            })
        };
        let refused =
            |why: String| job.error(format!("the driver refused the module NVRTC built for {}: {why}", self.target));
        let (module, image, status) = obtain(dir.as_deref().zip(key.as_deref()), || job.run(), load, refused)?;
        CudaKernel::load(state, &module, &image, name, shared_limit, status, self.target.clone())
    }
}

/// Why the driver did not load a module image.
enum LoadFailure {
    /// It refused the image itself ([`is_bad_image`]); the text says why.
    Refused(String),
    /// Anything else (memory, a lost context), reported as it is.
    Other(Error),
}

/// A loaded module, through the disk cache entry `cache` (`None`: the cache
/// is off), with the image it came from and how it was obtained. NVRTC and the
/// driver come in as `compile` and `load`, so that the order of the steps can
/// be tested without a GPU:
///
/// - A cached entry is used when the driver loads it. One the driver refuses,
///   like one that fails its own checks, is deleted, then compiled and loaded
///   afresh (`Rebuilt`).
/// - A fresh image is written to the cache only after the driver has loaded
///   it: an image the driver refuses is an error (`refused` makes it), never
///   an entry that every later process would load, fail and rebuild.
fn obtain<M>(
    cache: Option<(&Path, &str)>,
    compile: impl Fn() -> Result<NvrtcImage>,
    load: impl Fn(&NvrtcImage) -> std::result::Result<M, LoadFailure>,
    refused: impl Fn(String) -> Error,
) -> Result<(M, NvrtcImage, CacheStatus)> {
    let fresh = || -> Result<(M, NvrtcImage)> {
        let image = compile()?;
        match load(&image) {
            Ok(module) => Ok((module, image)),
            Err(LoadFailure::Refused(why)) => Err(refused(why)),
            Err(LoadFailure::Other(e)) => Err(e),
        }
    };
    let Some((dir, key)) = cache else {
        let (module, image) = fresh()?;
        return Ok((module, image, CacheStatus::Disabled));
    };
    let replacing = match cache::load(dir, key) {
        Lookup::Miss => None,
        Lookup::Hit(entry) => {
            let image = NvrtcImage { bytes: entry.bytes, cubin: entry.cubin };
            match load(&image) {
                Ok(module) => return Ok((module, image, CacheStatus::Hit)),
                Err(LoadFailure::Refused(why)) => Some(format!("the driver refused the cached image: {why}")),
                Err(LoadFailure::Other(e)) => return Err(e),
            }
        }
        Lookup::Damaged(reason) => Some(reason),
    };
    if replacing.is_some() {
        // Gone before NVRTC runs: should compiling or loading fail below, no
        // bad entry stays behind to be tried again.
        cache::remove(dir, key);
    }
    let (module, image) = fresh()?;
    let status = match (cache::store(dir, key, image.cubin, &image.bytes), replacing) {
        (Err(reason), _) => CacheStatus::NotStored { reason },
        (Ok(()), Some(reason)) => CacheStatus::Rebuilt { reason },
        (Ok(()), None) => CacheStatus::Stored,
    };
    Ok((module, image, status))
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
}

/// Load `image`; when the device is out of memory, hand what the
/// stream-ordered pool keeps unused back to the driver and try once more
/// (as an allocation does).
fn load_module(
    state: &DeviceState,
    image: &NvrtcImage,
) -> std::result::Result<Arc<cudarc::driver::CudaModule>, cudarc::driver::DriverError> {
    let loaded = state.ctx.load_module(Ptx::from_binary(image.bytes.clone()));
    match loaded {
        Err(e) if state.pooled && crate::error::is_out_of_memory(e) => {
            let _ = crate::ffi::trim_pool(state.ctx.cu_device(), 0);
            state.ctx.load_module(Ptx::from_binary(image.bytes.clone()))
        }
        other => other,
    }
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

    // ------------------------------------------------ the disk cache's steps

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kiln-compile-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A fresh cache directory named after `tag`, and the key of an entry in it.
    fn cache_at(tag: &str) -> (PathBuf, String) {
        (temp_dir(tag), cache::key(&[tag.as_bytes()]))
    }

    fn image(bytes: &[u8]) -> NvrtcImage {
        NvrtcImage { bytes: bytes.to_vec(), cubin: true }
    }

    /// The driver's stand-in: it loads images that start with "good" and
    /// refuses the others, as `cuModuleLoadData` refuses an image for
    /// another architecture.
    fn load(image: &NvrtcImage) -> std::result::Result<Vec<u8>, LoadFailure> {
        if image.bytes.starts_with(b"good") {
            Ok(image.bytes.clone())
        } else {
            Err(LoadFailure::Refused("CUDA_ERROR_NO_BINARY_FOR_GPU".into()))
        }
    }

    fn refused(why: String) -> Error {
        Error::invalid("the module", why)
    }

    fn cached(dir: &Path, key: &str) -> Option<Vec<u8>> {
        match cache::load(dir, key) {
            Lookup::Hit(e) => Some(e.bytes),
            Lookup::Miss => None,
            Lookup::Damaged(r) => panic!("damaged entry: {r}"),
        }
    }

    #[test]
    fn an_image_the_driver_refuses_is_never_stored() {
        let (dir, key) = cache_at("refused");
        let entry = Some((dir.as_path(), key.as_str()));
        assert!(obtain(entry, || Ok(image(b"bad build")), load, refused).is_err());
        assert_eq!(cached(&dir, &key), None, "an image the driver refused was stored");
        // One the driver loads is stored, and the next lookup needs no NVRTC.
        let (module, _, status) = obtain(entry, || Ok(image(b"good build")), load, refused).unwrap();
        assert_eq!((module.as_slice(), status), (&b"good build"[..], CacheStatus::Stored));
        let (module, _, status) = obtain(entry, || unreachable!("compiled again"), load, refused).unwrap();
        assert_eq!((module.as_slice(), status), (&b"good build"[..], CacheStatus::Hit));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cached_image_the_driver_refuses_is_deleted_and_rebuilt() {
        let (dir, key) = cache_at("rejected");
        let entry = Some((dir.as_path(), key.as_str()));
        cache::store(&dir, &key, true, b"bad cached").unwrap();
        let (module, fresh, status) = obtain(entry, || Ok(image(b"good fresh")), load, refused).unwrap();
        assert_eq!((module.as_slice(), fresh.bytes.as_slice()), (&b"good fresh"[..], &b"good fresh"[..]));
        assert!(matches!(&status, CacheStatus::Rebuilt { reason } if reason.contains("refused")), "{status:?}");
        assert_eq!(cached(&dir, &key).as_deref(), Some(&b"good fresh"[..]));
        // When the fresh build is refused too, the refused entry does not stay
        // behind (nor is the fresh one stored).
        cache::store(&dir, &key, true, b"bad cached").unwrap();
        assert!(obtain(entry, || Ok(image(b"bad fresh")), load, refused).is_err());
        assert_eq!(cached(&dir, &key), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_entries_are_rebuilt_and_other_load_failures_keep_the_entry() {
        let (dir, key) = cache_at("damaged");
        let entry = Some((dir.as_path(), key.as_str()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(cache::entry_path(&dir, &key), b"garbage").unwrap();
        let (_, _, status) = obtain(entry, || Ok(image(b"good")), load, refused).unwrap();
        assert!(matches!(status, CacheStatus::Rebuilt { .. }), "{status:?}");
        // Out of memory, say: not the entry's fault, so it stays.
        let out_of_memory = |_: &NvrtcImage| -> std::result::Result<Vec<u8>, LoadFailure> {
            Err(LoadFailure::Other(Error::invalid("memory", "out of memory")))
        };
        assert!(obtain(entry, || unreachable!("compiled"), out_of_memory, refused).is_err());
        assert_eq!(cached(&dir, &key).as_deref(), Some(&b"good"[..]));
        // Without a cache every call compiles.
        let (_, _, status) = obtain(None, || Ok(image(b"good")), load, refused).unwrap();
        assert_eq!(status, CacheStatus::Disabled);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn opening_a_cache_directory_removes_stale_temporaries() {
        let dir = temp_dir("open");
        std::fs::create_dir_all(&dir).unwrap();
        let stale = dir.join(format!(".{}.4242.0.tmp", cache::key(&[b"open"])));
        let file = std::fs::File::create(&stale).unwrap();
        file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 60 * 60)).unwrap();
        // NVRTC need not be present for this.
        Compiler::new((9, 0)).set_cache_dir(Some(dir.clone()));
        assert!(!stale.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    // ------------------------------------------------ optional NVRTC calls

    const STAND_IN_VAR: &str = "KILN_TEST_STAND_IN_NVRTC";

    /// A libnvrtc with only some of the calls: NVRTC 11.0's set (no list of
    /// architectures, no CUBIN), or fewer.
    const STAND_IN_NVRTC: &str = r#"
typedef int R;
typedef void* P;
R nvrtcVersion(int* major, int* minor) { *major = MAJOR; *minor = 0; return 0; }
#ifdef BASE
R nvrtcCreateProgram(P* p, const char* s, const char* n, int h, const char* const* hs, const char* const* ns) { return 1; }
R nvrtcDestroyProgram(P* p) { return 0; }
R nvrtcCompileProgram(P p, int n, const char* const* o) { return 6; }
R nvrtcGetProgramLogSize(P p, unsigned long* s) { *s = 1; return 0; }
R nvrtcGetProgramLog(P p, char* log) { log[0] = 0; return 0; }
R nvrtcGetPTXSize(P p, unsigned long* s) { return 4; }
R nvrtcGetPTX(P p, char* ptx) { return 4; }
#endif
#ifdef ARCHS
R nvrtcGetNumSupportedArchs(int* n) { *n = 3; return 0; }
R nvrtcGetSupportedArchs(int* a) { a[0] = 75; a[1] = 80; a[2] = 90; return 0; }
#endif
#ifdef CUBIN
R nvrtcGetCUBINSize(P p, unsigned long* s) { return 4; }
R nvrtcGetCUBIN(P p, char* c) { return 4; }
#endif
"#;

    /// NVRTC libraries that lack optional calls set kiln up for PTX (or say
    /// what is missing) instead of panicking inside cudarc on the first call.
    /// Each runs in a child process, with a stand-in libnvrtc built by the C
    /// compiler found first on `LD_LIBRARY_PATH`.
    #[cfg(target_os = "linux")]
    #[test]
    fn nvrtc_without_optional_calls_is_used_without_them() {
        let base = temp_dir("stand-in-nvrtc");
        let cases: [(&str, &[&str], &str); 4] = [
            ("complete", &["-DMAJOR=12", "-DBASE", "-DARCHS", "-DCUBIN"], "version Some((12, 0)) target sm_90"),
            ("nvrtc-11.0", &["-DMAJOR=11", "-DBASE"], "version Some((11, 0)) target compute_90"),
            ("no-cubin", &["-DMAJOR=12", "-DBASE", "-DARCHS"], "version Some((12, 0)) target compute_90"),
            (
                "not-nvrtc",
                &["-DMAJOR=12"],
                "version None target compute_90 (the libnvrtc found lacks `nvrtcCreateProgram`",
            ),
        ];
        for (case, defines, want) in cases {
            let dir = base.join(case);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("nvrtc.c"), STAND_IN_NVRTC).unwrap();
            let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
            let built = std::process::Command::new(&cc)
                .args(["-shared", "-fPIC", "-o"])
                .arg(dir.join("libnvrtc.so"))
                .arg(dir.join("nvrtc.c"))
                .args(defines)
                .status();
            if !built.is_ok_and(|s| s.success()) {
                eprintln!("skipped: `{cc}` could not build a stand-in libnvrtc");
                return;
            }
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "compile::tests::stand_in_nvrtc_child", "--nocapture", "--test-threads=1"])
                .env("LD_LIBRARY_PATH", &dir)
                .env(STAND_IN_VAR, case)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && text.contains(want), "{case}: wanted `{want}` in\n{text}");
        }
        let _ = std::fs::remove_dir_all(&base);
    }

    /// Runs only as the child of the test above.
    #[test]
    fn stand_in_nvrtc_child() {
        if std::env::var_os(STAND_IN_VAR).is_none() {
            return;
        }
        let compiler = Compiler::new((9, 0));
        let why = compiler.nvrtc.as_ref().err().map(|e| format!(" ({e})")).unwrap_or_default();
        println!("version {:?} target {}{why}", compiler.nvrtc_version(), compiler.target());
    }
}
