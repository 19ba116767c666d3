//! ElementwiseKernel: a body of assignments run once per element.

use std::sync::Arc;

use kiln_core::{Args, Backend, DType, Error, IndexWidth, Language, LaunchConfig, Program, Result, Source, Stream};

use super::definition::UserKernel;
use super::kind::Kind;
use super::names;
use super::signature::{Binding, Bound};
use crate::expr::{self, Expr, Generator, Param, Role, Stmt, Ty, Typed, check};
use crate::launch::{BLOCK, blocks};

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

    super::arguments!();

    /// An argument read and written at the element index (in place).
    pub fn inout(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::InOut, ty.into())
    }

    /// An output written at the element index.
    pub fn output(self, name: &str, ty: impl Into<Ty>) -> Self {
        self.param(name, Role::Output, ty.into())
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
    pub fn build(self) -> Result<super::ElementwiseKernel> {
        UserKernel::build(self)
    }
}

/// An elementwise kernel's body checked for argument dtypes.
pub struct Body {
    typed: Arc<Typed>,
    roles: Vec<Role>,
}

/// An elementwise kernel is one pass, the same in every language.
impl Kind for Elementwise {
    type Decl = Elementwise;
    type Pass = ();
    type Checked = Body;
    const KERNEL: &'static str = "ElementwiseKernel";

    fn signature(&self) -> (&str, &[Param]) {
        (&self.name, &self.params)
    }

    fn declare(self) -> Result<Elementwise> {
        let fail = |reason: &str| Error::invalid(format!("user kernel `{}`", self.name), reason.to_string());
        if !self.params.iter().any(|p| p.role.is_buffer() && p.role != Role::Raw) {
            return Err(fail("has no input or output to take the element count from"));
        }
        if !self.params.iter().any(|p| p.role.writes()) {
            return Err(fail("has no output"));
        }
        Ok(self)
    }

    fn declared(decl: &Elementwise) -> (&str, &[Param]) {
        decl.signature()
    }

    fn concrete(decl: &Elementwise) -> bool {
        decl.params.iter().all(|p| matches!(p.ty, Ty::Is(_)))
    }

    fn check(decl: &Elementwise, bind: &Binding) -> Result<Body> {
        let typed = Arc::new(check(&decl.name, &decl.params, &decl.stmts, bind)?);
        Ok(Body { typed, roles: decl.params.iter().map(|p| p.role).collect() })
    }

    fn bodies(checked: &Body) -> impl Iterator<Item = &Typed> {
        [&*checked.typed].into_iter()
    }

    fn computes(_: &Body) -> Vec<DType> {
        Vec::new()
    }

    fn gives(_: &Body) -> Option<DType> {
        None
    }

    fn passes(_: Language) -> Vec<()> {
        vec![()]
    }

    fn pass_name(_: ()) -> String {
        "elementwise".into()
    }

    fn entry(kernel: &str, _: ()) -> String {
        names::entry(kernel)
    }

    fn generate(
        generator: &dyn Generator,
        kernel: &str,
        entry: &str,
        checked: &Body,
        _: (),
        width: IndexWidth,
    ) -> Result<Program> {
        generator.elementwise(kernel, entry, &checked.roles, &checked.typed, width)
    }
}

impl UserKernel<Elementwise> {
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
        // Its one pass is in every language.
        self.replaced_pass(language, (), source.into())
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
        let programs = self.programs(language, width, types)?;
        programs.into_iter().next().ok_or_else(|| Error::invalid(self.what(), format!("no program in {language}")))
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
        let (inst, bound) = self.prepare(stream, &args, None)?;
        let Bound { n, raw_lens, .. } = bound;
        if n == 0 {
            return Ok(());
        }
        let what = self.what();
        let info = stream.device().info();
        let width = info.features.index_width;
        // A generated CUDA kernel takes packs of elements; a hand-written
        // source one element a thread a step.
        let per_thread = if inst.hand_written(()) {
            1
        } else {
            expr::generator(self.name(), B::LANGUAGE)?.per_thread(&inst.checked.roles, &inst.checked.typed)
        };
        let kernel = self.kernel(stream, &inst, ())?;
        let mut args = args;
        for len in raw_lens {
            args = args.length(width, len, &what)?;
        }
        let args = args.length(width, n, &what)?;
        let config = LaunchConfig::new(blocks(n.div_ceil(per_thread), BLOCK as usize, info.limits.max_grid[0]), BLOCK);
        // SAFETY: the arguments match the declared signature in number,
        // role (outputs writable) and dtype, and every input and output has
        // n elements; the generated kernel reads inputs and writes outputs
        // at [0, n) only, and reads raw inputs only within the lengths
        // passed after them. A hand-written source carries the same
        // contract from `with_source`.
        unsafe { stream.launch(&kernel, config, args) }
    }
}
