//! Opening the device once per test, or skipping with a printed note;
//! seeded inputs, byte comparisons, and tests rerun in a child process.

use kiln_core::{BackendKind, Device, Error};
use kiln_wgpu::Wgpu;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The device under test, or `None` (after checking the error and printing
/// why) when the machine has no Vulkan adapter.
pub fn device() -> Option<Device<Wgpu>> {
    match Device::<Wgpu>::open(0) {
        Ok(d) => Some(d),
        Err(Error::BackendUnavailable { backend: BackendKind::Wgpu, reason }) => {
            assert!(reason.contains("Vulkan"), "the reason should name Vulkan: {reason}");
            eprintln!("skipped: {reason}");
            None
        }
        Err(e) => panic!("opening the wgpu device failed with an unexpected error: {e}"),
    }
}

/// Device 0 once with nothing hidden and once without `hidden`, or `None`
/// (after printing why) when the machine has no Vulkan adapter.
pub fn with_and_without(hidden: kiln_wgpu::Optional) -> Option<Vec<Device<Wgpu>>> {
    let mut out = Vec::new();
    for hide in [&[][..], &[hidden][..]] {
        match Wgpu::open_without(0, hide) {
            Ok(d) => out.push(d),
            Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
                eprintln!("skipping: {e}");
                return None;
            }
            Err(e) => panic!("opening wgpu device 0 without {hide:?} failed: {e}"),
        }
    }
    Some(out)
}

/// A seeded generator; the seed is printed so a failure can be replayed.
pub fn rng(seed: u64) -> ChaCha8Rng {
    eprintln!("seed {seed}");
    ChaCha8Rng::seed_from_u64(seed)
}

/// `n` random bytes.
pub fn bytes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.random()).collect()
}

/// The byte every poisoned buffer holds before a test writes it.
pub const POISON: u8 = 0xa5;

/// Assert two byte slices are equal, naming the first differing index.
#[track_caller]
pub fn assert_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        let lo = i.saturating_sub(4);
        let hi = (i + 5).min(got.len());
        panic!(
            "{what}: first difference at byte {i}: got {:?}, want {:?} (bytes {lo}..{hi})",
            &got[lo..hi],
            &want[lo..hi]
        );
    }
}

/// Run the tests named `tests` of this test binary again in a child
/// process whose command `setup` adjusts (its environment); whether they
/// passed, and what they printed.
pub fn child(tests: &[&str], setup: impl FnOnce(&mut std::process::Command)) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.arg("--exact").args(tests).arg("--nocapture");
    setup(&mut command);
    let out = command.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout))
}
