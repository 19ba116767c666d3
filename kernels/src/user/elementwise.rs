//! ElementwiseKernel: a body of assignments run once per element.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{Args, Backend, DType, Error, IndexWidth, Language, LaunchConfig, Program, Result, Source, Stream};

use super::instances::Instances;
use super::names::{self, check_ident};
use super::signature::{Bound, bind, check_u32, resolve_types};
use crate::expr::{self, Expr, Param, Role, Stmt, Ty, Typed, check};
use crate::launch::{BLOCK, blocks, check_dtype};

/// A kernel written once in Rust and run on every backend: named arguments,
/// a body of assignments evaluated once per element (PyCUDA's and CuPy's
/// `ElementwiseKernel`).
///
/// Arguments are declared in launch order: `input`s and `inout`s are read at
/// the element index, `output`s written there, `raw` inputs read anywhere
/// with [`Expr::at`], `scalar`s are one value. The element count is the
/// common length of the inputs and outputs. [`set`](Self::set) assigns an
/// output; [`local`](Self::local) names a value for later statements.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::expr::{var, Ty};
/// use kiln_kernels::user::Elementwise;
/// # fn main() -> kiln_core::Result<()> {
/// // PyCUDA's linear combination, z = a*x + b*y, for any float type T.
/// let t = Ty::param("T");
/// let lincomb = Elementwise::new("lincomb")
///     .scalar("a", t.clone())
///     .input("x", t.clone())
///     .scalar("b", t.clone())
///     .input("y", t.clone())
///     .output("z", t)
///     .set("z", var("a") * var("x") + var("b") * var("y"))
///     .build()?;
///
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (x, y) = (s.upload(&[1.0f32, 2.0])?, s.upload(&[10.0f32, 20.0])?);
/// let mut z = s.alloc::<f32>(2)?;
/// lincomb.launch(&s, kiln_core::Args::new().arg(2.0f32).arg(&x).arg(0.5f32).arg(&y).arg(&mut z))?;
/// assert_eq!(z.to_vec()?, [7.0, 14.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Elementwise {
    name: String,
    params: Vec<Param>,
    stmts: Vec<Stmt>,
}

impl Elementwise {
    /// A kernel named `name`: an identifier (ASCII letters, digits and `_`,
    /// not starting with a digit). Any identifier serves, keywords of CUDA
    /// C++ or WGSL included: generated code names the kernel's entry point
    /// `user_{name}`, and its arguments and locals by position.
    pub fn new(name: impl Into<String>) -> Self {
        Elementwise { name: name.into(), params: Vec::new(), stmts: Vec::new() }
    }

    fn param(mut self, name: &str, role: Role, ty: Ty) -> Self {
        self.params.push(Param { name: Arc::from(name), role, ty });
        self
    }

    /// An input read at the element index.
    pub fn input(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::Input, ty.into())
    }

    /// An argument read and written at the element index (in place).
    pub fn inout(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::InOut, ty.into())
    }

    /// An output written at the element index.
    pub fn output(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::Output, ty.into())
    }

    /// An input read at computed indices ([`Expr::at`]); its length is its own.
    pub fn raw(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::Raw, ty.into())
    }

    /// A scalar argument.
    pub fn scalar(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::Scalar, ty.into())
    }

    /// Name `value` as `name` for the statements after this one.
    pub fn local(mut self, name: &str, value: impl Into<Expr>) -> Self {
        self.stmts.push(Stmt::Let(Arc::from(name), value.into()));
        self
    }

    /// Assign `value` to the output (or in-out argument) `name`.
    pub fn set(mut self, name: &str, value: impl Into<Expr>) -> Self {
        self.stmts.push(Stmt::Set(Arc::from(name), value.into()));
        self
    }

    /// Check the declaration and, where no argument has a placeholder type,
    /// the body's types: `Err` naming the kernel and what is wrong.
    pub fn build(self) -> Result<ElementwiseKernel> {
        let fail = |reason: String| Error::invalid(format!("user kernel `{}`", self.name), reason);
        check_ident(&self.name, &self.params)?;
        if !self.params.iter().any(|p| p.role.is_buffer() && p.role != Role::Raw) {
            return Err(fail("has no input or output to take the element count from".to_string()));
        }
        if !self.params.iter().any(|p| p.role.writes()) {
            return Err(fail("has no output".to_string()));
        }
        if self.params.iter().all(|p| matches!(p.ty, Ty::Is(_))) {
            check(&self.name, &self.params, &self.stmts, &HashMap::new())?;
        }
        Ok(ElementwiseKernel(Arc::new(Def { def: self, cache: Instances::default(), sources: HashMap::new() })))
    }
}

/// A built [`Elementwise`] kernel; cheap to clone, shared between threads.
/// Its generated programs are cached per argument dtypes and backend.
#[derive(Clone)]
pub struct ElementwiseKernel(Arc<Def>);

struct Def {
    def: Elementwise,
    cache: Instances<Instance>,
    sources: HashMap<Language, Source>,
}

/// One kernel instantiated for argument dtypes and a backend.
struct Instance {
    body: Arc<Typed>,
    program: Arc<Program>,
    /// Elements each thread takes per step (a generated CUDA kernel's pack).
    per_thread: usize,
}

impl std::fmt::Debug for ElementwiseKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ElementwiseKernel").field(&self.0.def).finish()
    }
}

impl ElementwiseKernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.0.def.name
    }

    /// Replace the generated source in `language` by a hand-written one
    /// (the escape hatch: a body tuned by hand for one backend). Its entry
    /// point is `user_{name}` (the name of [`program`](Self::program)'s
    /// result, as for generated sources); it takes the launch's arguments in
    /// declaration order, then each raw input's length, then the element
    /// count (lengths at the device's index width, as in kiln's kernel ABI).
    ///
    /// # Safety
    /// - The source must read and write only within the ranges the
    ///   signature gives: inputs and outputs at `[0, n)`, raw inputs within
    ///   their lengths, scalars by value.
    /// - It must not write its inputs.
    pub unsafe fn with_source(self, language: Language, source: impl Into<Source>) -> Self {
        let mut sources = self.0.sources.clone();
        sources.insert(language, source.into());
        ElementwiseKernel(Arc::new(Def { def: self.0.def.clone(), cache: Instances::default(), sources }))
    }

    /// The kernel as a [`Program`] in `language` for the low-level API, with
    /// placeholders bound by `types` and lengths at `width`; the arguments
    /// follow [`with_source`](Self::with_source)'s convention.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, IndexWidth, Language};
    /// use kiln_kernels::expr::{var, Ty};
    /// use kiln_kernels::user::Elementwise;
    /// # fn main() -> kiln_core::Result<()> {
    /// let k = Elementwise::new("square").input("x", Ty::param("T")).output("y", Ty::param("T"))
    ///     .set("y", var("x") * var("x")).build()?;
    /// let p = k.program(Language::Cuda, IndexWidth::U64, &[("T", DType::F32)])?;
    /// assert!(p.cuda_source().unwrap().contains("const float* __restrict__ a0"));
    /// # Ok(()) }
    /// ```
    pub fn program(&self, language: Language, width: IndexWidth, types: &[(&str, DType)]) -> Result<Program> {
        let def = &self.0.def;
        let (dtypes, bind) = resolve_types(&def.name, &def.params, types)?;
        Ok((*self.0.cache.get(language, width, &dtypes, || self.build(language, width, &bind))?.program).clone())
    }

    /// A new instance for `language` and `width`, placeholders bound by `bind`.
    fn build(&self, language: Language, width: IndexWidth, bind: &HashMap<Arc<str>, DType>) -> Result<Arc<Instance>> {
        let def = &self.0.def;
        let body = Arc::new(check(&def.name, &def.params, &def.stmts, bind)?);
        let roles: Vec<Role> = def.params.iter().map(|p| p.role).collect();
        let name = &def.name;
        let entry = names::entry(name);
        let (program, per_thread) = match self.0.sources.get(&language) {
            Some(s) => (Program::new(&entry).source(language, s.clone()), 1),
            None => {
                let generator = expr::generator(name, language)?;
                generator.supports(name, &mut [&*body].into_iter())?;
                let program = generator.elementwise(name, &entry, &roles, &body, width)?;
                (program, generator.per_thread(&roles, &body))
            }
        };
        Ok(Arc::new(Instance { body, program: Arc::new(program), per_thread }))
    }

    /// Run the kernel on `stream` over `args`, given in declaration order
    /// (`&buf` for inputs, `&mut buf` for outputs, values for scalars).
    ///
    /// `Err` naming the kernel and the argument for a missing or extra
    /// argument, a read-only buffer given for an output, a dtype other than
    /// the declared one or the one its placeholder is bound to, inputs and
    /// outputs of different lengths, a dtype the device cannot compute on,
    /// or a body that does not type-check for these dtypes.
    pub fn launch<B: Backend>(&self, stream: &Stream<B>, args: Args<'_, B>) -> Result<()> {
        let def = &self.0.def;
        let bound = bind(&def.name, &def.params, args.raw())?;
        let (dtypes, binding) = (&bound.dtypes, &bound.bind);
        let what = format!("user kernel `{}`", def.name);
        let info = stream.device().info();
        let width = info.features.index_width;
        let inst = self.0.cache.get(B::LANGUAGE, width, dtypes, || self.build(B::LANGUAGE, width, binding))?;
        let body = &inst.body;
        for d in body.nodes.iter().filter_map(|n| n.ty.dtype()).chain(dtypes.iter().copied()) {
            check_dtype(stream, d, &what)?;
        }
        check_u32(&def.name, [&**body].into_iter(), &bound)?;
        let Bound { n, raw_lens, .. } = bound;
        if n == 0 {
            return Ok(());
        }
        let kernel = stream.device().kernel(&inst.program)?;
        let mut args = args;
        for len in raw_lens {
            args = args.length(width, len, &what)?;
        }
        let args = args.length(width, n, &what)?;
        let config =
            LaunchConfig::new(blocks(n.div_ceil(inst.per_thread), BLOCK as usize, info.limits.max_grid[0]), BLOCK);
        // SAFETY: the arguments match the declared signature in number,
        // role (outputs writable) and dtype, and every input and output has
        // n elements; the generated kernel reads inputs and writes outputs
        // at [0, n) only, and reads raw inputs only within the lengths
        // passed after them. A hand-written source carries the same
        // contract from `with_source`.
        unsafe { stream.launch(&kernel, config, args) }
    }
}
