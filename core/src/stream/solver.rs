//! [`Stream::vendor_solver`]: the checks and enqueue of one vendor solver
//! call (cuSOLVER on CUDA).

use super::Stream;
use crate::{
    Backend, BufferViewMut, Element, Error, GemmOperand, RawDevice, Result, SolverCall, SolverLayout, ViewMut,
};

/// The operands of one [`Stream::vendor_solver`] call: each a writable
/// view, so that no two overlap. The layout says which it uses
/// ([`SolverLayout::spans`]).
pub struct SolverArgs<'a, B: Backend, T: Element> {
    /// The matrices.
    pub a: BufferViewMut<'a, B, T>,
    /// Right-hand sides, reflector scalars or eigenvalues.
    pub b: Option<BufferViewMut<'a, B, T>>,
    /// LU's pivots.
    pub pivots: Option<BufferViewMut<'a, B, i32>>,
    /// One status per matrix.
    pub info: Option<BufferViewMut<'a, B, i32>>,
}

impl<'a, B: Backend, T: Element> SolverArgs<'a, B, T> {
    /// Operands with only the matrices.
    pub fn new(a: &'a mut impl ViewMut<B, T>) -> Self {
        SolverArgs { a: a.view_mut(), b: None, pivots: None, info: None }
    }
}

impl<B: Backend> Stream<B> {
    /// Enqueue one step of the device's vendor solver (cuSOLVER on CUDA):
    /// `layout`'s LAPACK routine on each column-major matrix of `args.a`,
    /// with the other operands its step uses. `T` is the layout's
    /// precision, each operand holds at least the elements the layout spans
    /// on it, and the scratch the library asks for is taken from this
    /// stream (counted in the memory stats). `Unsupported` where the device
    /// offers no solver of that precision ([`RawDevice::vendor_solver`]),
    /// and while the stream is captured into a graph.
    ///
    /// The statuses in `info` are written on the device: read them after
    /// the call has run (kiln-kernels' `linalg` does, and turns them into
    /// errors).
    ///
    /// [`RawDevice::vendor_solver`]: crate::RawDevice::vendor_solver
    ///
    /// # Examples
    /// The CPU offers no vendor solver (kiln-kernels' `linalg` factors on
    /// the host itself):
    /// ```
    /// use kiln_core::{Device, DType, Error, SolverArgs, SolverLayout, SolverOp};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let mut a = s.upload(&[4.0f64, 2.0, 2.0, 3.0])?;
    /// let layout = SolverLayout { op: SolverOp::Cholesky { lower: true }, precision: DType::F64, rows: 2, cols: 2, batch: 1 };
    /// let refused = s.vendor_solver(&layout, SolverArgs::new(&mut a));
    /// assert!(matches!(refused, Err(Error::Unsupported { .. })));
    /// # Ok(()) }
    /// ```
    pub fn vendor_solver<T: Element>(&self, layout: &SolverLayout, args: SolverArgs<'_, B, T>) -> Result<()> {
        let call = || format!("vendor solver {layout}");
        let raw = self.device.raw();
        let Some(_) = raw.vendor_solver().filter(|v| v.supports(layout.precision)) else {
            return Err(Error::unsupported(B::KIND, call(), format!("{} offers no such solver", self.device.name())));
        };
        layout.check()?;
        if T::DTYPE != layout.precision {
            return Err(Error::invalid(
                call(),
                format!("the matrices hold {}, the layout wants {}", T::DTYPE, layout.precision),
            ));
        }
        let spans = layout.spans().ok_or_else(|| Error::invalid(call(), "the layout overflows"))?;
        let SolverArgs { a, b, pivots, info } = args;
        let a = self.solver_operand(a, "a", spans.a, true, &call)?;
        let b = self.solver_operand_opt(b, "b", spans.b, &call)?;
        let pivots = self.solver_operand_opt(pivots, "pivots", spans.pivots, &call)?;
        let info = self.solver_operand_opt(info, "info", spans.info, &call)?;
        if self.lane().is_some() {
            return Err(Error::unsupported(B::KIND, call(), "a vendor solver is not recorded into graphs"));
        }
        self.device.check_usable()?;
        let bytes = raw.solver_work_size(layout).inspect_err(|e| self.device.note_failure(e))?;
        let work = match bytes {
            0 => None,
            bytes => Some(self.alloc::<u8>(bytes).map_err(|e| match e {
                Error::OutOfMemory { device, requested, counts, .. } => Error::OutOfMemory {
                    device,
                    what: format!("the vendor solver's work area for {}", call()),
                    requested,
                    counts,
                },
                e => e,
            })?),
        };
        let work = work.as_ref().map(|w| GemmOperand { buffer: w.raw(), offset: 0 });
        let solver = SolverCall { layout: *layout, a, b, pivots, info, work };
        solver.check()?;
        // SAFETY: the stream and the buffers are this device's; each operand
        // lies inside its view with the span the layout gives it (checked
        // above), and the views are writable borrows, so no two overlap and
        // nothing else on the host touches them. The work area is a fresh
        // buffer of the size asked for. Work on this stream runs after the
        // call, and the typed API's rule for buffers covers other streams.
        unsafe { raw.solver(&self.queue.raw, &solver) }.inspect_err(|e| self.device.note_failure(e))
    }

    /// `view` as a call operand, after checking that it holds `span`
    /// elements and is this device's; an error when the step does not use
    /// it (`span` 0) unless `used` says it always does.
    fn solver_operand<'v, T: Element>(
        &self,
        view: BufferViewMut<'v, B, T>,
        name: &str,
        span: usize,
        used: bool,
        call: &dyn Fn() -> String,
    ) -> Result<GemmOperand<'v, B>> {
        if !used && span == 0 {
            return Err(Error::invalid(call(), format!("{} takes no `{name}`", call())));
        }
        let (buffer, offset, len) = view.into_parts();
        if len < span {
            return Err(Error::invalid(call(), format!("`{name}` holds {len} elements; the layout spans {span}")));
        }
        self.same_device(buffer.device(), &format!("{}: {name}", call()))?;
        Ok(GemmOperand { buffer: buffer.raw(), offset: offset * T::DTYPE.size() })
    }

    /// [`solver_operand`](Self::solver_operand) for an operand the step may
    /// not use: given exactly when the layout spans it.
    fn solver_operand_opt<'v, T: Element>(
        &self,
        view: Option<BufferViewMut<'v, B, T>>,
        name: &str,
        span: usize,
        call: &dyn Fn() -> String,
    ) -> Result<Option<GemmOperand<'v, B>>> {
        match (view, span) {
            (None, 0) => Ok(None),
            (None, _) => Err(Error::invalid(call(), format!("the step needs `{name}` ({span} elements)"))),
            (Some(v), span) => self.solver_operand(v, name, span, false, call).map(Some),
        }
    }
}
