//! The sort's three-phase programs (kernel.cu, kernel.wgsl, cpu.rs); the
//! flags their passes take are in `types.rs`.

use std::sync::Arc;

use kiln_core::Program;

use super::{SortKey, SortOrder, cpu};
use crate::launch::{WGSL_ABI, cuda_source, program};

/// kiln_map and kiln_unmap, which both CUDA sorts start with.
pub(super) const KEYS_CUH: &str = include_str!("keys.cuh");
/// map_key and unmap_key, which every WGSL sort starts with.
const KEYS_WGSL: &str = include_str!("keys.wgsl");

/// The bindings of the keys and values a WGSL sort pass moves.
const IO_WGSL: &str = include_str!("io.wgsl");

/// A WGSL sort kernel: the ABI's uniform and overrides, map_key and
/// unmap_key, then `body`.
pub(super) fn sort_wgsl(body: &str) -> String {
    format!("{WGSL_ABI}{KEYS_WGSL}\n{body}")
}

/// A WGSL sort pass: [`sort_wgsl`] with the bindings of the keys and
/// values it moves before `body`.
pub(super) fn pass_wgsl(body: &str) -> String {
    sort_wgsl(&format!("{IO_WGSL}{body}"))
}

/// Phase `phase` (0 upsweep, 1 scan, 2 downsweep) of the three-phase sort
/// of `K` in `order`, in every language.
pub(super) fn phase_program<K: SortKey>(phase: u8, order: SortOrder) -> Arc<Program> {
    let entry = ["UPSWEEP", "SCAN", "DOWNSWEEP"][phase as usize];
    let name = format!("kiln_radix_{}_{}_{}", entry.to_ascii_lowercase(), K::DTYPE, order.name());
    program(&name, || {
        let host = match (phase, order) {
            (0, SortOrder::Ascending) => cpu::upsweep::<K, false>,
            (0, SortOrder::Descending) => cpu::upsweep::<K, true>,
            (1, _) => cpu::scan::<K>,
            (_, SortOrder::Ascending) => cpu::downsweep::<K, false>,
            (_, SortOrder::Descending) => cpu::downsweep::<K, true>,
        };
        Program::new(&name)
            .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("kernel.cu"))))
            .wgsl(pass_wgsl(include_str!("kernel.wgsl")))
            .host(host)
            .define("KERNEL", &name)
            .define(entry, &name)
            .define("PHASE", phase)
            .define("KEY_TYPE", K::KEY_TYPE)
            .define("DESCENDING", u8::from(order == SortOrder::Descending))
    })
}
