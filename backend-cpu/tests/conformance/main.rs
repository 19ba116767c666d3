//! The CPU backend's tests, in one binary: the conformance suite, and what
//! bad input must give.

mod bad_input;

kiln_conformance::conformance_tests!(kiln_cpu::Cpu);
