//! Where a vendor FFT call's two sides lie in their buffers, checked before
//! cuFFT is handed their addresses: each inside its buffer, and the output
//! apart from the input or exactly it (an in-place complex transform).

use kiln_core::{Error, FftKind, FftLayout, Result};

/// One side of a call: its first byte in its buffer, and the buffer's length in bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Side {
    pub(super) offset: usize,
    pub(super) len: usize,
}

/// `Err(InvalidArgument)` naming `what` unless the input and output
/// (`sides`, in that order; `same` when they share a buffer) each hold the
/// bytes `layout` spans on them from their offset, and either lie apart or
/// are one range in place: a complex-to-complex layout with equal sides, at
/// one offset.
pub(super) fn check(layout: &FftLayout, what: &str, sides: [Side; 2], same: bool) -> Result<()> {
    let (tin, tout) = layout.dtypes();
    let (sin, sout) = layout.spans().ok_or_else(|| Error::invalid(what, "the layout overflows"))?;
    let mut ranges = [(0, 0); 2];
    for (range, (name, side, span, dtype)) in
        ranges.iter_mut().zip([("input", sides[0], sin, tin), ("output", sides[1], sout, tout)])
    {
        let end = span.checked_mul(dtype.size()).and_then(|bytes| bytes.checked_add(side.offset));
        match end {
            Some(end) if end <= side.len => *range = (side.offset, end),
            _ => {
                return Err(Error::invalid(
                    what,
                    format!(
                        "the {name} spans {span} {dtype} from byte {} of a buffer of {} bytes",
                        side.offset, side.len
                    ),
                ))
            }
        }
    }
    let [(i0, i1), (o0, o1)] = ranges;
    let in_place = layout.kind == FftKind::C2C && layout.input == layout.output && i0 == o0;
    if same && i0 < o1 && o0 < i1 && !in_place {
        return Err(Error::invalid(what, "the output overlaps the input without being it (in place)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kiln_core::{DType, FftSide};

    use super::*;

    /// `batch` transforms of `n` elements, packed: `n * 8` bytes each in c64.
    fn packed(kind: FftKind, n: usize, batch: usize) -> FftLayout {
        let (din, dout) = match kind {
            FftKind::C2C => (n, n),
            FftKind::R2C => (n, n / 2 + 1),
            FftKind::C2R => (n / 2 + 1, n),
        };
        let side = |d: usize| FftSide { stride: 1, dist: d, embed: [d, 1, 1] };
        FftLayout { kind, precision: DType::F32, rank: 1, dims: [n, 1, 1], batch, input: side(din), output: side(dout) }
    }

    fn at(offset: usize, len: usize) -> Side {
        Side { offset, len }
    }

    #[test]
    fn each_side_must_hold_its_span_from_its_offset() {
        // 2 transforms of 8 c64: 128 bytes a side.
        let c2c = packed(FftKind::C2C, 8, 2);
        assert!(check(&c2c, "t", [at(0, 128), at(64, 192)], false).is_ok());
        let e = check(&c2c, "t", [at(8, 128), at(0, 128)], false).unwrap_err();
        assert!(e.to_string().contains("the input spans 16 c64 from byte 8 of a buffer of 128 bytes"), "{e}");
        let e = check(&c2c, "t", [at(0, 128), at(0, 127)], false).unwrap_err();
        assert!(e.to_string().contains("the output spans"), "{e}");
        // A real side counts reals: 8 f32 in, 5 c64 out.
        let r2c = packed(FftKind::R2C, 8, 1);
        assert!(check(&r2c, "t", [at(0, 32), at(0, 40)], false).is_ok());
        assert!(check(&r2c, "t", [at(0, 32), at(0, 39)], false).is_err());
        let e = check(&r2c, "t", [at(usize::MAX - 4, usize::MAX), at(0, 40)], false).unwrap_err();
        assert!(e.to_string().contains("input"), "{e}");
    }

    #[test]
    fn sides_in_one_buffer_are_apart_or_one_complex_range_in_place() {
        let c2c = packed(FftKind::C2C, 8, 1);
        // Apart: 64 bytes each, back to back.
        assert!(check(&c2c, "t", [at(0, 256), at(64, 256)], true).is_ok());
        // In place: one range, one layout.
        assert!(check(&c2c, "t", [at(64, 256), at(64, 256)], true).is_ok());
        // Overlapping by one element.
        let e = check(&c2c, "t", [at(0, 256), at(56, 256)], true).unwrap_err();
        assert!(e.to_string().contains("overlaps"), "{e}");
        // The same offsets in two buffers never overlap.
        assert!(check(&c2c, "t", [at(0, 256), at(8, 256)], false).is_ok());
        // A real transform is never in place here, nor a complex one whose sides differ.
        let r2c = packed(FftKind::R2C, 8, 1);
        assert!(check(&r2c, "t", [at(0, 64), at(0, 64)], true).is_err());
        let mut strided = c2c;
        strided.output.stride = 2;
        strided.output.embed[0] = 16;
        assert!(check(&strided, "t", [at(0, 256), at(0, 256)], true).is_err());
    }
}
