//! The backends compiled into kiln, and choosing one at run time.
//!
//! Everything here is generated from the one list of backends,
//! [`kiln_core::backend_list!`] (which says how to add one), as the
//! run-time tier expands it (`backend_list!` in `src/runtime/mod.rs`: the
//! backends compiled in), and ordered by each entry's preference (GPUs
//! first, [`BackendKind::preference`]).

use std::fmt;

use kiln_core::{Backend, BackendKind, DeviceInfo, Error, Result};

use crate::runtime::{Device, backend_list};

/// How to list and open the devices of one backend compiled in.
#[derive(Clone, Copy)]
struct Entry {
    kind: BackendKind,
    /// Its devices, or why it cannot run here.
    devices: fn() -> Result<Vec<DeviceInfo>>,
    /// Open one of its devices on the run-time tier.
    open: fn(usize) -> Result<Device>,
}

/// The entries of the backends compiled in, in the list's order.
macro_rules! entries_of {
    (() $($(#[$attr:meta])* $variant:ident($backend:path),)*) => {
        vec![
            $(
                $(#[$attr])*
                Entry {
                    kind: <$backend as Backend>::KIND,
                    devices: <$backend as Backend>::devices,
                    open: |ordinal| kiln_core::Device::<$backend>::open(ordinal).map(Device::$variant),
                },
            )*
        ]
    };
}

/// Every backend compiled in, in order of preference: CUDA with the `cuda`
/// feature, wgpu with the `wgpu` feature, and the CPU.
fn entries() -> Vec<Entry> {
    let mut entries = backend_list!(entries_of!());
    entries.sort_by_key(|e| e.kind.preference());
    entries
}

/// The backends compiled into this build of kiln, in the order
/// [`best`] tries them (GPUs first; the CPU always, last).
///
/// # Examples
/// ```
/// let kinds = kiln::registry::compiled();
/// assert_eq!(kinds.last(), Some(&kiln::BackendKind::Cpu));
/// ```
pub fn compiled() -> Vec<BackendKind> {
    entries().iter().map(|e| e.kind).collect()
}

/// Each backend kiln knows, with its devices or the reason it is absent
/// ("no CUDA driver: libcuda.so not found", "not compiled into this build").
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

/// Where [`best`] ranks a device of backend `kind`, lower first: its
/// backend's preference (CUDA, then wgpu, then the CPU backend); `None` for
/// a GPU emulated in software, which `best` takes only when its backend is
/// asked for by name.
fn tier(kind: BackendKind, info: &DeviceInfo) -> Option<u8> {
    (!info.kind.is_software()).then(|| kind.preference())
}

/// The devices [`best`] tries, in order, as (backend, ordinal), out
/// of those `found`: with a backend `requested` by name (`KILN_BACKEND`), its
/// first device, whatever it is; else every device that has a [`tier`], by
/// tier, each backend's own order kept (wgpu lists discrete GPUs first).
/// Pure, so the policy is testable without devices.
fn choose(requested: Option<BackendKind>, found: &[(BackendKind, DeviceInfo)]) -> Vec<(BackendKind, usize)> {
    if let Some(kind) = requested {
        return found.iter().filter(|(k, _)| *k == kind).take(1).map(|(k, d)| (*k, d.ordinal)).collect();
    }
    let mut ranked: Vec<(u8, BackendKind, usize)> =
        found.iter().filter_map(|(k, d)| tier(*k, d).map(|t| (t, *k, d.ordinal))).collect();
    // A stable sort keeps each backend's order among equals.
    ranked.sort_by_key(|&(t, _, _)| t);
    ranked.into_iter().map(|(_, k, ordinal)| (k, ordinal)).collect()
}

/// The device `KILN_BACKEND` names (`cpu`, `cuda` or `wgpu`: that
/// backend's first device, whatever it is), or else the first that opens
/// of, in this order:
///
/// 1. CUDA devices;
/// 2. wgpu adapters on GPU hardware: discrete, integrated, virtual, then
///    those whose driver does not say what they are;
/// 3. kiln's CPU backend.
///
/// A wgpu adapter that emulates a GPU on the CPU (Mesa's lavapipe or
/// llvmpipe: [`DeviceKind::Software`](crate::DeviceKind::Software)) is
/// never chosen here, as it runs kernels more slowly than the CPU
/// backend; ask for it by name with `KILN_BACKEND=wgpu` or
/// [`Device::open`](crate::Device::open). `kiln devices` shows which
/// adapters are software, and [`best_with_report`] says why each backend
/// before the chosen one was passed over. [`crate::Device::best`] is this,
/// on the run-time tier.
///
/// # Examples
/// ```
/// let dev = kiln::registry::best().unwrap();   // the CPU at least
/// println!("running on {}", dev.info());
/// ```
pub fn best() -> Result<Device> {
    best_with_report().map(|(device, _)| device)
}

/// What [`best`] passed over on its way to the device it chose, in the
/// order it looked: backends not compiled in, backends that cannot run
/// here (no driver, no adapter) or find no device, software adapters, and
/// devices that failed to open. Backends after the chosen device's are not
/// looked at. Its `Display` is one line per entry.
///
/// # Examples
/// ```
/// let (dev, report) = kiln::Device::best_with_report().unwrap();
/// println!("running on {}", dev.info());
/// for skipped in &report.passed_over {
///     println!("passed over {skipped}"); // e.g. "cuda: no CUDA driver: libcuda.so not found"
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BestReport {
    /// What was passed over, in the order [`best`] looked.
    pub passed_over: Vec<PassedOver>,
}

/// A backend, or one of its devices, that [`best`] did not take, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct PassedOver {
    /// The backend.
    pub backend: BackendKind,
    /// The device, where the backend listed it; `None` when the backend as a
    /// whole was passed over.
    pub device: Option<DeviceInfo>,
    /// Why, in words: "no CUDA driver: libcuda.so not found", "not compiled
    /// into this build of kiln", "emulates a GPU on the CPU ...".
    pub reason: String,
}

impl fmt::Display for PassedOver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.device {
            Some(d) => write!(f, "{}:{} {}: {}", d.backend, d.ordinal, d.name, self.reason),
            None => write!(f, "{}: {}", self.backend, self.reason),
        }
    }
}

impl fmt::Display for BestReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.passed_over.iter().enumerate() {
            write!(f, "{}{p}", if i == 0 { "" } else { "\n" })?;
        }
        Ok(())
    }
}

impl BestReport {
    fn pass(&mut self, backend: BackendKind, device: Option<&DeviceInfo>, reason: impl Into<String>) {
        self.passed_over.push(PassedOver { backend, device: device.cloned(), reason: reason.into() });
    }
}

/// Why a backend is absent, without the "backend unavailable" preamble: the
/// reason of [`Error::BackendUnavailable`], or any other error in full.
///
/// # Examples
/// ```
/// let e = kiln::Error::BackendUnavailable { backend: kiln::BackendKind::Cuda, reason: "no CUDA driver".into() };
/// assert_eq!(kiln::registry::absent_reason(&e), "no CUDA driver");
/// ```
pub fn absent_reason(e: &Error) -> String {
    match e {
        Error::BackendUnavailable { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// [`best`], with what it passed over and why: where a program without a
/// GPU landed on the CPU, the report says that CUDA found no driver and
/// that the only wgpu adapter was lavapipe. Quiet: nothing is printed.
/// [`crate::Device::best_with_report`] is this, on the run-time tier.
///
/// # Examples
/// ```
/// let (dev, report) = kiln::registry::best_with_report().unwrap();
/// if dev.info().backend == kiln::BackendKind::Cpu && !report.passed_over.is_empty() {
///     eprintln!("no GPU taken:\n{report}");
/// }
/// ```
pub fn best_with_report() -> Result<(Device, BestReport)> {
    let requested = match std::env::var("KILN_BACKEND") {
        Ok(name) if !name.trim().is_empty() => Some(name.parse::<BackendKind>()?),
        _ => None,
    };
    let entries = entries();
    if let Some(kind) = requested.filter(|&k| entries.iter().all(|e| e.kind != k)) {
        return Err(not_compiled(kind));
    }
    let mut report = BestReport::default();
    for &kind in BackendKind::ALL.iter().filter(|&&k| entries.iter().all(|e| e.kind != k)) {
        report.pass(kind, None, absent_reason(&not_compiled(kind)));
    }
    let mut errors = Vec::new();
    // One backend at a time, in the order of their tiers, so that a
    // machine with CUDA never loads Vulkan.
    for entry in &entries {
        if let Some(other) = requested.filter(|&k| k != entry.kind) {
            report.pass(entry.kind, None, format!("KILN_BACKEND={other} asks for another backend"));
            continue;
        }
        let found: Vec<(BackendKind, DeviceInfo)> = match (entry.devices)() {
            Ok(found) => found.into_iter().map(|d| (entry.kind, d)).collect(),
            Err(e) => {
                report.pass(entry.kind, None, absent_reason(&e));
                errors.push(e);
                continue;
            }
        };
        if found.is_empty() {
            report.pass(entry.kind, None, "the backend runs but finds no device");
        }
        let order = choose(requested, &found);
        for (_, info) in found.iter().filter(|(k, d)| !order.contains(&(*k, d.ordinal))) {
            let why = match requested {
                Some(kind) => format!("KILN_BACKEND={kind} opens the backend's first device"),
                None => format!(
                    "emulates a GPU on the CPU ({}), slower than the cpu backend; KILN_BACKEND={} opens it",
                    info.kind, entry.kind
                ),
            };
            report.pass(entry.kind, Some(info), why);
        }
        for (_, ordinal) in order {
            match (entry.open)(ordinal) {
                Ok(d) => return Ok((d, report)),
                Err(e) => {
                    let info = found.iter().map(|(_, d)| d).find(|d| d.ordinal == ordinal);
                    report.pass(entry.kind, info, format!("failed to open: {e}"));
                    errors.push(e);
                }
            }
        }
    }
    if let Some(kind) = requested {
        return Err(errors.pop().unwrap_or(Error::DeviceNotFound { backend: kind, ordinal: 0, count: 0 }));
    }
    let reasons: Vec<String> = errors.iter().map(Error::to_string).collect();
    Err(Error::BackendUnavailable { backend: BackendKind::Cpu, reason: reasons.join("; ") })
}

/// Open device `ordinal` of backend `kind`; an error says why it cannot
/// (no driver, no such device, not compiled into this build).
///
/// # Examples
/// ```
/// assert!(kiln::registry::open(kiln::BackendKind::Cpu, 0).is_ok());
/// assert!(kiln::registry::open(kiln::BackendKind::Cpu, 3).is_err());
/// ```
pub fn open(kind: BackendKind, ordinal: usize) -> Result<Device> {
    match entries().into_iter().find(|e| e.kind == kind) {
        Some(e) => (e.open)(ordinal),
        None => Err(not_compiled(kind)),
    }
}

#[cfg(test)]
mod tests {
    use BackendKind::{Cpu, Cuda, Wgpu};
    use kiln_core::{DeviceKind, Features, Limits};

    use super::*;

    fn found(kind: BackendKind, ordinal: usize, device: DeviceKind) -> (BackendKind, DeviceInfo) {
        let info = DeviceInfo {
            backend: kind,
            ordinal,
            name: format!("{kind}:{ordinal} {device}"),
            kind: device,
            compute_units: 1,
            memory_bytes: 1 << 30,
            compute_capability: None,
            driver: String::new(),
            limits: Limits {
                max_threads_per_block: 256,
                max_block: [256, 256, 64],
                max_grid: [65535; 3],
                max_shared_mem_per_block: 16 << 10,
                max_buffer_bytes: 1 << 30,
                max_binding_bytes: 1 << 27,
                warp_size: 1,
                min_warp_size: 1,
            },
            features: Features::default(),
        };
        (kind, info)
    }

    #[test]
    fn cuda_first_then_wgpu_hardware_then_the_cpu() {
        let all = [
            found(Cpu, 0, DeviceKind::Cpu),
            found(Wgpu, 0, DeviceKind::DiscreteGpu),
            found(Wgpu, 1, DeviceKind::IntegratedGpu),
            found(Cuda, 0, DeviceKind::DiscreteGpu),
            found(Cuda, 1, DeviceKind::DiscreteGpu),
        ];
        assert_eq!(choose(None, &all), [(Cuda, 0), (Cuda, 1), (Wgpu, 0), (Wgpu, 1), (Cpu, 0)]);
    }

    #[test]
    fn a_software_adapter_ranks_below_the_cpu_and_is_never_chosen() {
        let lavapipe_only = [found(Wgpu, 0, DeviceKind::Software), found(Cpu, 0, DeviceKind::Cpu)];
        assert_eq!(choose(None, &lavapipe_only), [(Cpu, 0)]);
        // A hardware adapter listed after the software one is still taken, before the CPU.
        let both = [
            found(Wgpu, 0, DeviceKind::Software),
            found(Wgpu, 1, DeviceKind::VirtualGpu),
            found(Cpu, 0, DeviceKind::Cpu),
        ];
        assert_eq!(choose(None, &both), [(Wgpu, 1), (Cpu, 0)]);
        let unknown = [found(Wgpu, 0, DeviceKind::Other), found(Cpu, 0, DeviceKind::Cpu)];
        assert_eq!(choose(None, &unknown), [(Wgpu, 0), (Cpu, 0)]);
    }

    #[test]
    fn a_backend_named_in_kiln_backend_overrides_the_ranking() {
        let all = [
            found(Wgpu, 0, DeviceKind::Software),
            found(Cpu, 0, DeviceKind::Cpu),
            found(Cuda, 0, DeviceKind::DiscreteGpu),
        ];
        assert_eq!(choose(Some(Wgpu), &all), [(Wgpu, 0)]);
        assert_eq!(choose(Some(Cpu), &all), [(Cpu, 0)]);
        assert!(choose(Some(Cuda), &all[..2]).is_empty());
    }

    /// `best` probes backends in the entries' order and stops at the first
    /// device that opens, which is right only while that order is the tiers'.
    #[test]
    fn entries_are_in_tier_order() {
        let tiers: Vec<u8> =
            entries().iter().map(|e| tier(e.kind, &found(e.kind, 0, DeviceKind::DiscreteGpu).1).unwrap()).collect();
        assert!(tiers.is_sorted(), "{tiers:?}");
    }

    /// On a machine whose only GPU is emulated in software (lavapipe in CI),
    /// `best` takes the CPU backend.
    #[test]
    fn best_takes_the_cpu_when_no_gpu_is_hardware() {
        if std::env::var("KILN_BACKEND").is_ok_and(|v| !v.trim().is_empty()) {
            eprintln!("KILN_BACKEND is set, so best() opens what it names; nothing to check");
            return;
        }
        let gpus: Vec<DeviceInfo> = probe()
            .into_iter()
            .filter(|(kind, _)| *kind != Cpu)
            .flat_map(|(_, found)| found.unwrap_or_default())
            .collect();
        if let Some(gpu) = gpus.iter().find(|d| !d.kind.is_software()) {
            eprintln!("{gpu} is GPU hardware, which best() takes; nothing to check");
            return;
        }
        let (dev, report) = best_with_report().unwrap();
        assert_eq!(dev.info().backend, Cpu, "best() chose {} over {gpus:?}", dev.info());
        // Every GPU backend before the CPU is in the report, with a reason.
        for kind in [Cuda, Wgpu] {
            assert!(report.passed_over.iter().any(|p| p.backend == kind && !p.reason.is_empty()), "{report}");
        }
        for gpu in &gpus {
            let line = report.passed_over.iter().find(|p| p.device.as_ref() == Some(gpu));
            assert!(line.is_some_and(|p| p.reason.contains("emulates a GPU")), "{gpu} not in:\n{report}");
        }
    }

    /// A backend left out by its feature is an error saying so, everywhere
    /// a device is opened or listed.
    #[test]
    fn a_backend_not_compiled_in_is_an_error_saying_so() {
        let absent: Vec<BackendKind> = [Cuda, Wgpu]
            .into_iter()
            .filter(|k| (*k == Cuda && !cfg!(feature = "cuda")) || (*k == Wgpu && !cfg!(feature = "wgpu")))
            .collect();
        for kind in absent {
            let err = open(kind, 0).unwrap_err();
            assert!(err.to_string().contains("not compiled into this build"), "{err}");
            let err = crate::Device::open(kind, 0).unwrap_err();
            assert!(matches!(err, Error::BackendUnavailable { backend, .. } if backend == kind), "{err:?}");
            let listed = probe().into_iter().find(|(k, _)| *k == kind).map(|(_, r)| r);
            assert!(listed.is_some_and(|r| r.is_err()), "probe lists {kind} as absent");
            assert!(entries().iter().all(|e| e.kind != kind));
        }
    }
}
