//! Constants of one type, kept as bits so that they hash and print exactly.

use kiln_core::DType;

use super::ty::Vt;

/// A constant: its type and its bits (little-endian, in the low bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Value {
    pub(crate) ty: Vt,
    pub(crate) bits: u64,
}

impl Value {
    pub(crate) fn from_bits(dtype: DType, bits: u64) -> Value {
        Value { ty: Vt::Num(dtype), bits }
    }

    pub(crate) fn bool(v: bool) -> Value {
        Value { ty: Vt::Bool, bits: u64::from(v) }
    }

    /// `v` converted to `ty` (integers wrap, floats round), for literals.
    pub(crate) fn int(v: i128, dtype: DType) -> Value {
        let bits = match dtype {
            DType::I32 => u64::from(v as i32 as u32),
            DType::U32 => u64::from(v as u32),
            DType::I64 => v as i64 as u64,
            DType::U64 => v as u64,
            DType::F32 => u64::from((v as f32).to_bits()),
            _ => (v as f64).to_bits(),
        };
        Value::from_bits(dtype, bits)
    }

    pub(crate) fn float(v: f64, dtype: DType) -> Value {
        match dtype {
            DType::F32 => Value::from_bits(dtype, u64::from((v as f32).to_bits())),
            DType::F16 => Value::from_bits(dtype, u64::from(half::f16::from_f64(v).to_bits())),
            DType::BF16 => Value::from_bits(dtype, u64::from(half::bf16::from_f64(v).to_bits())),
            _ => Value::from_bits(dtype, v.to_bits()),
        }
    }

    pub(crate) fn as_f32(self) -> f32 {
        f32::from_bits(self.bits as u32)
    }

    pub(crate) fn as_f64(self) -> f64 {
        f64::from_bits(self.bits)
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ty {
            Vt::Bool => write!(f, "{}", self.bits != 0),
            Vt::Num(DType::I32) => write!(f, "{}i32", self.bits as u32 as i32),
            Vt::Num(DType::U32) => write!(f, "{}u32", self.bits as u32),
            Vt::Num(DType::I64) => write!(f, "{}i64", self.bits as i64),
            Vt::Num(DType::U64) => write!(f, "{}u64", self.bits),
            Vt::Num(DType::F32) => write!(f, "{:?}f32", self.as_f32()),
            Vt::Num(d @ (DType::F16 | DType::BF16)) => {
                write!(f, "{:?}{d}", crate::widen::half_to_f32(d, self.bits as u16))
            }
            Vt::Num(d) => write!(f, "{:?}{d}", self.as_f64()),
        }
    }
}
