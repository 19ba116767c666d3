//! The conformance suite: every pattern x dtype x size against the CPU reference.

kiln_conformance::conformance_tests!(kiln_wgpu::Wgpu);
