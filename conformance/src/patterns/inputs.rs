//! Building inputs, shared by the pattern files: data placed at a random
//! misalignment, and values converted from the f64 a reference computes in.

use kiln_core::{Backend, Buffer, DType, Device};
use rand::Rng;

use crate::{Ctx, Sample};

/// A random number of leading elements (0 to 3) before a case's data.
pub(super) fn offset(ctx: &mut Ctx) -> usize {
    ctx.rng.random_range(0..4)
}

/// A buffer holding `off` random elements, then `data`: the data is
/// `buf.slice(off..)`, so a run on it is also a run on a view at some
/// 16-byte misalignment.
pub(super) fn upload_at<B: Backend, T: Sample>(
    device: &Device<B>,
    ctx: &mut Ctx,
    data: &[T],
    off: usize,
) -> kiln_core::Result<(Buffer<B, T>, Vec<T>)> {
    let mut all: Vec<T> = crate::random_vec(&mut ctx.rng, off);
    all.extend_from_slice(data);
    Ok((device.upload(&all)?, all))
}

/// `v` as a `T`: rounded to nearest for floats, truncated for integers.
pub(super) fn from_f64<T: Sample>(v: f64) -> T {
    let bytes: [u8; 8] = match T::DTYPE {
        DType::F32 => widen(&(v as f32).to_le_bytes()),
        DType::I32 => widen(&(v as i32).to_le_bytes()),
        DType::U32 => widen(&(v as u32).to_le_bytes()),
        DType::U8 => [v as u8, 0, 0, 0, 0, 0, 0, 0],
        DType::F16 => widen16(half::f16::from_f64(v).to_bits()),
        DType::BF16 => widen16(half::bf16::from_f64(v).to_bits()),
        _ => v.to_le_bytes(),
    };
    bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()])
}

fn widen16(bits: u16) -> [u8; 8] {
    let b = bits.to_le_bytes();
    [b[0], b[1], 0, 0, 0, 0, 0, 0]
}

fn widen(b: &[u8; 4]) -> [u8; 8] {
    [b[0], b[1], b[2], b[3], 0, 0, 0, 0]
}
