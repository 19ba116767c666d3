//! The suite's own tests, in one binary (the suite's generic code is
//! compiled once for the CPU and once for wgpu, not once per file): the
//! runner and its reports, and the stress suite. `tests/portable.rs` stays
//! a binary of its own: it hides the adapter's subgroups through the
//! environment before any device opens.

mod runner;
mod stress;
