//! CPU kernels as typed Rust functions: [`HostArgs::call`] hands a
//! function its arguments by the types of its parameters (`&[T]` for a
//! read-only buffer, `&mut [T]` for a writable one, `T` for a scalar), in
//! order, so a kernel is written `fn k(x: &[f32], y: &mut [f32], n: u64)`
//! instead of decoding positions one by one.

use crate::args::HostArgs;
use crate::element::Element;
use crate::error::{Error, Result};

/// A parameter of a typed CPU kernel, taken from its launch's arguments.
pub trait HostParam<'a>: Sized {
    /// Argument `index` of `args` as this type; `Err` naming the kernel and
    /// the argument where it is of another kind or type.
    fn take(args: &mut HostArgs<'a>, index: usize) -> Result<Self>;
}

impl<'a, T: Element> HostParam<'a> for &'a [T] {
    fn take(args: &mut HostArgs<'a>, index: usize) -> Result<Self> {
        args.input(index)
    }
}

impl<'a, T: Element> HostParam<'a> for &'a mut [T] {
    fn take(args: &mut HostArgs<'a>, index: usize) -> Result<Self> {
        args.output(index)
    }
}

impl<'a, T: Element> HostParam<'a> for T {
    fn take(args: &mut HostArgs<'a>, index: usize) -> Result<Self> {
        args.scalar(index)
    }
}

/// A function whose parameters, `P`, are all [`HostParam`]s.
pub trait HostKernelFn<'a, P> {
    /// The number of parameters.
    const ARITY: usize;
    /// Call the function with `args` taken in order.
    fn call_with(self, args: &mut HostArgs<'a>) -> Result<()>;
}

macro_rules! host_kernel_fn {
    ($($p:ident),+) => {
        impl<'a, F, $($p: HostParam<'a>),+> HostKernelFn<'a, ($($p,)+)> for F
        where
            F: FnOnce($($p),+) -> Result<()>,
        {
            const ARITY: usize = [$(stringify!($p)),+].len();
            #[allow(non_snake_case)]
            fn call_with(self, args: &mut HostArgs<'a>) -> Result<()> {
                let mut index = 0;
                $(
                    let $p = $p::take(args, index)?;
                    index += 1;
                )+
                let _ = index;
                self($($p),+)
            }
        }
    };
}

host_kernel_fn!(A);
host_kernel_fn!(A, B);
host_kernel_fn!(A, B, C);
host_kernel_fn!(A, B, C, D);
host_kernel_fn!(A, B, C, D, E);
host_kernel_fn!(A, B, C, D, E, F2);
host_kernel_fn!(A, B, C, D, E, F2, G);
host_kernel_fn!(A, B, C, D, E, F2, G, H);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K, L);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K, L, M);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K, L, M, N);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K, L, M, N, O);
host_kernel_fn!(A, B, C, D, E, F2, G, H, I, J, K, L, M, N, O, P);

impl<'a> HostArgs<'a> {
    /// Call `kernel` with these arguments, each taken by the type of its
    /// parameter: `&[T]` a read-only buffer, `&mut [T]` a writable one, `T`
    /// a scalar. `Err` naming the kernel and the argument where one is of
    /// another kind or element type, or where there are more or fewer
    /// arguments than parameters.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Args, Device, HostArgs, Program, Result};
    /// use kiln_cpu::Cpu;
    ///
    /// /// `y[i] = a * x[i]`.
    /// fn scale(a: f32, x: &[f32], y: &mut [f32]) -> Result<()> {
    ///     y.iter_mut().zip(x).for_each(|(y, x)| *y = a * x);
    ///     Ok(())
    /// }
    ///
    /// # fn main() -> Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let program = Program::new("scale").host(|args: &mut HostArgs<'_>| args.call(scale));
    /// let kernel = s.device().kernel(&program)?;
    /// let x = s.upload(&[1.0f32, 2.0, 3.0])?;
    /// let mut y = s.alloc::<f32>(3)?;
    /// let config = kiln_core::LaunchConfig::new(1, 1);
    /// // SAFETY: the kernel writes y, which holds as many elements as x.
    /// unsafe { s.launch(&kernel, config, Args::new().scalar(2.0f32).arg(&x).arg(&mut y))? };
    /// assert_eq!(y.to_vec()?, [2.0, 4.0, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn call<P, K: HostKernelFn<'a, P>>(&mut self, kernel: K) -> Result<()> {
        if self.len() != K::ARITY {
            return Err(Error::invalid(
                format!("kernel `{}`", self.kernel_name()),
                format!("takes {} arguments, {} given", K::ARITY, self.len()),
            ));
        }
        kernel.call_with(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{HostArg, Scalar};
    use crate::element::DType;
    use crate::launch::LaunchConfig;

    fn axpy(a: f32, x: &[f32], y: &mut [f32]) -> Result<()> {
        y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
        Ok(())
    }

    #[test]
    fn parameters_are_taken_by_type_in_order() {
        let x: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut y: Vec<u8> = [10.0f32, 20.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let list = vec![
            HostArg::Scalar(Scalar::new(3.0f32)),
            HostArg::Input(&x, DType::F32),
            HostArg::Output(&mut y, DType::F32),
        ];
        HostArgs::new("axpy", LaunchConfig::new(1, 1), list).call(axpy).unwrap();
        let got: Vec<f32> = y.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [13.0, 26.0]);
    }

    #[test]
    fn a_wrong_kind_type_or_count_is_an_error_naming_the_argument() {
        let x = [0u8; 8];
        let mut y = [0u8; 8];
        // The buffers swapped: argument 1 is writable where `&[f32]` is read-only.
        let list = vec![
            HostArg::Scalar(Scalar::new(3.0f32)),
            HostArg::Output(&mut y, DType::F32),
            HostArg::Input(&x, DType::F32),
        ];
        let err = HostArgs::new("axpy", LaunchConfig::new(1, 1), list).call(axpy).unwrap_err().to_string();
        assert!(err.contains("kernel `axpy` argument 1") && err.contains("read-only"), "{err}");
        // A scalar of another type.
        let list = vec![HostArg::Scalar(Scalar::new(3u32)), HostArg::Input(&x, DType::F32)];
        let err = HostArgs::new("axpy", LaunchConfig::new(1, 1), list).call(axpy).unwrap_err().to_string();
        assert!(err.contains("takes 3 arguments, 2 given"), "{err}");
        let mut y = [0u8; 8];
        let list = vec![
            HostArg::Scalar(Scalar::new(3u32)),
            HostArg::Input(&x, DType::F32),
            HostArg::Output(&mut y, DType::F32),
        ];
        let err = HostArgs::new("axpy", LaunchConfig::new(1, 1), list).call(axpy).unwrap_err().to_string();
        assert!(err.contains("argument 0") && err.contains("f32"), "{err}");
    }
}
