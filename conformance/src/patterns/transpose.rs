//! transpose, tiled and naive, on every element type, at shapes derived from
//! the case's size: 1 x n, n x 1 and random factorisations (primes among
//! them), none of them necessarily a multiple of any tile. Every bit must
//! move, so results are compared bit for bit.

use kiln_core::{Backend, DType, Device, Element, Error, bf16, f16};
use kiln_kernels::transpose::{TransposeAlgorithm, transpose_with};
use rand::{Rng, RngCore};

use crate::{Cases, Ctx, Failure};

/// A `rows x cols` shape with `rows * cols` close to `ctx.n` (exactly `n`
/// for the 1 x n and n x 1 shapes): the 2D patterns' reading of a size.
/// Size 0 gives an empty matrix with one non-zero side.
pub(super) fn matrix_shape(ctx: &mut Ctx) -> (usize, usize) {
    let n = ctx.n;
    if n == 0 {
        let side = ctx.rng.random_range(1..=9);
        return if ctx.rng.random() { (0, side) } else { (side, 0) };
    }
    match ctx.rng.random_range(0..4u32) {
        0 => (1, n),
        1 => (n, 1),
        _ => {
            // A random number of rows up to about 2 sqrt(n): wide, square and tall shapes.
            let limit = ((2.0 * (n as f64).sqrt()) as usize).clamp(1, n);
            let rows = ctx.rng.random_range(1..=limit);
            (rows, (n / rows).max(1))
        }
    }
}

/// `count` random values of `T`, from random bits (NaN payloads, subnormals and all).
pub(super) fn random_bits<T: Element>(ctx: &mut Ctx, count: usize) -> Vec<T> {
    let mut values = vec![T::zeroed(); count];
    ctx.rng.fill_bytes(bytemuck::cast_slice_mut(&mut values));
    values
}

/// Every bit of each value inverted: never equal to the value.
pub(super) fn inverted<T: Element>(values: &[T]) -> Vec<T> {
    let mut out = values.to_vec();
    bytemuck::cast_slice_mut::<T, u8>(&mut out).iter_mut().for_each(|b| *b = !*b);
    out
}

/// `Err` naming the first element whose bits differ, with its neighbours.
pub(super) fn same_bits<T: Element>(what: &str, expected: &[T], got: &[T]) -> Result<(), Failure> {
    let differs = |i: usize| bytemuck::bytes_of(&expected[i]) != bytemuck::bytes_of(&got[i]);
    if expected.len() != got.len() {
        return Err(Failure::Contract(format!("{what}: {} elements expected, {} returned", expected.len(), got.len())));
    }
    match crate::compare::mismatch(what, expected, got, |i| !differs(i)) {
        Some(m) => Err(Failure::Mismatch(m)),
        None => Ok(()),
    }
}

/// The transpose of a `rows x cols` row-major matrix, element by element.
fn reference<T: Copy>(input: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(input.len());
    for c in 0..cols {
        for r in 0..rows {
            out.push(input[r * cols + c]);
        }
    }
    out
}

fn run<B: Backend, T: Element>(
    algorithm: TransposeAlgorithm,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let (rows, cols) = matrix_shape(ctx);
    let input: Vec<T> = random_bits(ctx, rows * cols);
    let want = reference(&input, rows, cols);
    let s = device.stream();
    let a = device.upload(&input)?;
    let mut t = device.upload(&inverted(&want))?;
    transpose_with(&s, algorithm, &a, rows, cols, &mut t)?;
    same_bits(&format!("transpose of {rows} x {cols}: input"), &input, &a.to_vec()?)?;
    same_bits(&format!("transpose of {rows} x {cols}"), &want, &t.to_vec()?)
}

/// A transpose whose shape does not match its buffers must be refused with
/// `LengthMismatch` and leave the output untouched.
fn mismatched<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (rows, cols) = matrix_shape(ctx);
    let n = rows * cols;
    let s = device.stream();
    let input: Vec<u32> = random_bits(ctx, n + 1);
    let a = device.upload(&input)?;
    let before: Vec<u32> = random_bits(ctx, n);
    let mut t = device.upload(&before)?;
    match transpose_with(&s, TransposeAlgorithm::Tiled, &a, rows, cols, &mut t) {
        Err(Error::LengthMismatch { .. }) => {}
        other => {
            return Err(Failure::Contract(format!(
                "transpose of {rows} x {cols} with an input of {} elements returned {other:?}, not LengthMismatch",
                n + 1
            )));
        }
    }
    match transpose_with(&s, TransposeAlgorithm::Naive, &a, usize::MAX, 2, &mut t) {
        Err(Error::InvalidArgument { .. }) => {}
        other => return Err(Failure::Contract(format!("transpose of usize::MAX x 2 returned {other:?}"))),
    }
    same_bits("output after refused calls", &before, &t.to_vec()?)
}

/// Add the transpose cases to `group`: each algorithm on every dtype, and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for algorithm in TransposeAlgorithm::ALL {
        let pattern = format!("transpose/{algorithm}");
        each_type!(c, group, pattern, run::<B>(algorithm); u8, f16, bf16, i32, u32, f32, i64, u64, f64);
    }
    c.one(group, "transpose/mismatched_lengths", DType::U32, mismatched::<B>);
}
