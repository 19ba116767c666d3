//! Finding and loading the NCCL library at run time, and its entry points.
//!
//! Looked for, in order: the file `KILN_NCCL_LIBRARY` names; `libnccl.so.2`
//! and `libnccl.so` where the dynamic loader finds libraries
//! (`LD_LIBRARY_PATH`, the system's directories); then the NCCL wheels of
//! Python environments (`nvidia/nccl/lib/libnccl.so.2` under the
//! `site-packages` or `dist-packages` of `$VIRTUAL_ENV`, `$CONDA_PREFIX`,
//! `~/.local`, `/usr/local` and `/usr`).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nccl::sys::{cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};
use kiln_core::{BackendKind, Error, Result};

/// The variable that names the NCCL library file to load.
pub const NCCL_LIBRARY_ENV: &str = "KILN_NCCL_LIBRARY";

type Status = c_int;

/// The NCCL entry points kiln calls (NCCL 2.x's C API).
pub(crate) struct Nccl {
    pub(crate) path: String,
    pub(crate) version: c_int,
    pub(crate) get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> Status,
    pub(crate) comm_init_rank: unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> Status,
    pub(crate) comm_init_all: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> Status,
    pub(crate) comm_destroy: unsafe extern "C" fn(ncclComm_t) -> Status,
    pub(crate) comm_get_async_error: unsafe extern "C" fn(ncclComm_t, *mut Status) -> Status,
    get_error_string: unsafe extern "C" fn(Status) -> *const c_char,
    pub(crate) group_start: unsafe extern "C" fn() -> Status,
    pub(crate) group_end: unsafe extern "C" fn() -> Status,
    pub(crate) all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclRedOp_t,
        ncclComm_t,
        cudaStream_t,
    ) -> Status,
    pub(crate) reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclRedOp_t,
        c_int,
        ncclComm_t,
        cudaStream_t,
    ) -> Status,
    pub(crate) broadcast: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        c_int,
        ncclComm_t,
        cudaStream_t,
    ) -> Status,
    pub(crate) all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, ncclComm_t, cudaStream_t) -> Status,
    pub(crate) reduce_scatter: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclRedOp_t,
        ncclComm_t,
        cudaStream_t,
    ) -> Status,
    /// Keeps the entry points valid: never unloaded.
    _lib: libloading::Library,
}

impl Nccl {
    /// `Ok` for NCCL's success code, else the error naming `call` and NCCL's own words.
    pub(crate) fn check(&self, status: Status, call: &str) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString takes any code and returns a static string.
        let text = unsafe { (self.get_error_string)(status) };
        let text = if text.is_null() {
            "no description".to_string()
        } else {
            // SAFETY: a NUL-terminated static string from NCCL.
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        Err(Error::driver(BackendKind::Cuda, call, format!("NCCL error {status}: {text}")))
    }
}

/// The loaded library, or why it could not be loaded (the same answer every time).
pub(crate) fn nccl() -> Result<&'static Nccl> {
    static LOADED: OnceLock<std::result::Result<Nccl, String>> = OnceLock::new();
    LOADED
        .get_or_init(load)
        .as_ref()
        .map_err(|reason| Error::unsupported(BackendKind::Cuda, "NCCL collectives", reason.clone()))
}

/// Whether the NCCL library loads here.
pub fn nccl_available() -> bool {
    nccl().is_ok()
}

/// The version of the NCCL library loaded (`major * 10000 + minor * 100 +
/// patch`, as NCCL 2.9 and later count), and the file it came from.
pub fn nccl_version() -> Result<(u32, String)> {
    let lib = nccl()?;
    Ok((lib.version as u32, lib.path.clone()))
}

fn load() -> std::result::Result<Nccl, String> {
    let mut tried = Vec::new();
    for candidate in candidates() {
        // SAFETY: loading NCCL runs its initialisers, which only set up the library.
        match unsafe { libloading::Library::new(&candidate) } {
            Ok(lib) => return bind(lib, candidate.to_string_lossy().into_owned()),
            Err(e) => tried.push(format!("{}: {e}", candidate.display())),
        }
    }
    Err(format!(
        "no NCCL library could be loaded (tried {}); install NCCL (for example `pip install nvidia-nccl-cu13`, or \
         the system's libnccl2 package) or set {NCCL_LIBRARY_ENV} to the path of libnccl.so.2",
        tried.join("; ")
    ))
}

/// Where to look, in order.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(path) = std::env::var_os(NCCL_LIBRARY_ENV) {
        // Only the named file when the variable is set.
        return vec![PathBuf::from(path)];
    }
    out.push(PathBuf::from("libnccl.so.2"));
    out.push(PathBuf::from("libnccl.so"));
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local"));
    let prefixes =
        [std::env::var_os("VIRTUAL_ENV").map(PathBuf::from), std::env::var_os("CONDA_PREFIX").map(PathBuf::from), home]
            .into_iter()
            .flatten()
            .chain([PathBuf::from("/usr/local"), PathBuf::from("/usr")]);
    for prefix in prefixes {
        out.extend(wheel_libraries(&prefix));
    }
    out
}

/// `nvidia/nccl/lib/libnccl.so.2` of every `lib/python3*/{site,dist}-packages` under `prefix`.
fn wheel_libraries(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else { return Vec::new() };
    let mut pythons: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path())
        .collect();
    pythons.sort();
    let mut out = Vec::new();
    for python in pythons {
        for packages in ["site-packages", "dist-packages"] {
            let lib = python.join(packages).join("nvidia/nccl/lib/libnccl.so.2");
            if lib.is_file() {
                out.push(lib);
            }
        }
    }
    out
}

/// The entry points of `lib`, loaded from `path`.
fn bind(lib: libloading::Library, path: String) -> std::result::Result<Nccl, String> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol is NCCL's C function of that name, whose
            // signature the field's type spells as NCCL 2's nccl.h declares it.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{path} has no {}: {e} (not an NCCL 2 library?)", $name))?
        };
    }
    let get_version: unsafe extern "C" fn(*mut c_int) -> Status = sym!("ncclGetVersion");
    let mut version = 0;
    // SAFETY: ncclGetVersion writes one int.
    if unsafe { get_version(&mut version) } != 0 {
        return Err(format!("{path}: ncclGetVersion failed"));
    }
    Ok(Nccl {
        path: path.clone(),
        version,
        get_unique_id: sym!("ncclGetUniqueId"),
        comm_init_rank: sym!("ncclCommInitRank"),
        comm_init_all: sym!("ncclCommInitAll"),
        comm_destroy: sym!("ncclCommDestroy"),
        comm_get_async_error: sym!("ncclCommGetAsyncError"),
        get_error_string: sym!("ncclGetErrorString"),
        group_start: sym!("ncclGroupStart"),
        group_end: sym!("ncclGroupEnd"),
        all_reduce: sym!("ncclAllReduce"),
        reduce: sym!("ncclReduce"),
        broadcast: sym!("ncclBroadcast"),
        all_gather: sym!("ncclAllGather"),
        reduce_scatter: sym!("ncclReduceScatter"),
        _lib: lib,
    })
}
