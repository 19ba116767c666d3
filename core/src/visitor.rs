//! [`DeviceVisitor`]: generic code over [`Backend`] run on a device whose
//! backend is known only at run time (`kiln::Device::visit` hands it the
//! typed device).

use crate::{Backend, Device};

/// Work that can run on a device of any backend: its one generic method
/// runs with the concrete backend type. `kiln::Device::visit` runs one on
/// a device whose backend was chosen while the program runs; here, on a
/// typed device, it is a plain call.
///
/// # Examples
/// ```
/// use kiln_core::{Backend, Device, DeviceVisitor};
/// use kiln_cpu::Cpu;
///
/// struct SumOnDevice(Vec<u32>);
/// impl DeviceVisitor for SumOnDevice {
///     type Output = kiln_core::Result<u32>;
///     fn visit<B: Backend>(self, dev: &Device<B>) -> Self::Output {
///         Ok(dev.upload(&self.0)?.to_vec()?.iter().sum())
///     }
/// }
///
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// assert_eq!(SumOnDevice(vec![1, 2, 3]).visit(&dev)?, 6);
/// # Ok(()) }
/// ```
pub trait DeviceVisitor {
    /// What the work returns.
    type Output;
    /// Run on `device`.
    fn visit<B: Backend>(self, device: &Device<B>) -> Self::Output;
}
