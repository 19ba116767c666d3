//! Program equality, the kernel cache's key: programs that differ in any
//! part are different keys, even where their 64-bit hashes collide.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::{HostClosure, Program};
use crate::testing;
use crate::{HostArgs, Language, Result};

fn double(_: &mut HostArgs<'_>) -> Result<()> {
    Ok(())
}

/// Unlike `double`'s body, so the two cannot be merged into one address.
fn triple(_: &mut HostArgs<'_>) -> Result<()> {
    Err(crate::Error::invalid("triple", "never run"))
}

const WGSL: &str = "@compute @workgroup_size(1) fn k() {}";

fn base() -> Program {
    Program::new("k").cuda("extern \"C\" __global__ void k() {}").wgsl(WGSL)
}

/// Programs that differ in one part each, all from [`base`].
fn variants() -> Vec<(&'static str, Program)> {
    vec![
        ("the base", base()),
        ("another name", Program::new("k2").cuda(base().cuda_source().unwrap_or_default()).wgsl(WGSL)),
        ("other CUDA text", base().cuda("extern \"C\" __global__ void k() { }")),
        ("no WGSL", Program::new("k").cuda(base().cuda_source().unwrap_or_default())),
        ("WGSL as CUDA too", base().source(Language::Cuda, WGSL)),
        ("a host fn", base().host(double)),
        ("another host fn", base().host(triple)),
        ("a closure", base().host_closure(HostClosure::new("double", |_| Ok(())))),
        ("a closure of another key", base().host_closure(HostClosure::new("triple", |_| Ok(())))),
        ("a define", base().define("N", 1)),
        ("another define value", base().define("N", 2)),
        ("a flag", base().flag("-use_fast_math")),
        ("an include path", base().include_path("/opt/include")),
        // The parts of the old hash's input shifted across a boundary.
        ("name `ab`, text `c`", Program::new("ab").cuda("c")),
        ("name `a`, text `bc`", Program::new("a").cuda("bc")),
        ("define `A`=`B C`", Program::new("a").define("A", "B C")),
        ("define `A B`=`C`", Program::new("a").define("A B", "C")),
    ]
}

#[test]
fn programs_differing_in_any_part_are_unequal_and_rebuilt_ones_equal() {
    let (a, b) = (variants(), variants());
    for (i, (what, p)) in a.iter().enumerate() {
        for (j, (other, q)) in b.iter().enumerate() {
            // `b` is built afresh: equal programs there are equal in content, not copies.
            assert_eq!(p == q, i == j, "{what} against {other}");
        }
        assert!(p == &p.clone(), "{what} equals its clone");
        // A clone changed afterwards is another program.
        assert!(p != &p.clone().flag("-G"), "{what} and its clone with a flag more");
        assert!(p != &p.clone().define("M", 0), "{what} and its clone with a define more");
    }
}

#[test]
// A program's interior mutability is its fingerprint's `OnceLock`, a cache of
// a hash of contents that never change: the key's hash is stable.
#[allow(clippy::mutable_key_type)]
fn programs_whose_hashes_collide_are_different_keys() {
    let mut map = HashMap::new();
    for (k, (what, p)) in variants().into_iter().enumerate() {
        assert!(map.insert(p.with_fingerprint(7), k).is_none(), "{what} took another program's entry");
    }
    assert_eq!(map.len(), variants().len());
    for (k, (what, p)) in variants().into_iter().enumerate() {
        assert_eq!(map.get(&p.with_fingerprint(7)), Some(&k), "{what} finds its own entry");
    }
}

#[test]
fn the_device_compiles_each_program_once_though_hashes_collide() {
    let (dev, counters) = testing::device();
    let programs: Vec<Program> = variants().into_iter().map(|(_, p)| p.with_fingerprint(0)).collect();
    for p in &programs {
        dev.kernel(p).unwrap();
    }
    assert_eq!(counters.compiles.load(Ordering::SeqCst), programs.len(), "one compile per different program");
    for (what, p) in variants() {
        // Built afresh, so found by comparing contents.
        dev.kernel(&p.with_fingerprint(0)).unwrap();
        assert_eq!(counters.compiles.load(Ordering::SeqCst), programs.len(), "{what} is found again");
    }
}
