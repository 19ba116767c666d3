//! The on-disk module cache: hits in a new process, damaged entries rebuilt.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kiln_core::{Device, Error, Program, RawDevice};
use kiln_cuda::{CacheStatus, Cuda};

use super::common::*;

const CHILD_VAR: &str = "KILN_TEST_CACHE_CHILD";

/// A program no other run has compiled: the nonce is in a comment.
fn unique_program(nonce: &str) -> Program {
    Program::new("saxpy").cuda(format!("// cache test {nonce}\n{SAXPY}"))
}

fn fresh_dir(tag: &str) -> (PathBuf, String) {
    let nonce = format!("{tag}-{}-{:?}", std::process::id(), Instant::now());
    let dir = std::env::temp_dir().join(format!("kiln-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    (dir, nonce)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

/// A fresh cache directory for `dev` (named after `tag`) holding one
/// program, compiled once: the directory, the program and its entry.
fn one_entry(dev: &Device<Cuda>, tag: &str) -> (PathBuf, Program, PathBuf) {
    let (dir, nonce) = fresh_dir(tag);
    dev.raw().set_disk_cache_dir(Some(dir.clone()));
    let program = unique_program(&nonce);
    assert_eq!(dev.raw().compile(&program).unwrap().cache_status(), &CacheStatus::Stored);
    let files = entries(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    (dir, program, files[0].clone())
}

/// Check that a kernel from the cache computes SAXPY right.
fn check_saxpy(dev: &Device<Cuda>, k: &kiln_core::Kernel<Cuda>) {
    let n = 4097;
    let (xs, ys) = (random_f32(31, n), random_f32(32, n));
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.upload(&ys).unwrap();
    saxpy(dev, k, &x, &mut y, 0.5).unwrap();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 0.5f32.mul_add(*x, *y)).collect();
    assert_eq!(y.to_vec().unwrap(), want);
}

#[test]
fn a_new_process_loads_from_the_disk_cache() {
    let Some(dev) = gpu() else { return };
    let (dir, nonce) = fresh_dir("process");
    dev.raw().set_disk_cache_dir(Some(dir.clone()));
    let t = Instant::now();
    let k = dev.kernel(&unique_program(&nonce)).unwrap();
    println!("first compile: {:?}", t.elapsed());
    assert_eq!(k.raw().cache_status(), &CacheStatus::Stored);
    assert_eq!(entries(&dir).len(), 1);
    let (ok, out) =
        run_child("cuda::disk_cache::child_loads_from_the_cache", CHILD_VAR, &format!("{}|{nonce}", dir.display()));
    assert!(ok && out.contains("CACHE HIT"), "child process output:\n{out}");
    println!("{}", out.lines().find(|l| l.contains("CACHE HIT")).unwrap_or(""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs only as the child of the test above.
#[test]
fn child_loads_from_the_cache() {
    let Some(arg) = is_child(CHILD_VAR) else { return };
    let (dir, nonce) = arg.split_once('|').expect("dir|nonce");
    let dev = Device::<Cuda>::open(0).unwrap();
    dev.raw().set_disk_cache_dir(Some(PathBuf::from(dir)));
    let t = Instant::now();
    let k = dev.kernel(&unique_program(nonce)).unwrap();
    let took = t.elapsed();
    assert_eq!(k.raw().cache_status(), &CacheStatus::Hit);
    check_saxpy(&dev, &k);
    println!("CACHE HIT in a new process: {took:?}");
}

#[test]
fn a_damaged_entry_is_detected_and_rebuilt() {
    let Some(dev) = gpu() else { return };
    let (dir, program, stored) = one_entry(&dev, "damaged");
    let entry = &stored;
    for (what, damage) in [
        ("garbage", b"this is not a module".to_vec()),
        ("truncated", std::fs::read(entry).unwrap()[..80].to_vec()),
        ("flipped", {
            let mut d = std::fs::read(entry).unwrap();
            let last = d.len() - 1;
            d[last] ^= 0x5a;
            d
        }),
    ] {
        std::fs::write(entry, &damage).unwrap();
        let k = dev.raw().compile(&program).unwrap();
        match k.cache_status() {
            CacheStatus::Rebuilt { reason } => println!("{what}: rebuilt ({reason})"),
            other => panic!("{what} entry gave {other:?}"),
        }
        assert_eq!(dev.raw().compile(&program).unwrap().cache_status(), &CacheStatus::Hit, "{what}");
    }
    let k = dev.kernel(&program).unwrap();
    check_saxpy(&dev, &k);
    assert_eq!(entries(&dir).len(), 1, "no temporary files left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_the_cache_off_every_compile_runs_nvrtc() {
    let Some(dev) = gpu() else { return };
    dev.raw().set_disk_cache_dir(None);
    let k = dev.raw().compile(&unique_program("off")).unwrap();
    assert_eq!(k.cache_status(), &CacheStatus::Disabled);
}

/// The last `--gpu-architecture` wins in NVRTC: a program that names another
/// architecture than the device's compiles to a CUBIN the driver refuses
/// (`CUDA_ERROR_NO_BINARY_FOR_GPU`). That is an error, and nothing is cached.
#[test]
fn a_module_the_driver_refuses_is_not_cached() {
    let Some(dev) = gpu() else { return };
    let (dir, nonce) = fresh_dir("refused");
    dev.raw().set_disk_cache_dir(Some(dir.clone()));
    let (major, _) = dev.info().compute_capability.unwrap();
    let other = if major == 10 { "sm_90" } else { "sm_100" };
    let program = unique_program(&nonce).flag(format!("--gpu-architecture={other}"));
    match dev.raw().compile(&program) {
        Err(Error::Compile { log, .. }) => assert!(log.contains("refused"), "{log}"),
        Err(e) => panic!("expected the driver to refuse the {other} module, got {e}"),
        Ok(_) => panic!("an {other} module loaded on a device of compute capability {major}.x"),
    }
    assert_eq!(entries(&dir), Vec::<PathBuf>::new(), "the refused module was cached");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry whose header and checksum are right but whose image the driver
/// refuses (as after a driver downgrade) is deleted, compiled afresh and replaced.
#[test]
fn a_cached_image_the_driver_refuses_is_rebuilt() {
    use sha2::{Digest, Sha256};
    let Some(dev) = gpu() else { return };
    let (dir, program, stored) = one_entry(&dev, "rejected");
    // The entry's layout (cache.rs): magic, format 1, kind 1 (CUBIN), length, SHA-256, image.
    let image = b"\x7fELF but not a module the driver can load".to_vec();
    let mut entry = b"KILNNVRT".to_vec();
    entry.extend(1u32.to_le_bytes());
    entry.extend(1u32.to_le_bytes());
    entry.extend((image.len() as u64).to_le_bytes());
    entry.extend(Sha256::digest(&image));
    entry.extend(&image);
    std::fs::write(&stored, &entry).unwrap();
    let k = dev.raw().compile(&program).unwrap();
    match k.cache_status() {
        CacheStatus::Rebuilt { reason } => assert!(reason.contains("refused"), "{reason}"),
        other => panic!("a refused entry gave {other:?}"),
    }
    assert_eq!(dev.raw().compile(&program).unwrap().cache_status(), &CacheStatus::Hit);
    assert_eq!(entries(&dir), [stored]);
    let _ = std::fs::remove_dir_all(&dir);
}
