//! The backends compiled into kiln, and choosing one at run time.
//!
//! Adding a backend is one line in [`Backends`] and one in [`entries`].

use kiln_core::dynamic::{AnyDevice, BackendEntry, BackendSet, DeviceVisitor};
use kiln_core::{BackendKind, DeviceInfo, Error, Result};

/// Every backend compiled in, as a [`BackendSet`] for visits.
pub type Backends = (kiln_cuda::Cuda, kiln_wgpu::Wgpu, kiln_cpu::Cpu);

/// Every backend compiled in, in order of preference (GPUs first).
pub fn entries() -> Vec<BackendEntry> {
    vec![
        BackendEntry::of::<kiln_cuda::Cuda>(),
        BackendEntry::of::<kiln_wgpu::Wgpu>(),
        BackendEntry::of::<kiln_cpu::Cpu>(),
    ]
}

/// Each backend kiln knows, with its devices or the reason it is absent
/// ("no CUDA driver: libcuda.so not found", "not compiled in").
///
/// # Examples
/// ```
/// let found = kiln::probe();
/// let cpu = found.iter().find(|(k, _)| *k == kiln::BackendKind::Cpu).unwrap();
/// assert_eq!(cpu.1.as_ref().unwrap().len(), 1);
/// ```
pub fn probe() -> Vec<(BackendKind, Result<Vec<DeviceInfo>>)> {
    let entries = entries();
    BackendKind::ALL
        .iter()
        .map(|&kind| match entries.iter().find(|e| e.kind == kind) {
            Some(e) => (kind, (e.devices)()),
            None => (kind, Err(not_compiled(kind))),
        })
        .collect()
}

fn not_compiled(kind: BackendKind) -> Error {
    Error::BackendUnavailable { backend: kind, reason: "not compiled into this build of kiln".into() }
}

/// A device whose backend is chosen at run time.
#[derive(Debug)]
pub struct Device(AnyDevice);

impl Device {
    /// The device `KILN_BACKEND` names (`cpu`, `cuda` or `wgpu`, its first
    /// device), or else the first that opens of CUDA, wgpu and the CPU.
    ///
    /// # Examples
    /// ```
    /// let dev = kiln::Device::best().unwrap();   // the CPU at least
    /// println!("running on {}", dev.info());
    /// ```
    pub fn best() -> Result<Device> {
        if let Ok(name) = std::env::var("KILN_BACKEND") {
            if !name.trim().is_empty() {
                return Device::open(name.parse()?, 0);
            }
        }
        let mut reasons = Vec::new();
        for entry in entries() {
            match (entry.open)(0) {
                Ok(d) => return Ok(Device(d)),
                Err(e) => reasons.push(e.to_string()),
            }
        }
        Err(Error::BackendUnavailable { backend: BackendKind::Cpu, reason: reasons.join("; ") })
    }

    /// Open device `ordinal` of backend `kind`.
    ///
    /// # Examples
    /// ```
    /// assert!(kiln::Device::open(kiln::BackendKind::Cpu, 0).is_ok());
    /// assert!(kiln::Device::open(kiln::BackendKind::Cpu, 3).is_err());
    /// ```
    pub fn open(kind: BackendKind, ordinal: usize) -> Result<Device> {
        match entries().into_iter().find(|e| e.kind == kind) {
            Some(e) => (e.open)(ordinal).map(Device),
            None => Err(not_compiled(kind)),
        }
    }

    /// Open device 0 of the backend called `name` ("cpu", "cuda", "wgpu").
    ///
    /// # Examples
    /// ```
    /// let err = kiln::Device::by_name("opencl").unwrap_err();
    /// assert!(err.to_string().contains("unknown backend"));
    /// ```
    pub fn by_name(name: &str) -> Result<Device> {
        Device::open(name.parse()?, 0)
    }

    /// Run `visitor` with the concrete backend type.
    pub fn visit<V: DeviceVisitor>(&self, visitor: V) -> Result<V::Output> {
        <Backends as BackendSet>::visit(&self.0, visitor)
    }

    /// The erased device.
    pub fn as_any(&self) -> &AnyDevice {
        &self.0
    }
}

impl std::ops::Deref for Device {
    type Target = AnyDevice;
    fn deref(&self) -> &AnyDevice {
        &self.0
    }
}
