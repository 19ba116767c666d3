//! Type erasure, in one place: choosing a backend at run time.
//!
//! Inside the workspace everything is generic over [`Backend`]. Programs that
//! pick a backend at run time (the `kiln` CLI, `kiln::Device::best()`, the
//! conformance and bench registries) hold an [`AnyDevice`] and hand it to a
//! [`DeviceVisitor`], whose one generic method then runs with the concrete
//! backend type. A [`BackendEntry`] tells how to list and open one backend's
//! devices; a [`BackendSet`] (a tuple of backend types) tells which backends
//! a visit may find.

use std::any::Any;

use crate::{Backend, BackendKind, Device, DeviceInfo, Error, Result};

/// Work that can run on a device of any backend.
///
/// # Examples
/// ```
/// use kiln_core::dynamic::{AnyDevice, BackendSet, DeviceVisitor};
/// use kiln_core::{Backend, Device};
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
/// let any = AnyDevice::new(Device::<Cpu>::open(0)?);
/// let total = <(Cpu,)>::visit(&any, SumOnDevice(vec![1, 2, 3]))??;
/// assert_eq!(total, 6);
/// # Ok(()) }
/// ```
pub trait DeviceVisitor {
    /// What the work returns.
    type Output;
    /// Run on `device`.
    fn visit<B: Backend>(self, device: &Device<B>) -> Self::Output;
}

/// The object-safe face of a [`Device`] of any backend.
pub trait DynDevice: Send + Sync + 'static {
    /// Identity, limits and features.
    fn info(&self) -> &DeviceInfo;
    /// For downcasting to `Device<B>`.
    fn as_any(&self) -> &dyn Any;
}

impl<B: Backend> DynDevice for Device<B> {
    fn info(&self) -> &DeviceInfo {
        Device::info(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A device whose backend is chosen at run time.
pub struct AnyDevice {
    inner: Box<dyn DynDevice>,
}

impl std::fmt::Debug for AnyDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyDevice({})", self.info())
    }
}

impl AnyDevice {
    /// Erase the backend of `device`.
    pub fn new<B: Backend>(device: Device<B>) -> Self {
        AnyDevice { inner: Box::new(device) }
    }

    /// Identity, limits and features.
    pub fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }

    /// The backend.
    pub fn kind(&self) -> BackendKind {
        self.info().backend
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The typed device, if its backend is `B`.
    pub fn downcast<B: Backend>(&self) -> Option<&Device<B>> {
        self.inner.as_any().downcast_ref()
    }
}

/// A set of backend types a visit may dispatch to: `(B1,)`, `(B1, B2)`, `(B1, B2, B3)`.
pub trait BackendSet {
    /// Run `visitor` on `device` with its concrete backend type; `Unsupported`
    /// when the device's backend is not in the set.
    fn visit<V: DeviceVisitor>(device: &AnyDevice, visitor: V) -> Result<V::Output>;
}

macro_rules! backend_set {
    ($($b:ident),+) => {
        impl<$($b: Backend),+> BackendSet for ($($b,)+) {
            fn visit<V: DeviceVisitor>(device: &AnyDevice, visitor: V) -> Result<V::Output> {
                $(
                    if let Some(d) = device.downcast::<$b>() {
                        return Ok(visitor.visit(d));
                    }
                )+
                Err(Error::unsupported(device.kind(), "dispatch", "this backend is not compiled into the program"))
            }
        }
    };
}
backend_set!(B1);
backend_set!(B1, B2);
backend_set!(B1, B2, B3);
backend_set!(B1, B2, B3, B4);

/// How to list and open the devices of one backend, without naming its type.
#[derive(Clone, Copy)]
pub struct BackendEntry {
    /// The backend.
    pub kind: BackendKind,
    /// Its devices, or why it cannot run here.
    pub devices: fn() -> Result<Vec<DeviceInfo>>,
    /// Open one of its devices.
    pub open: fn(usize) -> Result<AnyDevice>,
}

impl BackendEntry {
    /// The entry for backend `B`.
    pub fn of<B: Backend>() -> Self {
        BackendEntry {
            kind: B::KIND,
            devices: B::devices,
            open: |ordinal| Device::<B>::open(ordinal).map(AnyDevice::new),
        }
    }
}

impl std::fmt::Debug for BackendEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BackendEntry({})", self.kind)
    }
}
