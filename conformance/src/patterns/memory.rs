//! Memory: round trips, asynchronous copies, a device-to-device copy of a
//! sub-range and a fill of a view. Every bit must survive (NaN payloads,
//! the sign of zero), so results are compared bit for bit.

use kiln_core::{Backend, Device};

use crate::{Cases, Ctx, ElementPattern, Expected, Failure, Sample, Tolerance, poison_for, poisoned};

/// The ranges a sub-range pattern uses for `n` elements: a source start, a
/// length and a destination start, at odd, unaligned offsets, the two
/// ranges different, both inside `n`.
fn ranges(n: usize) -> (usize, usize, usize) {
    let len = n / 2;
    (n / 4, len, n - len - n / 8)
}

/// upload, then download: the data must come back bit for bit.
#[derive(Debug, Clone, Copy)]
pub struct RoundTrip;

impl ElementPattern for RoundTrip {
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let data: Vec<T> = ctx.random();
        let buf = device.upload(&data)?;
        let mut back = poison_for(&data);
        buf.copy_to_host(&mut back)?;
        ctx.compare("downloaded data", &Expected::new(data, Tolerance::Bits), &back)
    }
}

/// Asynchronous copies through host buffers, on a stream of its own:
/// host -> device -> device (a second buffer) -> host.
#[derive(Debug, Clone, Copy)]
pub struct AsyncRoundTrip;

impl ElementPattern for AsyncRoundTrip {
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let data: Vec<T> = ctx.random();
        let s = device.create_stream(kiln_core::Priority::Normal)?;
        let mut host = device.alloc_host::<T>(ctx.n)?;
        host.as_mut_slice()?.copy_from_slice(&data);
        let mut a = poisoned(device, &data)?;
        let mut b = poisoned(device, &data)?;
        let mut back = device.alloc_host::<T>(ctx.n)?;
        back.as_mut_slice()?.copy_from_slice(&poison_for(&data));
        s.copy_to_device_async(&host, &mut a)?;
        s.copy(&a, &mut b)?;
        s.copy_to_host_async(&b, &mut back)?;
        // `as_slice` waits for the copy into `back`.
        ctx.compare(
            "data after host -> device -> device -> host",
            &Expected::new(data, Tolerance::Bits),
            back.as_slice()?,
        )
    }
}

/// A device-to-device copy of a sub-range into another offset of a second
/// buffer: the range arrives, nothing outside it changes, and reading the
/// range back through a view gives it again.
#[derive(Debug, Clone, Copy)]
pub struct CopyRange;

impl ElementPattern for CopyRange {
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n;
        let (src_at, len, dst_at) = ranges(n);
        let src: Vec<T> = ctx.random();
        let mut want: Vec<T> = ctx.random();
        want[dst_at..dst_at + len].copy_from_slice(&src[src_at..src_at + len]);
        // Outside the range the destination keeps its (random) contents;
        // inside, it starts as poison so an element left uncopied is caught.
        let mut initial = want.clone();
        for (v, &w) in initial[dst_at..dst_at + len].iter_mut().zip(&want[dst_at..dst_at + len]) {
            *v = T::poison(w);
        }
        let sb = device.upload(&src)?;
        let mut db = device.upload(&initial)?;
        device.stream().copy(&sb.slice(src_at..src_at + len)?, &mut db.slice_mut(dst_at..dst_at + len)?)?;
        let what = format!("destination after copying [{src_at}..{}) to [{dst_at}..{})", src_at + len, dst_at + len);
        ctx.compare(&what, &Expected::new(want.clone(), Tolerance::Bits), &db.to_vec()?)?;
        let range = want[dst_at..dst_at + len].to_vec();
        ctx.compare(
            "the copied range read through a view",
            &Expected::new(range, Tolerance::Bits),
            &db.slice(dst_at..dst_at + len)?.to_vec()?,
        )
    }
}

/// `fill` of a view: the view holds the value, nothing outside it changes.
#[derive(Debug, Clone, Copy)]
pub struct FillView;

impl ElementPattern for FillView {
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (_, len, at) = ranges(ctx.n);
        let value = T::random(&mut ctx.rng);
        let mut want: Vec<T> = ctx.random();
        let mut initial = want.clone();
        for (w, i) in want[at..at + len].iter_mut().zip(&mut initial[at..at + len]) {
            *w = value;
            *i = T::poison(value);
        }
        let mut buf = device.upload(&initial)?;
        kiln_kernels::fill::fill(&device.stream(), &mut buf.slice_mut(at..at + len)?, value)?;
        let what = format!("buffer after filling [{at}..{}) with {value:?}", at + len);
        ctx.compare(&what, &Expected::new(want, Tolerance::Exact), &buf.to_vec()?)
    }
}

/// Add the memory cases to `group`: the round trips, the sub-range copy
/// and the fill of a view, on every sampled type.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.elements(group, "memory/round_trip", RoundTrip);
    c.elements(group, "memory/async_round_trip", AsyncRoundTrip);
    c.elements(group, "memory/copy_range", CopyRange);
    c.elements(group, "memory/fill_view", FillView);
}
