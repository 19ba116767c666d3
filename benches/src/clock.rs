//! The SM clock of an NVIDIA device while a case runs, through NVML
//! (`nvml-wrapper`, which loads `libnvidia-ml` at run time: a machine
//! without it simply records no clock).
//!
//! A GPU idle between timed runs lowers its clocks; a row measured at a
//! low clock is not the hardware's rate, so each row records the clock
//! its samples ran at and the table flags one below the maximum.

use std::sync::OnceLock;

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::Clock;

fn nvml() -> Option<&'static Nvml> {
    static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().ok()).as_ref()
}

/// The clocks of one NVML device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmClock {
    index: u32,
}

impl SmClock {
    /// The NVML device named `name` (the name CUDA and NVIDIA's Vulkan
    /// driver report, "NVIDIA H100 80GB HBM3"), the first of that name;
    /// `None` without NVML or without such a device.
    pub fn find(name: &str) -> Option<SmClock> {
        let nvml = nvml()?;
        (0..nvml.device_count().ok()?)
            .find(|&index| nvml.device_by_index(index).and_then(|d| d.name()).is_ok_and(|n| n == name))
            .map(|index| SmClock { index })
    }

    /// The SM clock now, MHz.
    pub fn sm_mhz(&self) -> Option<u32> {
        nvml()?.device_by_index(self.index).ok()?.clock_info(Clock::SM).ok()
    }

    /// The highest SM clock the device runs at, MHz.
    pub fn max_sm_mhz(&self) -> Option<u32> {
        nvml()?.device_by_index(self.index).ok()?.max_clock_info(Clock::SM).ok()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_device_nvml_does_not_know_has_no_clock() {
        assert_eq!(super::SmClock::find("kiln: no such device"), None);
    }
}
