//! Arrays: random chains of views (slices with steps and negative steps,
//! indices, new axes, permutations, transposes, broadcasts, axes inserted
//! and removed, reshapes) read back, against the same chain run with
//! ndarray on the host; and the constructors against closed forms.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::array::Array;
use ndarray::{ArrayD, Axis, IxDyn, SliceInfo, SliceInfoElem};
use rand::Rng;

use crate::{CaseRng, Cases, Ctx, Expected, Failure, NumberPattern, Sample, Tolerance};

/// View chains per case.
const CHAINS: usize = 6;
/// Views per chain.
const STEPS: usize = 5;

/// A random valid selection of `len` elements along one axis (a range or an index).
fn pick(rng: &mut CaseRng, len: usize) -> SliceInfoElem {
    let l = len as i64;
    let bound = |rng: &mut CaseRng| if l == 0 { 0 } else { rng.random_range(-l..=l) as isize };
    match rng.random_range(0..10) {
        0 if len > 0 => SliceInfoElem::Index(rng.random_range(-l..l) as isize),
        _ => {
            let start = bound(rng);
            let end = if rng.random_bool(0.3) { None } else { Some(bound(rng)) };
            let steps = [-3, -2, -1, 1, 1, 2, 3];
            SliceInfoElem::Slice { start, end, step: steps[rng.random_range(0..steps.len())] }
        }
    }
}

/// A random factorisation of `n` into up to four extents.
fn factors(rng: &mut CaseRng, n: usize) -> Vec<usize> {
    if n == 0 {
        let mut s = vec![1; rng.random_range(1..4)];
        let at = rng.random_range(0..s.len());
        s[at] = 0;
        return s;
    }
    let mut left = n;
    let mut shape = Vec::new();
    for _ in 0..rng.random_range(0..3) {
        let divisors: Vec<usize> = (1..=left.min(64)).filter(|d| left.is_multiple_of(*d)).collect();
        let d = divisors[rng.random_range(0..divisors.len())];
        shape.push(d);
        left /= d;
    }
    shape.push(left);
    shape
}

/// A view on the device, the same view on the host, and what it was.
type Viewed<B, T> = (Array<B, T>, ArrayD<T>, String);

/// One random view applied to the device array and the host reference.
fn step<B: Backend, T: Sample>(rng: &mut CaseRng, a: &Array<B, T>, h: &ArrayD<T>) -> Result<Viewed<B, T>, Failure> {
    let shape = h.shape().to_vec();
    Ok(match rng.random_range(0..7) {
        0 if !shape.is_empty() => {
            let k = rng.random_range(1..=shape.len());
            let mut info = Vec::new();
            for &n in &shape[..k] {
                if rng.random_bool(0.1) {
                    info.push(SliceInfoElem::NewAxis);
                }
                info.push(pick(rng, n));
            }
            // ndarray takes every axis; kiln keeps the ones not given whole.
            let mut full = info.clone();
            full.extend((k..shape.len()).map(|_| SliceInfoElem::Slice { start: 0, end: None, step: 1 }));
            let si = SliceInfo::<Vec<SliceInfoElem>, IxDyn, IxDyn>::try_from(full)
                .map_err(|e| Failure::Contract(format!("ndarray refused the slice {info:?}: {e}")))?;
            (a.slice(&info)?, h.slice(si.as_ref()).to_owned(), format!("slice {info:?}"))
        }
        1 => {
            let mut axes: Vec<usize> = (0..shape.len()).collect();
            for i in (1..axes.len()).rev() {
                axes.swap(i, rng.random_range(0..=i));
            }
            (a.permuted_axes(&axes)?, h.clone().permuted_axes(axes.clone()), format!("permute {axes:?}"))
        }
        2 => (a.t(), h.t().to_owned(), "t".into()),
        3 if shape.len() < 5 => {
            let axis = rng.random_range(0..=shape.len());
            (a.insert_axis(axis)?, h.clone().insert_axis(Axis(axis)), format!("insert axis {axis}"))
        }
        4 => match shape.iter().position(|&n| n == 1) {
            Some(axis) => (a.remove_axis(axis)?, h.clone().remove_axis(Axis(axis)), format!("remove axis {axis}")),
            None => (a.clone(), h.clone(), "nothing".into()),
        },
        5 if shape.len() < 5 => {
            // Extent-1 dimensions repeated, a leading one added.
            let mut to: Vec<usize> = shape.iter().map(|&n| if n == 1 { rng.random_range(1..4) } else { n }).collect();
            to.insert(0, rng.random_range(1..3));
            let b = h.broadcast(IxDyn(&to)).ok_or_else(|| Failure::Contract(format!("ndarray refused {to:?}")))?;
            (a.broadcast_to(&to)?, b.to_owned(), format!("broadcast to {to:?}"))
        }
        _ => {
            let to = factors(rng, h.len());
            let flat: Vec<T> = h.iter().copied().collect();
            let r = ArrayD::from_shape_vec(IxDyn(&to), flat).map_err(|e| Failure::Contract(e.to_string()))?;
            (a.reshape(&to)?, r, format!("reshape {to:?}"))
        }
    })
}

/// Random view chains over an array of `ctx.n` elements (or a small one).
#[derive(Clone, Copy)]
struct Views;

impl NumberPattern for Views {
    fn run<B: Backend, T: crate::Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let s = device.stream();
        let data: Vec<T> = ctx.random();
        let base_shape = factors(&mut ctx.rng, ctx.n);
        let a = Array::from_vec(&s, &base_shape, &data)?;
        let h = ArrayD::from_shape_vec(IxDyn(&base_shape), data).map_err(|e| Failure::Contract(e.to_string()))?;
        for _ in 0..CHAINS {
            let (mut a, mut h) = (a.clone(), h.clone());
            let mut said = vec![format!("{base_shape:?}")];
            for _ in 0..STEPS {
                let (a2, h2, what) = step(&mut ctx.rng, &a, &h)?;
                said.push(what);
                (a, h) = (a2, h2);
            }
            let what = said.join(" -> ");
            if a.shape() != h.shape() {
                return Err(Failure::Contract(format!("{what}: shape {:?}, ndarray {:?}", a.shape(), h.shape())));
            }
            let want: Vec<T> = h.iter().copied().collect();
            let got = a.to_ndarray()?;
            crate::compare(&what, &Expected::new(want.clone(), Tolerance::Bits), got.as_slice().unwrap_or(&[]))
                .map_err(Failure::Mismatch)?;
            let c = a.to_contiguous()?;
            crate::compare(
                &format!("{what}, made contiguous"),
                &Expected::new(want, Tolerance::Bits),
                &c.buffer().to_vec()?,
            )
            .map_err(Failure::Mismatch)?;
        }
        Ok(())
    }
}

/// Bad views are errors, not panics, and leave the array usable.
#[derive(Clone, Copy)]
struct BadViews;

impl NumberPattern for BadViews {
    fn run<B: Backend, T: crate::Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let s = device.stream();
        let data: Vec<T> = crate::random_vec(&mut ctx.rng, 12);
        let a = Array::from_vec(&s, &[3, 4], &data)?;
        let refused = |what: &str, r: kiln_core::Result<Array<B, T>>| match r {
            Err(kiln_core::Error::InvalidArgument { .. }) => Ok(()),
            Err(e) => Err(Failure::Contract(format!("{what}: {e}"))),
            Ok(v) => Err(Failure::Contract(format!("{what} was accepted as shape {:?}", v.shape()))),
        };
        let slice = |start, end, step| SliceInfoElem::Slice { start, end, step };
        refused("index 3 of extent 3", a.slice([SliceInfoElem::Index(3)]))?;
        refused("bound 5 of extent 4", a.slice([slice(0, None, 1), slice(0, Some(5), 1)]))?;
        refused("start -4 of extent 3", a.slice([slice(-4, None, 1)]))?;
        refused("step 0", a.slice([slice(0, None, 0)]))?;
        refused("three axes of two", a.slice([slice(0, None, 1), slice(0, None, 1), slice(0, None, 1)]))?;
        refused("permutation [0, 0]", a.permuted_axes(&[0, 0]))?;
        refused("broadcast to [3, 5]", a.broadcast_to(&[3, 5]))?;
        refused("remove axis 0 of extent 3", a.remove_axis(0))?;
        refused("insert axis 3", a.insert_axis(3))?;
        refused("reshape to [5, 2]", a.reshape(&[5, 2]))?;
        refused("broadcast past an index's count", a.broadcast_to(&[usize::MAX, 3, 4]))?;
        refused("a shape past an index's count", Array::from_vec(&s, &[usize::MAX, 2], &data))?;
        let huge = 1usize << (usize::BITS / 2 + 1);
        let one = a.slice([SliceInfoElem::Index(0), SliceInfoElem::Index(0)])?; // 0-d
        let (p, q) = (one.broadcast_to(&[huge, 1])?, one.broadcast_to(&[1, huge])?);
        refused("an expression broadcast past an index's count", (&p + &q).eval())?;
        let got = a.to_vec()?;
        crate::compare("the array after refusals", &Expected::new(data, Tolerance::Bits), &got)
            .map_err(Failure::Mismatch)
    }
}

/// zeros, ones, full, arange, linspace and eye against closed forms.
#[derive(Clone, Copy)]
struct Create;

impl NumberPattern for Create {
    fn run<B: Backend, T: crate::Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let s = device.stream();
        let n = ctx.n.min(1 << 16);
        let exact = |what: &str, want: Vec<T>, got: Vec<T>| {
            crate::compare(what, &Expected::new(want, Tolerance::Exact), &got).map_err(Failure::Mismatch)
        };
        let (zero, one) = (T::from_index(0), T::from_index(1));
        exact("zeros", vec![zero; n], Array::<B, T>::zeros(&s, &[n])?.to_vec()?)?;
        exact("ones", vec![one; n], Array::<B, T>::ones(&s, &[1, n])?.to_vec()?)?;
        let v = T::random_moderate(&mut ctx.rng);
        exact("full", vec![v; n], Array::full(&s, &[n, 1], v)?.to_vec()?)?;
        // arange(3, 3 + 2n, 2): n elements 3 + 2i.
        let (start, step) = (T::from_index(3), T::from_index(2));
        let stop = start.add(step.mul(T::from_index(n as u64)));
        let want: Vec<T> = (0..n as u64).map(|i| start.add(T::from_index(i).mul(step))).collect();
        exact("arange", want, Array::arange(&s, start, stop, step)?.to_vec()?)?;
        // linspace(1, 1 + (n - 1) * 4, n): every element 1 + 4i exactly.
        let last = one.add(T::from_index(4).mul(T::from_index(n.saturating_sub(1) as u64)));
        let want: Vec<T> = (0..n as u64).map(|i| one.add(T::from_index(i).mul(T::from_index(4)))).collect();
        exact("linspace", want, Array::linspace(&s, one, last, n)?.to_vec()?)?;
        let m = (n as f64).sqrt() as usize;
        let want: Vec<T> = (0..m * m).map(|i| if i % (m + 1) == 0 { one } else { zero }).collect();
        let eye = Array::<B, T>::eye(&s, m)?;
        if eye.shape() != [m, m] {
            return Err(Failure::Contract(format!("eye({m}) has shape {:?}", eye.shape())));
        }
        exact("eye", want, eye.to_vec()?)
    }
}

/// Add the array cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.numbers(group, "array/views", Views);
    c.numbers(group, "array/bad-views", BadViews);
    c.numbers(group, "array/create", Create);
    super::array_fused::register(c, group);
    super::array_routes::register(c, group);
    super::array_promote::register(c, group);
}
