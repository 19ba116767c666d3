//! kiln-benches
