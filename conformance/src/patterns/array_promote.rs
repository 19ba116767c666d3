//! Mixed element types in array expressions: `promote` (NumPy's table)
//! and `cast` fused into one kernel, and a `where` (`Mask::select`) whose mask compares
//! values of another type, for every pair of `i32`, `u32`, `f32` and `f64`
//! against the same arithmetic on the host in the promoted type. A pair
//! that promotes to a type the device lacks (64-bit integers in WGSL, `f64`
//! without the feature) must be refused as unsupported.

use kiln_core::{Backend, BackendKind, DType, Device, Element, Error};
use kiln_kernels::array::{Array, ArrayExpr, Promote, promote};
use rand::Rng;

use crate::{Cases, Ctx, Failure, Sample};

/// An operand type: its values are exact in `f64`.
trait Src: Sample + Copy {
    fn wide(self) -> f64;
}

/// A promoted type: built from an exact `f64`, with the operators the
/// expression uses (wrapping for integers, one rounding each for floats).
trait Out: Element + Copy {
    fn of(v: f64) -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
}

macro_rules! src {
    ($($t:ty),*) => {$(impl Src for $t { fn wide(self) -> f64 { f64::from(self) } })*};
}
src!(i32, u32, f32, f64);

macro_rules! out_int {
    ($($t:ty),*) => {$(impl Out for $t {
        fn of(v: f64) -> Self { v as $t }
        fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
        fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
    })*};
}
out_int!(i32, u32, i64, u64);

macro_rules! out_float {
    ($($t:ty),*) => {$(impl Out for $t {
        fn of(v: f64) -> Self { v as $t }
        fn add(a: Self, b: Self) -> Self { a + b }
        fn mul(a: Self, b: Self) -> Self { a * b }
    })*};
}
out_float!(f32, f64);

/// Whether `device` computes in `dtype`.
fn has<B: Backend>(device: &Device<B>, dtype: DType) -> bool {
    match dtype {
        DType::I64 | DType::U64 => B::KIND != BackendKind::Wgpu,
        DType::F64 => device.info().features.f64,
        _ => true,
    }
}

/// `(x + y) * x` and `where(a > 0, x, y)` with `x, y = promote(a, b)`,
/// `a` of shape `[rows, cols]` and `b` of `[cols]` (broadcast).
fn pair<B: Backend, T: Src + Promote<U>, U: Src>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T::Output: Out,
{
    let cols = ctx.rng.random_range(1..=ctx.n.clamp(1, 64));
    let rows = ctx.n.div_ceil(cols);
    let ha: Vec<T> = (0..rows * cols).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    let hb: Vec<U> = (0..cols).map(|_| U::random_moderate(&mut ctx.rng)).collect();
    let s = device.stream();
    let a = Array::from_vec(&s, &[rows, cols], &ha)?;
    let b = Array::from_vec(&s, &[cols], &hb)?;
    let (x, y) = promote(&a, &b);
    let what = format!("{} with {} ({rows} x {cols}, promoted to {})", T::DTYPE, U::DTYPE, <T::Output>::DTYPE);
    let sum = (x.clone() + y.clone()) * x.clone();
    let pick = a.expr().gt(ArrayExpr::scalar(T::default())).select(x, y);
    let (got_sum, got_pick) = match (sum.eval(), pick.eval()) {
        (Ok(p), Ok(q)) if has(device, <T::Output>::DTYPE) => (p.to_vec()?, q.to_vec()?),
        (Ok(_), Ok(_)) => return Err(Failure::Contract(format!("{what}: ran on a device without the type"))),
        (Err(Error::Unsupported { .. }), Err(Error::Unsupported { .. })) if !has(device, <T::Output>::DTYPE) => {
            return Ok(());
        }
        (Err(e), _) | (_, Err(e)) => return Err(e.into()),
    };
    let o = |v: f64| <T::Output as Out>::of(v);
    for i in 0..rows * cols {
        let (xa, yb) = (o(ha[i].wide()), o(hb[i % cols].wide()));
        let want_sum = Out::mul(Out::add(xa, yb), xa);
        let want_pick = if ha[i].wide() > 0.0 { xa } else { yb };
        for (name, got, want) in [("(x + y) * x", got_sum[i], want_sum), ("where(a > 0, x, y)", got_pick[i], want_pick)]
        {
            if bytemuck::bytes_of(&got) != bytemuck::bytes_of(&want) {
                return Err(Failure::Contract(format!(
                    "{what}: {name} at {i} (a = {:?}, b = {:?}) is {got:?}, the host gives {want:?}",
                    ha[i],
                    hb[i % cols]
                )));
            }
        }
    }
    Ok(())
}

/// Every right-hand type with left-hand `T`.
fn with<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: Src + Promote<i32> + Promote<u32> + Promote<f32> + Promote<f64>,
    <T as Promote<i32>>::Output: Out,
    <T as Promote<u32>>::Output: Out,
    <T as Promote<f32>>::Output: Out,
    <T as Promote<f64>>::Output: Out,
{
    pair::<B, T, i32>(device, ctx)?;
    pair::<B, T, u32>(device, ctx)?;
    pair::<B, T, f32>(device, ctx)?;
    pair::<B, T, f64>(device, ctx)
}

/// Add the promotion cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "array/promote", DType::I32, with::<B, i32>);
    c.one(group, "array/promote", DType::U32, with::<B, u32>);
    c.one(group, "array/promote", DType::F32, with::<B, f32>);
    c.one(group, "array/promote", DType::F64, with::<B, f64>);
}
