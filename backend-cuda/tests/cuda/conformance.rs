//! The conformance suite, stamped for CUDA: every pattern against the CPU reference.

kiln_conformance::conformance_tests!(kiln_cuda::Cuda);
