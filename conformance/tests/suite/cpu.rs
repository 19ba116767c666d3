//! The CPU backend, the reference every other backend is checked against,
//! through the whole suite: every pattern x dtype x size against the
//! plain-Rust references.

kiln_conformance::conformance_tests!(kiln_cpu::Cpu);
