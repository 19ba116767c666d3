//! The backend on machines with and without a driver.

use kiln_core::{Backend, Device, Error};
use kiln_cuda::Cuda;

#[test]
fn devices_and_open_agree_on_the_driver() {
    match Cuda::devices() {
        Err(Error::BackendUnavailable { reason, .. }) => {
            // No driver (CI, development machines): the reason names libcuda,
            // and opening gives the same answer instead of a panic.
            assert!(reason.contains("libcuda") || reason.contains("sees no device"), "unexpected reason: {reason}");
            match Device::<Cuda>::open(0) {
                Err(Error::BackendUnavailable { reason: r2, .. }) => assert_eq!(r2, reason),
                other => panic!("open(0) without a driver gave {other:?}"),
            }
            let shown = Device::<Cuda>::open(0).unwrap_err().to_string();
            assert!(shown.starts_with("cuda backend unavailable: "), "{shown}");
        }
        Err(e) => panic!("listing CUDA devices failed: {e}"),
        Ok(devices) => {
            assert!(!devices.is_empty());
            let d = &devices[0];
            assert!(!d.name.is_empty());
            let (major, _) = d.compute_capability.expect("a compute capability");
            assert!(major >= 3);
            assert!(d.compute_units > 0 && d.memory_bytes > (1 << 30));
            assert_eq!(d.limits.warp_size, 32);
            assert!(d.limits.max_threads_per_block >= 1024);
            assert!(d.limits.max_shared_mem_per_block >= 48 * 1024);
            assert!(d.driver.starts_with("CUDA driver "), "{}", d.driver);
            let past = devices.len();
            match Device::<Cuda>::open(past) {
                Err(Error::DeviceNotFound { ordinal, count, .. }) => assert_eq!((ordinal, count), (past, past)),
                other => panic!("open({past}) gave {other:?}"),
            }
            let dev = Device::<Cuda>::open(0).expect("device 0 opens");
            assert_eq!(dev.info(), d);
            println!("{}", dev.info());
        }
    }
}
