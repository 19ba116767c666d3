//! A logical kernel: one name, a source per backend, and compile options.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::{HostArgs, Result};

/// A kernel written as a Rust function, for the CPU backend. It runs the whole
/// launch (every block and thread) in one call, typically with rayon.
pub type HostFn = fn(&mut HostArgs<'_>) -> Result<()>;

/// Options handed to the backend's compiler.
///
/// CUDA receives `flags` verbatim, each define as `-DNAME=VALUE` and each
/// include path as `-I`. WGSL has no preprocessor: there a define replaces every
/// whole identifier `NAME` in the source by `VALUE` (see [`Program::wgsl_expanded`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Extra compiler flags ("-use_fast_math", "--std=c++17").
    pub flags: Vec<String>,
    /// Preprocessor defines, in order.
    pub defines: Vec<(String, String)>,
    /// Include directories.
    pub include_paths: Vec<PathBuf>,
}

impl CompileOptions {
    /// The options as a compiler command line would show them, for error messages.
    pub fn to_args(&self) -> Vec<String> {
        let mut out = self.flags.clone();
        out.extend(self.defines.iter().map(|(k, v)| format!("-D{k}={v}")));
        out.extend(self.include_paths.iter().map(|p| format!("-I{}", p.display())));
        out
    }
}

/// One logical kernel with a source for each backend it supports.
///
/// The program's name is the entry point in every source (`extern "C"
/// __global__ void NAME(...)` in CUDA, `@compute fn NAME(...)` in WGSL). A
/// backend given a program without its source answers `Unsupported`.
///
/// # Examples
/// ```
/// use kiln_core::{HostArgs, Program, Result};
///
/// fn scale_host(args: &mut HostArgs<'_>) -> Result<()> {
///     let a: f32 = args.scalar(1)?;
///     for v in args.output::<f32>(0)? {
///         *v *= a;
///     }
///     Ok(())
/// }
///
/// let program = Program::new("scale")
///     .cuda(r#"extern "C" __global__ void scale(float* x, float a, unsigned n) {
///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] *= a;
///     }"#)
///     .host(scale_host)
///     .define("BLOCK", "256");
/// assert_eq!(program.name(), "scale");
/// assert!(program.wgsl_source().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct Program {
    name: String,
    cuda: Option<String>,
    wgsl: Option<String>,
    host: Option<HostFn>,
    options: CompileOptions,
    /// Computed on first use: launches look kernels up by it.
    fingerprint: OnceLock<u64>,
}

impl Program {
    /// A program whose entry point is `name`, with no sources yet.
    pub fn new(name: impl Into<String>) -> Self {
        Program {
            name: name.into(),
            cuda: None,
            wgsl: None,
            host: None,
            options: CompileOptions::default(),
            fingerprint: OnceLock::new(),
        }
    }

    /// Set the CUDA C++ source (compiled by NVRTC).
    pub fn cuda(mut self, source: impl Into<String>) -> Self {
        self.cuda = Some(source.into());
        self.fingerprint = OnceLock::new();
        self
    }

    /// Set the WGSL source.
    pub fn wgsl(mut self, source: impl Into<String>) -> Self {
        self.wgsl = Some(source.into());
        self.fingerprint = OnceLock::new();
        self
    }

    /// Set the CPU implementation.
    pub fn host(mut self, f: HostFn) -> Self {
        self.host = Some(f);
        self.fingerprint = OnceLock::new();
        self
    }

    /// Add a preprocessor define (CUDA) / identifier substitution (WGSL).
    pub fn define(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.options.defines.push((name.into(), value.to_string()));
        self.fingerprint = OnceLock::new();
        self
    }

    /// Add a compiler flag.
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.options.flags.push(flag.into());
        self.fingerprint = OnceLock::new();
        self
    }

    /// Add an include directory.
    pub fn include_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.options.include_paths.push(path.into());
        self.fingerprint = OnceLock::new();
        self
    }

    /// The entry-point name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The CUDA source, if any.
    pub fn cuda_source(&self) -> Option<&str> {
        self.cuda.as_deref()
    }

    /// The WGSL source as written, if any.
    pub fn wgsl_source(&self) -> Option<&str> {
        self.wgsl.as_deref()
    }

    /// The CPU implementation, if any.
    pub fn host_fn(&self) -> Option<HostFn> {
        self.host
    }

    /// The compile options.
    pub fn options(&self) -> &CompileOptions {
        &self.options
    }

    /// The WGSL source with every define substituted: each identifier equal to
    /// a define's name is replaced by its value (whole identifiers only, never
    /// inside a longer name).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Program;
    /// let p = Program::new("k").wgsl("var<storage> x: array<T>; // T, TT").define("T", "f32");
    /// assert_eq!(p.wgsl_expanded().unwrap(), "var<storage> x: array<f32>; // f32, TT");
    /// ```
    pub fn wgsl_expanded(&self) -> Option<String> {
        let src = self.wgsl.as_deref()?;
        if self.options.defines.is_empty() {
            return Some(src.to_string());
        }
        let mut out = String::with_capacity(src.len());
        let mut ident = String::new();
        let flush = |ident: &mut String, out: &mut String| {
            match self.options.defines.iter().rev().find(|(k, _)| k == ident) {
                Some((_, v)) => out.push_str(v),
                None => out.push_str(ident),
            }
            ident.clear();
        };
        for c in src.chars() {
            if c.is_alphanumeric() || c == '_' {
                ident.push(c);
            } else {
                flush(&mut ident, &mut out);
                out.push(c);
            }
        }
        flush(&mut ident, &mut out);
        Some(out)
    }

    /// A hash of everything that determines the compiled kernel, used as the
    /// in-memory cache key (backends add their own arch and compiler version
    /// for on-disk caches).
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| self.hash_all())
    }

    fn hash_all(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.name.hash(&mut h);
        self.cuda.hash(&mut h);
        self.wgsl.hash(&mut h);
        self.host.map(|f| f as usize).hash(&mut h);
        self.options.hash(&mut h);
        h.finish()
    }
}
