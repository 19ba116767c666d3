//! Scalar kernel arguments, packed as the ABI says (kernels/README.md):
//! in argument order into one uniform buffer, each at an offset that is a
//! multiple of its own size (the WGSL layout of a struct of scalars), the
//! whole padded to 16 bytes.

use kiln_core::{BackendKind, DType, Error, Result, Scalar};

/// The packed bytes, and where each scalar went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Packed {
    pub(crate) bytes: Vec<u8>,
    pub(crate) offsets: Vec<u32>,
}

/// Pack `scalars` for kernel `kernel`; `Unsupported` for types WGSL has no
/// scalar for (u8, i64, u64, bf16).
pub(crate) fn pack(scalars: &[Scalar], kernel: &str) -> Result<Packed> {
    let mut bytes = Vec::new();
    let mut offsets = Vec::with_capacity(scalars.len());
    for (i, s) in scalars.iter().enumerate() {
        let dtype = s.dtype();
        if dtype.wgsl_name().is_none() {
            return Err(Error::unsupported(
                BackendKind::Wgpu,
                format!("scalar argument {i} ({dtype}) of kernel `{kernel}`"),
                format!("WGSL has no {dtype} type; pass it as {}", wider(dtype)),
            ));
        }
        let size = dtype.size();
        let at = bytes.len().next_multiple_of(size);
        bytes.resize(at, 0);
        bytes.extend_from_slice(s.as_bytes());
        offsets.push(at as u32);
    }
    let padded = bytes.len().next_multiple_of(16);
    bytes.resize(padded, 0);
    Ok(Packed { bytes, offsets })
}

/// What to pass instead of a scalar type WGSL lacks.
fn wider(dtype: DType) -> &'static str {
    match dtype {
        DType::U8 => "u32",
        DType::BF16 => "f32",
        _ => "two u32 halves, or u32 where the value fits",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_core::f16;

    #[test]
    fn each_scalar_at_a_multiple_of_its_size_padded_to_16() {
        let s = [Scalar::new(1u32), Scalar::new(2.5f64), Scalar::new(f16::from_f32(1.0)), Scalar::new(-3i32)];
        let p = pack(&s, "k").unwrap();
        assert_eq!(p.offsets, vec![0, 8, 16, 20]);
        assert_eq!(p.bytes.len(), 32);
        assert_eq!(&p.bytes[0..4], &1u32.to_le_bytes());
        assert_eq!(&p.bytes[4..8], &[0; 4]);
        assert_eq!(&p.bytes[8..16], &2.5f64.to_le_bytes());
        assert_eq!(&p.bytes[16..18], &f16::from_f32(1.0).to_le_bytes());
        assert_eq!(&p.bytes[20..24], &(-3i32).to_le_bytes());
    }

    #[test]
    fn no_scalars_is_empty_and_types_without_wgsl_are_refused() {
        assert_eq!(pack(&[], "k").unwrap(), Packed { bytes: vec![], offsets: vec![] });
        let e = pack(&[Scalar::new(1u32), Scalar::new(7u64)], "k").unwrap_err();
        assert!(e.to_string().contains("scalar argument 1 (u64) of kernel `k`"), "{e}");
        assert!(pack(&[Scalar::new(1u8)], "k").is_err());
    }
}
