//! kiln-cuda
