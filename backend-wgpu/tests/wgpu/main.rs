//! Integration tests of kiln-wgpu on whatever Vulkan adapter the machine
//! has (lavapipe in CI). Without one, every test checks that opening the
//! device says so (`BackendUnavailable`) and stops there.

mod adapter;
mod common;
mod conformance;
mod copies;
mod events;
mod fft;
mod fills;
mod kernels;
mod linalg;
mod pool;
mod scalars;
mod spirv;
mod threads;
