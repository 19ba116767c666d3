//! kiln-wgpu
