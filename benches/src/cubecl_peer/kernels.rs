//! The elementwise cases as a CubeCL user writes them: `#[cube]` kernels
//! over slices of `Vector<f32, N>`, one vector per unit, guarded by the
//! slice's length, launched unchecked.
//!
//! The vector size is the largest of the client's
//! `io_optimized_vector_sizes` that divides the length (4 on wgpu, so
//! 16-byte loads, as kiln's own kernels make), the choice cubek's reductions
//! make too. The launch is `launch_unchecked`: the explicit guard keeps
//! every access in bounds, it is how cubek and Burn launch their elementwise
//! kernels, and kiln's WGSL kernels likewise run without wgpu's bounds
//! checks; the checked launch would add a clamp to each access.

use cubecl::prelude::*;
use cubecl::server::Handle;

/// Units per cube: 256, the cube size CubeCL's own elementwise examples use.
const UNITS: u32 = 256;

#[cube(launch_unchecked)]
fn vector_add<N: Size>(a: &[Vector<f32, N>], b: &[Vector<f32, N>], c: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < c.len() {
        c[ABSOLUTE_POS] = a[ABSOLUTE_POS] + b[ABSOLUTE_POS];
    }
}

#[cube(launch_unchecked)]
fn multiply<N: Size>(a: &[Vector<f32, N>], b: &[Vector<f32, N>], c: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < c.len() {
        c[ABSOLUTE_POS] = a[ABSOLUTE_POS] * b[ABSOLUTE_POS];
    }
}

#[cube(launch_unchecked)]
fn axpy<N: Size>(alpha: f32, x: &[Vector<f32, N>], y: &[Vector<f32, N>], z: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < z.len() {
        z[ABSOLUTE_POS] = Vector::new(alpha) * x[ABSOLUTE_POS] + y[ABSOLUTE_POS];
    }
}

#[cube(launch_unchecked)]
fn square<N: Size>(x: &[Vector<f32, N>], y: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < y.len() {
        let v = x[ABSOLUTE_POS];
        y[ABSOLUTE_POS] = v * v;
    }
}

#[cube(launch_unchecked)]
fn abs<N: Size>(x: &[Vector<f32, N>], y: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < y.len() {
        y[ABSOLUTE_POS] = x[ABSOLUTE_POS].abs();
    }
}

#[cube(launch_unchecked)]
fn negate<N: Size>(x: &[Vector<f32, N>], y: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < y.len() {
        y[ABSOLUTE_POS] = -x[ABSOLUTE_POS];
    }
}

#[cube(launch_unchecked)]
fn sqrt<N: Size>(x: &[Vector<f32, N>], y: &mut [Vector<f32, N>]) {
    if ABSOLUTE_POS < y.len() {
        y[ABSOLUTE_POS] = x[ABSOLUTE_POS].sqrt();
    }
}

/// An elementwise operation of the benches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Elementwise {
    /// `c = a + b`.
    Add,
    /// `c = a * b` (the first half of the dot case).
    Multiply,
    /// `z = alpha * x + y`.
    Axpy(f32),
    /// `y = x * x`.
    Square,
    /// `y = |x|`.
    Abs,
    /// `y = -x`.
    Negate,
    /// `y = sqrt(x)`.
    Sqrt,
}

impl Elementwise {
    /// Inputs read per output element.
    pub(crate) fn inputs(self) -> usize {
        match self {
            Elementwise::Add | Elementwise::Multiply | Elementwise::Axpy(_) => 2,
            _ => 1,
        }
    }

    /// The host's value for inputs `a` (and `b`).
    pub(crate) fn reference(self, a: f32, b: f32) -> f32 {
        match self {
            Elementwise::Add => a + b,
            Elementwise::Multiply => a * b,
            Elementwise::Axpy(alpha) => alpha * a + b,
            Elementwise::Square => a * a,
            Elementwise::Abs => a.abs(),
            Elementwise::Negate => -a,
            Elementwise::Sqrt => a.sqrt(),
        }
    }
}

/// The vector size the elementwise kernels use for `n` f32.
pub(crate) fn vector_size(client: &Client, n: usize) -> usize {
    client.io_optimized_vector_sizes(size_of::<f32>()).filter(|v| n.is_multiple_of(*v)).max().unwrap_or(1)
}

/// Launch `op` over `n` f32: `inputs` (one or two buffers of `n`) into
/// `output` (a buffer of `n`).
pub(crate) fn launch(client: &Client, op: Elementwise, inputs: &[Handle], output: &Handle, n: usize) {
    let vectors = vector_size(client, n);
    let dim = CubeDim::new_1d(UNITS);
    let count = cubecl::calculate_cube_count_elemwise(client, n / vectors, dim);
    // SAFETY: every handle holds `n` f32 (the caller allocated them so),
    // and each kernel guards its index by the output's length.
    let arg = |h: &Handle| unsafe { BufferArg::from_raw_parts(h.clone(), n) };
    let (a, out) = (arg(&inputs[0]), arg(output));
    // SAFETY: as above; the kernels read and write only indices below the length.
    unsafe {
        match op {
            Elementwise::Add => vector_add::launch_unchecked(client, count, dim, vectors, a, arg(&inputs[1]), out),
            Elementwise::Multiply => multiply::launch_unchecked(client, count, dim, vectors, a, arg(&inputs[1]), out),
            Elementwise::Axpy(alpha) => {
                axpy::launch_unchecked(client, count, dim, vectors, alpha, a, arg(&inputs[1]), out)
            }
            Elementwise::Square => square::launch_unchecked(client, count, dim, vectors, a, out),
            Elementwise::Abs => abs::launch_unchecked(client, count, dim, vectors, a, out),
            Elementwise::Negate => negate::launch_unchecked(client, count, dim, vectors, a, out),
            Elementwise::Sqrt => sqrt::launch_unchecked(client, count, dim, vectors, a, out),
        }
    }
}
