//! Bad input gets a clear `Err` that names what, where and why, and loses nothing.

use kiln_core::{Args, Device, Error, HostArgs, LaunchConfig, Program, Result};
use kiln_cpu::Cpu;

fn device() -> Device<Cpu> {
    Device::<Cpu>::open(0).unwrap()
}

#[test]
fn copy_between_buffers_of_different_lengths_is_refused_and_touches_nothing() {
    let dev = device();
    let src = dev.upload(&[1u32, 2, 3, 4, 5]).unwrap();
    let mut dst = dev.upload(&[7u32; 4]).unwrap();
    let err = dev.stream().copy(&src, &mut dst).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 4, actual: 5, .. }), "{err:?}");
    assert!(err.to_string().contains("Stream::copy"), "{err}");
    assert_eq!(dst.to_vec().unwrap(), vec![7; 4]);
    // The same through a buffer's own method and through views.
    assert!(dst.copy_from(&src).is_err());
    let err = dev.stream().copy(&src.slice(0..2).unwrap(), &mut dst.slice_mut(0..3).unwrap()).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 3, actual: 2, .. }), "{err:?}");
    assert_eq!(dst.to_vec().unwrap(), vec![7; 4]);
}

#[test]
fn host_slices_of_the_wrong_length_are_refused() {
    let dev = device();
    let mut buf = dev.upload(&[1.5f32, 2.5, 3.5]).unwrap();
    let err = buf.copy_from_host(&[9.0, 9.0]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 3, actual: 2, .. }), "{err:?}");
    assert!(err.to_string().contains("copy_to_device"), "{err}");
    assert_eq!(buf.to_vec().unwrap(), vec![1.5, 2.5, 3.5]);

    let mut too_long = [0.0f32; 4];
    let err = buf.copy_to_host(&mut too_long).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 4, actual: 3, .. }), "{err:?}");
    assert_eq!(too_long, [0.0; 4]);
}

#[test]
fn ranges_outside_a_buffer_are_refused() {
    let dev = device();
    let buf = dev.upload(&[1u8, 2, 3]).unwrap();
    let Err(err) = buf.slice(2..5) else { panic!("a range past the end was accepted") };
    assert_eq!(err, Error::OutOfRange { what: "BufferView::slice".into(), start: 2, end: 5, len: 3 });
    assert!(err.to_string().contains("range 2..5 is outside a buffer of 3 elements"), "{err}");
}

/// A kernel that writes its argument's index into every element of output 0.
fn write_index(args: &mut HostArgs<'_>) -> Result<()> {
    for (i, v) in args.output::<u32>(0)?.iter_mut().enumerate() {
        *v = i as u32;
    }
    Ok(())
}

#[test]
fn a_block_larger_than_the_device_allows_is_refused_naming_the_limit() {
    let dev = device();
    let limit = dev.info().limits.max_threads_per_block;
    let kernel = dev.kernel(&Program::new("write_index").host(write_index)).unwrap();
    let mut out = dev.upload(&[5u32; 8]).unwrap();
    let side = (limit as f64).sqrt() as u32 + 1; // side * side > limit
    let config = LaunchConfig::new(1, (side, side));
    // SAFETY: `write_index` writes only its one output argument.
    let err = unsafe { dev.stream().launch(&kernel, config, Args::new().arg(&mut out)) }.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::InvalidLaunch { .. }), "{err:?}");
    assert!(text.contains("write_index"), "{text}");
    assert!(text.contains(&format!("{} threads; this device allows {limit}", side * side)), "{text}");
    // One axis past its own limit is named too.
    let max_z = dev.info().limits.max_block[2];
    let config = LaunchConfig::new(1, (1, 1, max_z + 1));
    // SAFETY: as above.
    let err = unsafe { dev.stream().launch(&kernel, config, Args::new().arg(&mut out)) }.unwrap_err();
    assert!(err.to_string().contains(&format!("along z; this device allows {max_z}")), "{err}");
    assert_eq!(out.to_vec().unwrap(), vec![5; 8], "a refused launch must not run");
}

#[test]
fn zero_size_launches_are_a_no_op() {
    let dev = device();
    let kernel = dev.kernel(&Program::new("write_index").host(write_index)).unwrap();
    let mut out = dev.upload(&[5u32; 4]).unwrap();
    for config in [LaunchConfig::new(0, 256), LaunchConfig::new(4, 0), LaunchConfig::for_elements(0, 256)] {
        // SAFETY: `write_index` writes only its one output argument.
        unsafe { dev.stream().launch(&kernel, config, Args::new().arg(&mut out)) }.unwrap();
    }
    assert_eq!(out.to_vec().unwrap(), vec![5; 4], "an empty launch must not run the kernel");
    // Zero-length buffers and copies are fine too.
    let empty = dev.upload::<f64>(&[]).unwrap();
    let mut also_empty = dev.alloc::<f64>(0).unwrap();
    dev.stream().copy(&empty, &mut also_empty).unwrap();
    assert_eq!(also_empty.to_vec().unwrap(), Vec::<f64>::new());
}

#[test]
fn a_device_that_is_not_there_is_refused() {
    let err = Device::<Cpu>::open(1).unwrap_err();
    assert_eq!(err, Error::DeviceNotFound { backend: kiln_core::BackendKind::Cpu, ordinal: 1, count: 1 });
    assert_eq!(err.to_string(), "cpu device 1 not found: 1 device(s) present");
}

#[test]
fn a_program_without_a_cpu_source_is_unsupported() {
    let err =
        device().kernel(&Program::new("gpu_only").cuda("extern \"C\" __global__ void gpu_only() {}")).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err:?}");
    assert!(err.to_string().contains("`gpu_only`"), "{err}");
}

#[test]
fn a_kernel_given_the_wrong_argument_type_gets_an_error_not_a_panic() {
    let dev = device();
    let kernel = dev.kernel(&Program::new("write_index").host(write_index)).unwrap();
    let mut floats = dev.upload(&[0.5f32; 4]).unwrap();
    // SAFETY: the kernel checks its argument types and writes nothing here.
    let err =
        unsafe { dev.stream().launch(&kernel, LaunchConfig::new(1, 4), Args::new().arg(&mut floats)) }.unwrap_err();
    assert!(err.to_string().contains("expected a u32 buffer, got f32"), "{err}");
    assert_eq!(floats.to_vec().unwrap(), vec![0.5; 4]);
}
