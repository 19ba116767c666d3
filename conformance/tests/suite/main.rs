//! The suite's own tests, in one binary (the suite's generic code is
//! compiled once for the CPU and once for wgpu, not once per file): the
//! runner and its reports, the stress suite, and the CPU backend through
//! every case. The backends on GPUs run the suite in their own tests
//! (kiln-wgpu's, kiln-cuda's).

mod cpu;
mod runner;
mod stress;
