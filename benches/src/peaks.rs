//! The devices' peak arithmetic rates, each product row's ceiling: a
//! product's rate is reported beside the peak of the arithmetic its mode
//! allows (fp32 for an exact f32 product, TF32 when the mode allows TF32,
//! and so on), as the memory-bound rows are beside the copy rate.
//!
//! The peaks are the vendor's datasheet figures, dense (without the 2:4
//! sparsity NVIDIA's headline tensor-core figures assume), for the devices
//! named exactly as their driver reports them; every other device's peak is
//! unknown, never guessed from a similar name (an H100 PCIe or NVL has
//! other clocks and other peaks than the SXM part below).

use kiln_core::{DType, Precision};
use serde::Serialize;

/// The arithmetic a product's inner loop runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arithmetic {
    /// fp64 fused multiply-adds (on the H100 and H200 the FP64 tensor
    /// cores, which cuBLAS's DGEMM uses, double the plain FP64 rate).
    Fp64,
    /// fp32 fused multiply-adds: an exact `f32` product.
    Fp32,
    /// TF32 tensor cores: `f32` inputs rounded to 10 mantissa bits, fp32 sums.
    Tf32,
    /// bf16 tensor cores, fp32 sums: `bf16` inputs, or `f32` inputs in bf16 mode.
    Bf16,
    /// fp16 tensor cores, fp32 sums: `f16` inputs.
    Fp16,
    /// FP8 tensor cores, fp32 sums: E4M3 and E5M2 inputs (scaled products).
    Fp8,
}

impl Arithmetic {
    /// Every arithmetic, in the order of [`DevicePeaks::tflop_per_s`].
    pub const ALL: [Arithmetic; 6] =
        [Arithmetic::Fp64, Arithmetic::Fp32, Arithmetic::Tf32, Arithmetic::Bf16, Arithmetic::Fp16, Arithmetic::Fp8];

    /// Lower-case name ("tf32").
    pub const fn name(self) -> &'static str {
        match self {
            Arithmetic::Fp64 => "fp64",
            Arithmetic::Fp32 => "fp32",
            Arithmetic::Tf32 => "tf32",
            Arithmetic::Bf16 => "bf16",
            Arithmetic::Fp16 => "fp16",
            Arithmetic::Fp8 => "fp8",
        }
    }

    /// The arithmetic of a product of `input` matrices in mode `precision`
    /// where the device has the mode's faster path; `None` for inputs that
    /// are no floats. Modes change `f32` products only.
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::Arithmetic;
    /// use kiln_core::{DType, Precision};
    /// assert_eq!(Arithmetic::of(DType::F32, Precision::Tf32), Some(Arithmetic::Tf32));
    /// assert_eq!(Arithmetic::of(DType::F64, Precision::Tf32), Some(Arithmetic::Fp64));
    /// assert_eq!(Arithmetic::of(DType::BF16, Precision::Exact), Some(Arithmetic::Bf16));
    /// assert_eq!(Arithmetic::of(DType::I32, Precision::Exact), None);
    /// ```
    pub fn of(input: DType, precision: Precision) -> Option<Arithmetic> {
        match (input, precision) {
            (DType::F32, Precision::Exact) => Some(Arithmetic::Fp32),
            (DType::F32, Precision::Tf32) => Some(Arithmetic::Tf32),
            (DType::F32, Precision::Bf16) | (DType::BF16, _) => Some(Arithmetic::Bf16),
            (DType::F16, _) => Some(Arithmetic::Fp16),
            (DType::F64, _) => Some(Arithmetic::Fp64),
            (DType::F8E4M3 | DType::F8E5M2, _) => Some(Arithmetic::Fp8),
            _ => None,
        }
    }
}

impl std::fmt::Display for Arithmetic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One device's dense peaks, TFLOP/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevicePeaks {
    /// The device's name exactly as its driver reports it (CUDA's
    /// `cuDeviceGetName`, Vulkan's device name), which kiln's rows carry.
    pub device: &'static str,
    /// The peak of each arithmetic of [`Arithmetic::ALL`], in its order.
    pub tflop_per_s: [f64; 6],
}

/// H100 SXM5 80 GB and H200 SXM 141 GB (one GH100 chip, the same clocks):
/// FP64 tensor core 67, FP32 67, TF32 tensor core 495 (989 with sparsity),
/// BF16 and FP16 tensor core 989 (1979 with sparsity), FP8 tensor core
/// 1979 (3958 with sparsity). Sources: NVIDIA's
/// H100 Tensor Core GPU datasheet (the H100 SXM column) and H200 datasheet
/// (the H200 SXM column). kiln's own f64 kernel uses the plain FP64 units
/// (34 TFLOP/s on these parts); the fp64 peak is the tensor cores', which
/// cuBLAS's DGEMM reaches.
const GH100_SXM: [f64; 6] = [67.0, 67.0, 495.0, 989.0, 989.0, 1979.0];

/// Every device whose peaks kiln knows.
pub const DEVICE_PEAKS: &[DevicePeaks] = &[
    DevicePeaks { device: "NVIDIA H100 80GB HBM3", tflop_per_s: GH100_SXM },
    DevicePeaks { device: "NVIDIA H200", tflop_per_s: GH100_SXM },
];

/// The dense peak of `arithmetic` on the device named `device` (as its
/// driver names it), TFLOP/s; `None` (unknown) for a device not in
/// [`DEVICE_PEAKS`].
///
/// # Examples
/// ```
/// use kiln_benches::{peak_tflop_per_s, Arithmetic};
/// assert_eq!(peak_tflop_per_s("NVIDIA H200", Arithmetic::Tf32), Some(495.0));
/// assert_eq!(peak_tflop_per_s("NVIDIA H100 80GB HBM3", Arithmetic::Fp32), Some(67.0));
/// assert_eq!(peak_tflop_per_s("NVIDIA H100 PCIe", Arithmetic::Fp32), None);
/// ```
pub fn peak_tflop_per_s(device: &str, arithmetic: Arithmetic) -> Option<f64> {
    let i = Arithmetic::ALL.iter().position(|&a| a == arithmetic)?;
    DEVICE_PEAKS.iter().find(|p| p.device == device.trim()).map(|p| p.tflop_per_s[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gh100_parts_have_the_datasheet_peaks() {
        for device in ["NVIDIA H100 80GB HBM3", "NVIDIA H200", " NVIDIA H200 "] {
            let peaks = Arithmetic::ALL.map(|a| peak_tflop_per_s(device, a));
            assert_eq!(
                peaks,
                [Some(67.0), Some(67.0), Some(495.0), Some(989.0), Some(989.0), Some(1979.0)],
                "{device}"
            );
        }
    }

    #[test]
    fn other_devices_are_unknown() {
        for device in ["NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "Intel(R) Xeon(R) Processor", ""] {
            assert!(Arithmetic::ALL.iter().all(|&a| peak_tflop_per_s(device, a).is_none()), "{device}");
        }
    }

    #[test]
    fn modes_choose_the_arithmetic() {
        let f32_modes = Precision::ALL.map(|p| Arithmetic::of(DType::F32, p));
        assert_eq!(f32_modes, [Some(Arithmetic::Fp32), Some(Arithmetic::Tf32), Some(Arithmetic::Bf16)]);
        for p in Precision::ALL {
            assert_eq!(Arithmetic::of(DType::F16, p), Some(Arithmetic::Fp16));
            assert_eq!(Arithmetic::of(DType::BF16, p), Some(Arithmetic::Bf16));
            assert_eq!(Arithmetic::of(DType::F64, p), Some(Arithmetic::Fp64));
            assert_eq!(Arithmetic::of(DType::U32, p), None);
        }
        let names: Vec<_> = Arithmetic::ALL.iter().map(|a| a.to_string()).collect();
        assert_eq!(names, ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8"]);
    }
}
