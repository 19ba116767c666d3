//! What the run-time tier's tests share: the devices they run on.
// Each test crate uses a part of this module.
#![allow(dead_code)]

use kiln::{Device, Stream};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Device 0 of each backend this build has, where it opens here.
pub fn devices() -> Vec<Device> {
    kiln::registry::compiled().into_iter().filter_map(|kind| Device::open(kind, 0).ok()).collect()
}

/// `check` on each of [`devices`], given the device, its stream, and a
/// generator seeded with `seed` afresh for each device.
pub fn on_each_device(seed: u64, mut check: impl FnMut(&Device, &Stream, &mut ChaCha8Rng)) {
    for dev in devices() {
        check(&dev, &dev.stream(), &mut ChaCha8Rng::seed_from_u64(seed));
    }
}
