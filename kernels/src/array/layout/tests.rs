//! Layout arithmetic at the edges of `isize`: steps and shapes whose
//! products overflow are views of one element or `Err`s naming what
//! overflowed, never a wrapped stride or a panic.

use kiln_core::{Device, Stream};
use kiln_cpu::Cpu;
use ndarray::s;

use super::super::Array;
use super::Layout;

fn stream() -> Stream<Cpu> {
    Device::<Cpu>::open(0).expect("the CPU backend opens").stream()
}

/// `stride * step` overflowed here: a step past the axis leaves one element.
#[test]
fn a_step_past_the_axis_is_one_element_not_an_overflow() {
    let s = stream();
    let a = Array::from_vec(&s, &[4, 3], &(0..12).collect::<Vec<i32>>()).unwrap();
    let first = a.slice(s![..;isize::MAX, ..]).unwrap();
    assert_eq!(first.shape(), [1, 3]);
    assert_eq!(first.to_vec().unwrap(), [0, 1, 2]);
    let last = a.slice(s![..;isize::MIN, ..]).unwrap();
    assert_eq!(last.to_vec().unwrap(), [9, 10, 11]);
    let col = a.slice(s![1.., 1..;-isize::MAX]).unwrap();
    assert_eq!(col.shape(), [3, 1]);
    assert_eq!(col.to_vec().unwrap(), [5, 8, 11]);
    // Taken twice: the stride of a one-element axis times a huge step.
    let again = first.slice(s![..;isize::MAX, ..;isize::MAX]).unwrap();
    assert_eq!(again.to_vec().unwrap(), [0]);
}

/// Shapes whose extents other than 0 multiply past `isize::MAX`: their
/// row-major strides saturated, and an index into them overflowed.
#[test]
fn shapes_past_isize_are_refused_where_they_are_made() {
    let s = stream();
    let huge = [0, 1usize << 62, 4];
    for e in [
        Array::<Cpu, i32>::from_vec(&s, &huge, &[]).unwrap_err(),
        Array::<Cpu, i32>::zeros(&s, &huge).unwrap_err(),
        Array::<Cpu, i32>::zeros(&s, &[0, 2]).unwrap().reshape(&huge).unwrap_err(),
        Array::<Cpu, i32>::zeros(&s, &[0, 1]).unwrap().broadcast_to(&huge).unwrap_err(),
        Layout::standard(&[1 << 40, 1 << 40]).unwrap_err(),
        Layout::standard(&[0, usize::MAX]).unwrap_err(),
    ] {
        let text = e.to_string();
        assert!(text.contains("isize::MAX") && text.contains("shape ["), "{text}");
    }
    // A product of two empty matrices whose extents multiply past it.
    let tall = Array::<Cpu, f32>::zeros(&s, &[1 << 40, 0]).unwrap();
    let e = tall.matmul(&tall.t()).unwrap_err().to_string();
    assert!(e.contains("Array::matmul") && e.contains("isize::MAX"), "{e}");
    // The largest shape that fits is taken, its strides exact.
    let edge = Layout::standard(&[0, 1 << 60, 4]).unwrap();
    assert_eq!(edge.strides(), [1 << 62, 4, 1]);
    assert_eq!(edge.span().unwrap(), (0, 0));
}

#[test]
fn spans_and_slices_of_wide_layouts_are_exact() {
    let l = Layout::standard(&[1 << 31, 1 << 31]).unwrap();
    assert_eq!(l.span().unwrap(), (0, 1 << 62));
    let corner = l.slice(s![-1.., -1..;-1].as_ref()).unwrap();
    assert_eq!(corner.offset(), (1 << 62) - 1);
    assert_eq!(corner.span().unwrap(), ((1 << 62) - 1, 1 << 62));
    let rev = l.slice(s![..;-1, ..;-1].as_ref()).unwrap();
    assert_eq!(rev.strides(), [-(1 << 31), -1]);
    assert_eq!(rev.span().unwrap(), (0, 1 << 62));
    let e = l.slice(s![1isize << 40, ..].as_ref()).unwrap_err().to_string();
    assert!(e.contains("out of range") && e.contains("axis 0"), "{e}");
}
