//! A logical kernel: one name, a source per language, and compile options.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::{Backend, Error, HostArgs, Language, Result};

/// A kernel written as a Rust function, for the CPU backend. It runs the whole
/// launch (every block and thread) in one call, typically with rayon.
pub type HostFn = fn(&mut HostArgs<'_>) -> Result<()>;

/// A kernel for the CPU backend built at run time (a generated user kernel):
/// a closure, identified by a key that names everything it computes.
///
/// Two closures with the same key must compute the same thing: the kernel
/// cache keeps the first one compiled for a key.
///
/// # Examples
/// ```
/// use kiln_core::{HostClosure, Program};
/// let scale = 3.0f32;
/// let f = HostClosure::new("scale by 3", move |args| {
///     for v in args.output::<f32>(0)? {
///         *v *= scale;
///     }
///     Ok(())
/// });
/// let p = Program::new("scale").host_closure(f);
/// assert!(p.has(kiln_core::Language::Host) && p.host_fn().is_none());
/// ```
#[derive(Clone)]
pub struct HostClosure {
    key: String,
    f: Arc<HostBody>,
}

/// What a [`HostClosure`] runs.
type HostBody = dyn Fn(&mut HostArgs<'_>) -> Result<()> + Send + Sync;

impl HostClosure {
    /// The closure `f`, identified by `key`.
    pub fn new(key: impl Into<String>, f: impl Fn(&mut HostArgs<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        HostClosure { key: key.into(), f: Arc::new(f) }
    }

    /// What identifies the closure.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Run the kernel over one launch's arguments.
    pub fn call(&self, args: &mut HostArgs<'_>) -> Result<()> {
        (self.f)(args)
    }
}

/// Options handed to the backend's compiler.
///
/// CUDA receives `flags` verbatim, each define as `-DNAME=VALUE` and each
/// include path as `-I`. WGSL has no preprocessor: there a define replaces every
/// whole identifier `NAME` in the source by `VALUE` (see [`Program::expanded`]).
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

/// One kernel's source in one [`Language`]: text to compile, or a host fn.
///
/// # Examples
/// ```
/// use kiln_core::Source;
/// let s = Source::from("@compute @workgroup_size(64) fn k() {}");
/// assert!(s.text().is_some() && s.host_fn().is_none());
/// ```
#[derive(Clone)]
pub enum Source {
    /// Source text (CUDA C++, WGSL).
    Text(String),
    /// A Rust function ([`Language::Host`]).
    Host(HostFn),
    /// A closure built at run time ([`Language::Host`]).
    Closure(HostClosure),
}

impl Source {
    /// The text, if this is a text source.
    pub fn text(&self) -> Option<&str> {
        match self {
            Source::Text(t) => Some(t),
            Source::Host(_) | Source::Closure(_) => None,
        }
    }

    /// The function, if this is a host fn.
    pub fn host_fn(&self) -> Option<HostFn> {
        match self {
            Source::Host(f) => Some(*f),
            Source::Text(_) | Source::Closure(_) => None,
        }
    }

    /// The closure, if this is one built at run time.
    pub fn host_closure(&self) -> Option<&HostClosure> {
        match self {
            Source::Closure(c) => Some(c),
            Source::Text(_) | Source::Host(_) => None,
        }
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Text(t) => write!(f, "Text({} bytes)", t.len()),
            Source::Host(h) => write!(f, "Host({:#x})", *h as usize),
            Source::Closure(c) => write!(f, "Closure({:?})", c.key),
        }
    }
}

/// Sources are equal when they compile alike: the same text, the same host
/// fn (by address) or closures with the same key.
impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Source::Text(a), Source::Text(b)) => a == b,
            (Source::Host(a), Source::Host(b)) => *a as usize == *b as usize,
            (Source::Closure(a), Source::Closure(b)) => a.key == b.key,
            _ => false,
        }
    }
}

impl Eq for Source {}

/// A host fn is identified by its address, a closure by its key, as in the
/// kernel cache.
impl Hash for Source {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Source::Text(t) => t.hash(h),
            Source::Host(f) => (*f as usize).hash(h),
            Source::Closure(c) => c.key.hash(h),
        }
    }
}

impl From<HostClosure> for Source {
    fn from(c: HostClosure) -> Self {
        Source::Closure(c)
    }
}

impl From<String> for Source {
    fn from(text: String) -> Self {
        Source::Text(text)
    }
}

impl From<&str> for Source {
    fn from(text: &str) -> Self {
        Source::Text(text.to_string())
    }
}

impl From<HostFn> for Source {
    fn from(f: HostFn) -> Self {
        Source::Host(f)
    }
}

/// One logical kernel with a source for each [`Language`] it is written in.
///
/// The program's name is the entry point in every source (`extern "C"
/// __global__ void NAME(...)` in CUDA, `@compute fn NAME(...)` in WGSL). A
/// backend compiles the source in its own language ([`Backend::LANGUAGE`],
/// looked up with [`Program::source_for`]); given a program without one it
/// answers `Unsupported`, naming the program, the backend and the languages
/// the program has. [`cuda`](Program::cuda), [`wgsl`](Program::wgsl) and
/// [`host`](Program::host) are shorthands for [`source`](Program::source).
///
/// # Examples
/// ```
/// use kiln_core::{HostArgs, Language, Program, Result};
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
/// assert!(program.has(Language::Cuda) && !program.has(Language::Wgsl));
/// assert_eq!(program.languages().collect::<Vec<_>>(), [Language::Cuda, Language::Host]);
/// ```
///
/// Two programs are equal (`==`) when they compile to the same kernel: the
/// same name, the same sources in the same languages (equal text, the same
/// host fn, closures with the same key) and the same options. The kernel
/// cache of a [`Device`](crate::Device) is keyed by the whole program, so
/// programs that differ never share a kernel, whatever their hashes.
///
/// ```
/// use kiln_core::Program;
/// let tile = |n: u32| Program::new("k").wgsl("@compute @workgroup_size(N) fn k() {}").define("N", n);
/// assert_eq!(tile(64), tile(64)); // built twice, one kernel
/// assert_ne!(tile(64), tile(128));
/// assert_ne!(Program::new("ab").cuda("c"), Program::new("a").cuda("bc"));
/// ```
#[derive(Debug, Clone)]
pub struct Program {
    name: String,
    /// In `Language` order, so that hashing and listing are deterministic.
    sources: BTreeMap<Language, Source>,
    options: CompileOptions,
    /// Computed on first use: launches look kernels up by it.
    fingerprint: OnceLock<u64>,
    /// Drawn afresh at every change, and kept by clones: two programs with
    /// one revision are one program and its copy, so equal without
    /// comparing their sources (a launch's cache lookup is one compare).
    revision: u64,
}

/// The next [`Program::revision`].
fn next_revision() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Program {
    /// A program whose entry point is `name`, with no sources yet.
    pub fn new(name: impl Into<String>) -> Self {
        Program {
            name: name.into(),
            sources: BTreeMap::new(),
            options: CompileOptions::default(),
            fingerprint: OnceLock::new(),
            revision: next_revision(),
        }
    }

    /// Forget what was computed from the contents, which just changed.
    fn changed(&mut self) {
        self.fingerprint = OnceLock::new();
        self.revision = next_revision();
    }

    /// Set the source in `language` (replacing any earlier one): text for
    /// CUDA C++ and WGSL, a [`HostFn`] for [`Language::Host`].
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Language, Program};
    /// let p = Program::new("k").source(Language::Wgsl, "@compute @workgroup_size(1) fn k() {}");
    /// assert_eq!(p.text(Language::Wgsl), p.wgsl_source());
    /// ```
    pub fn source(mut self, language: Language, source: impl Into<Source>) -> Self {
        self.sources.insert(language, source.into());
        self.changed();
        self
    }

    /// Set the CUDA C++ source (compiled by NVRTC).
    pub fn cuda(self, source: impl Into<String>) -> Self {
        self.source(Language::Cuda, source.into())
    }

    /// Set the WGSL source.
    pub fn wgsl(self, source: impl Into<String>) -> Self {
        self.source(Language::Wgsl, source.into())
    }

    /// Set the CPU implementation.
    pub fn host(self, f: HostFn) -> Self {
        self.source(Language::Host, f)
    }

    /// Set the CPU implementation to a closure built at run time.
    pub fn host_closure(self, f: HostClosure) -> Self {
        self.source(Language::Host, f)
    }

    /// Add a preprocessor define (CUDA) / identifier substitution (WGSL).
    pub fn define(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.options.defines.push((name.into(), value.to_string()));
        self.changed();
        self
    }

    /// Add a compiler flag.
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.options.flags.push(flag.into());
        self.changed();
        self
    }

    /// Add an include directory.
    pub fn include_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.options.include_paths.push(path.into());
        self.changed();
        self
    }

    /// The entry-point name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source in `language`, if any.
    pub fn get(&self, language: Language) -> Option<&Source> {
        self.sources.get(&language)
    }

    /// Whether the program has a source in `language`.
    pub fn has(&self, language: Language) -> bool {
        self.sources.contains_key(&language)
    }

    /// The languages the program has a source in, in [`Language`] order.
    pub fn languages(&self) -> impl Iterator<Item = Language> + '_ {
        self.sources.keys().copied()
    }

    /// The source backend `B` compiles (the one in [`Backend::LANGUAGE`]);
    /// `Err(Unsupported)` naming the program, the backend and the languages
    /// the program has when there is none.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Program;
    /// use kiln_cpu::Cpu;
    /// let p = Program::new("k").cuda("...").wgsl("...");
    /// let e = p.source_for::<Cpu>().unwrap_err().to_string();
    /// assert!(e.contains("`k`") && e.contains("cpu") && e.contains("CUDA C++, WGSL"), "{e}");
    /// ```
    pub fn source_for<B: Backend>(&self) -> Result<&Source> {
        self.get(B::LANGUAGE).ok_or_else(|| {
            let languages: Vec<&str> = self.languages().map(Language::name).collect();
            let has = if languages.is_empty() { "none".to_string() } else { languages.join(", ") };
            let reason = format!("the {} backend needs a {} source; the program has {has}", B::KIND, B::LANGUAGE);
            Error::unsupported(B::KIND, format!("kernel `{}`", self.name), reason)
        })
    }

    /// The source text in `language`, if the program has text there.
    pub fn text(&self, language: Language) -> Option<&str> {
        self.get(language).and_then(Source::text)
    }

    /// The CUDA source, if any.
    pub fn cuda_source(&self) -> Option<&str> {
        self.text(Language::Cuda)
    }

    /// The WGSL source as written, if any.
    pub fn wgsl_source(&self) -> Option<&str> {
        self.text(Language::Wgsl)
    }

    /// The CPU implementation, if any.
    pub fn host_fn(&self) -> Option<HostFn> {
        self.get(Language::Host).and_then(Source::host_fn)
    }

    /// The compile options.
    pub fn options(&self) -> &CompileOptions {
        &self.options
    }

    /// The WGSL source with every define substituted; see [`expanded`](Program::expanded).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Program;
    /// let p = Program::new("k").wgsl("var<storage> x: array<T>; // T, TT").define("T", "f32");
    /// assert_eq!(p.wgsl_expanded().unwrap(), "var<storage> x: array<f32>; // f32, TT");
    /// ```
    pub fn wgsl_expanded(&self) -> Option<String> {
        self.expanded(Language::Wgsl)
    }

    /// The source text in `language` with every define substituted, for
    /// languages without a preprocessor: each identifier equal to a define's
    /// name is replaced by its value (whole identifiers only, never inside a
    /// longer name; the last define of a name wins).
    pub fn expanded(&self, language: Language) -> Option<String> {
        let src = self.text(language)?;
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

    /// A 64-bit hash of everything that determines the compiled kernel (the
    /// name, every source with its language, the options): equal programs
    /// have equal fingerprints, and different ones almost always differ,
    /// but may not. It is [`Program`]'s `Hash`; the kernel cache compares
    /// whole programs on a match.
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| self.hash_all())
    }

    /// This program with its fingerprint set to `value`, to make two
    /// programs' hashes collide in tests.
    #[cfg(test)]
    pub(crate) fn with_fingerprint(self, value: u64) -> Self {
        let fingerprint = OnceLock::new();
        let _ = fingerprint.set(value);
        Program { fingerprint, ..self }
    }

    fn hash_all(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.name.hash(&mut h);
        self.sources.hash(&mut h);
        self.options.hash(&mut h);
        h.finish()
    }
}

/// Equal when everything that determines the compiled kernel is equal (see
/// [`Program`]); a program and its clones compare in one step.
impl PartialEq for Program {
    fn eq(&self, other: &Self) -> bool {
        self.revision == other.revision
            || (self.fingerprint() == other.fingerprint()
                && self.name == other.name
                && self.sources == other.sources
                && self.options == other.options)
    }
}

impl Eq for Program {}

/// The [`fingerprint`](Program::fingerprint), computed once per program.
impl Hash for Program {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fingerprint());
    }
}

#[cfg(test)]
mod tests;
