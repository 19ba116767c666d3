//! Buffers kept for reuse: a dropped buffer's memory, handed to a new one
//! on another stream, is written only after the work recorded before the
//! drop has read it.

use kiln_core::Priority;

use crate::common::{bytes, device, rng};

#[test]
fn a_reused_buffer_is_written_after_earlier_work_reads_it() {
    let Some(dev) = device() else { return };
    let mut r = rng(41);
    let (s1, s2) = (dev.stream(), dev.create_stream(Priority::Normal).unwrap());
    for n in [4usize, 1000, 1 << 20] {
        let first = bytes(&mut r, n);
        let second = bytes(&mut r, n);
        let a = s1.upload(&first).unwrap();
        let mut b = s1.alloc::<u8>(n).unwrap();
        b.copy_from(&a).unwrap(); // recorded on s1, not yet run
        drop(a);
        // Same size: `a`'s memory, written on another stream.
        let c = s2.upload(&second).unwrap();
        assert_eq!(b.to_vec().unwrap(), first, "the copy read the old contents ({n} bytes)");
        assert_eq!(c.to_vec().unwrap(), second, "the new owner's contents ({n} bytes)");
    }
}

#[test]
fn trim_lets_kept_buffers_go_and_allocation_goes_on() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    for _ in 0..3 {
        drop(s.alloc::<f32>(1 << 18).unwrap());
    }
    dev.trim_memory(0).unwrap();
    let x = s.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(x.to_vec().unwrap(), [1.0, 2.0, 3.0]);
}
