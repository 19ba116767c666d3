//! A failed in-place operator: the error stays with the array it failed
//! on, and the old values stay readable.

use kiln_core::{Device, Stream};
use kiln_cpu::Cpu;

use super::super::Array;

fn stream() -> Stream<Cpu> {
    Device::<Cpu>::open(0).expect("the CPU backend opens").stream()
}

#[test]
fn a_failed_operator_keeps_the_old_values_readable_and_its_error_to_itself() {
    let s = stream();
    let old = [1.0f32, 2.0, 3.0, 4.0];
    let mut c = Array::from_vec(&s, &[2, 2], &old).unwrap();
    let b = Array::from_vec(&s, &[3], &[10.0f32, 20.0, 30.0]).unwrap();
    let before = c.clone();

    c += &b;
    let e = c.check().unwrap_err().to_string();
    assert!(e.contains("[2, 2]") && e.contains("[3]"), "the error names both shapes: {e}");
    assert_eq!(c.check().unwrap_err().to_string(), e, "reported until taken");
    assert_eq!(c.to_vec().unwrap(), old, "c reads its old values");
    assert_eq!(c.to_ndarray().unwrap().as_slice().unwrap(), old);
    assert_eq!(c.t().to_vec().unwrap(), [1.0, 3.0, 2.0, 4.0], "a view of c reads them too");
    assert_eq!((&c * 2.0).eval().unwrap().to_vec().unwrap(), [2.0, 4.0, 6.0, 8.0], "so does an expression");

    let after = c.clone();
    for (name, other) in [("made before", &before), ("made after", &after)] {
        assert!(other.check().is_ok(), "the clone {name} holds no error");
        assert_eq!(other.to_vec().unwrap(), old, "the clone {name}");
    }
    let mut after = after;
    after += 1.0;
    assert_eq!(after.to_vec().unwrap(), [2.0, 3.0, 4.0, 5.0], "the clone made after updates");
    assert_eq!(c.to_vec().unwrap(), old, "copy-on-write: c is untouched by its clone's update");
}

#[test]
fn operators_after_a_failure_wait_until_the_error_is_taken() {
    let s = stream();
    let mut c = Array::from_vec(&s, &[3], &[1i32, 2, 3]).unwrap();
    let wide = Array::from_vec(&s, &[2], &[1i32, 2]).unwrap();
    c -= &wide;
    c *= 10; // skipped: the values stay those from before the first failure
    c += &Array::from_vec(&s, &[4], &[0i32; 4]).unwrap(); // a second failure: the first error is kept
    let e = c.check().unwrap_err().to_string();
    assert!(e.contains("[2]") && !e.contains("[4]"), "the first error: {e}");
    assert_eq!(c.to_vec().unwrap(), [1, 2, 3]);
    let refused = c.assign(0).unwrap_err().to_string();
    assert_eq!(refused, e, "assign returns the held error");
    assert_eq!(c.to_vec().unwrap(), [1, 2, 3]);

    let taken = c.take_error().expect("the error is there to take");
    assert_eq!(taken.to_string(), e);
    assert!(c.check().is_ok() && c.take_error().is_none(), "taking clears it");
    c *= 10;
    assert_eq!(c.to_vec().unwrap(), [10, 20, 30], "operators run again");
}
