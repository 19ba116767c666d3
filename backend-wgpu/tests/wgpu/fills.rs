//! Fills with patterns of 1, 2, 4 and 8 bytes on ranges at any offset.

use kiln_core::{f16, Buffer, Element};
use kiln_wgpu::Wgpu;

use crate::common::{device, POISON};

/// Fill `[offset, offset + len)` of a poisoned buffer of `n` elements with
/// `value`, and compare everything with a host model.
#[track_caller]
fn check<T: Element>(dev: &kiln_core::Device<Wgpu>, n: usize, offset: usize, len: usize, value: T, poison: T) {
    let mut buf: Buffer<Wgpu, T> = dev.upload(&vec![poison; n]).unwrap();
    buf.slice_mut(offset..offset + len).unwrap().fill(value).unwrap();
    let mut want = vec![poison; n];
    want[offset..offset + len].fill(value);
    let got = buf.to_vec().unwrap();
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| bytemuck::bytes_of(a) != bytemuck::bytes_of(b)) {
        panic!("fill of {len} {} at {offset} in {n}: element {i} is {:?}, want {:?}", T::DTYPE, got[i], want[i]);
    }
}

#[test]
fn u8_fills_at_every_offset_and_length() {
    let Some(dev) = device() else { return };
    for offset in 0..9 {
        for len in 0..14 {
            check(&dev, 32, offset, len, 0x3cu8, POISON);
            check(&dev, 32, offset, len, 0u8, POISON);
        }
    }
}

#[test]
fn two_byte_fills_at_odd_elements() {
    let Some(dev) = device() else { return };
    let v = f16::from_f32(-2.5);
    let p = f16::from_bits(0xa5a5);
    for offset in 0..5 {
        for len in [0, 1, 2, 3, 5, 8, 257] {
            check(&dev, 300, offset, len, v, p);
            check(&dev, 300, offset, len, f16::from_bits(0), p);
        }
    }
}

#[test]
fn four_and_eight_byte_fills() {
    let Some(dev) = device() else { return };
    for offset in [0usize, 1, 3, 64, 65] {
        for len in [0usize, 1, 2, 7, 1000] {
            check(&dev, 1100, offset, len, 0xdead_beefu32, 0xa5a5_a5a5);
            check(&dev, 1100, offset, len, 0u32, 0xa5a5_a5a5);
            check(&dev, 1100, offset, len, -1.25e-300f64, 7.0);
            check(&dev, 1100, offset, len, 0x0102_0304_0506_0708u64, u64::MAX);
        }
    }
}

/// Larger than one dispatch of the fill kernel, with ragged ends.
#[test]
fn long_fill_spans_several_dispatches() {
    let Some(dev) = device() else { return };
    let n = (40 << 20) + 5;
    let mut buf = dev.alloc::<u8>(n).unwrap();
    buf.fill(POISON).unwrap();
    buf.slice_mut(3..n - 2).unwrap().fill(0x11).unwrap();
    let got = buf.to_vec().unwrap();
    assert_eq!(&got[..3], &[POISON; 3]);
    assert!(got[3..n - 2].iter().all(|&b| b == 0x11), "inside the range");
    assert_eq!(&got[n - 2..], &[POISON; 2]);
}
