//! kiln-cuda's tests, in one binary to keep the GPU bundle small.
//!
//! Without a CUDA driver (CI, development machines) only `unavailable` has
//! something to check; every other test prints a note and returns. On a GPU
//! machine they all run for real. Tests that must not share a process with
//! others (a deliberate device fault; a second process loading from the disk
//! cache) re-run this binary on themselves, so they hold under `cargo test`
//! (threads) as well as nextest (a process per test).

mod cuda {
    mod blas;
    pub mod common;
    mod compile;
    mod conformance;
    mod disk_cache;
    mod fault;
    mod fft;
    mod launch;
    mod lifetimes;
    mod memory;
    mod nccl;
    mod streams;
    mod unavailable;
}
