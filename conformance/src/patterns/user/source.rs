//! The escape hatch of user kernels on every backend: each pass of a
//! kernel replaced by the program of another kernel with the same name and
//! signature (`with_source` fed from `program`/`programs`), which must then
//! compute the other kernel's result while the original keeps its own.

use kiln_core::{Args, Backend, DType, Device, Error, Program, Source};
use kiln_kernels::expr::var;
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::{Elementwise, Reduction, Scan};

use crate::patterns::unchanged;
use crate::{Cases, Ctx, Expected, Failure, Tolerance, poisoned};

/// `program`'s source for `B`.
fn source_of<B: Backend>(program: &Program) -> Result<Source, Failure> {
    program
        .get(B::LANGUAGE)
        .cloned()
        .ok_or_else(|| Failure::Contract(format!("program `{}` has no {} source", program.name(), B::LANGUAGE)))
}

fn exact(what: &str, want: Vec<u32>, got: &[u32]) -> Result<(), Failure> {
    crate::compare(what, &Expected::new(want, Tolerance::Exact), got).map_err(Failure::Mismatch)
}

/// Elementwise, reduction (whole and along rows) and scan, each replaced.
fn replaced<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let x: Vec<u32> = ctx.random();
    let a = 0x9e37_79b9u32;
    let width = device.info().features.index_width;
    let s = device.stream();
    let xb = device.upload(&x)?;

    // Elementwise: z = x * 2 + a, replaced by z = (x ^ a) - x.
    let double = |body| {
        Elementwise::new("hatch")
            .input("x", DType::U32)
            .scalar("a", DType::U32)
            .output("z", DType::U32)
            .set("z", body)
            .build()
    };
    let own = double(var("x") * 2 + var("a"))?;
    let other = double((var("x") ^ var("a")) - var("x"))?;
    let program = other.program(B::LANGUAGE, width, &[])?;
    // SAFETY: the source is generated for the same name and signature.
    let hand = unsafe { own.clone().with_source(B::LANGUAGE, source_of::<B>(&program)?) };
    for (k, want) in [
        (&own, x.iter().map(|v| v.wrapping_mul(2).wrapping_add(a)).collect::<Vec<_>>()),
        (&hand, x.iter().map(|v| (v ^ a).wrapping_sub(*v)).collect()),
    ] {
        let mut z = poisoned(device, &want)?;
        k.launch(&s, Args::new().arg(&xb).scalar(a).arg(&mut z))?;
        exact("elementwise", want, &z.to_vec()?)?;
    }

    // Reduction: a wrapping sum, every pass replaced by a maximum's.
    let fold = |combine| {
        Reduction::new("hatch_fold", DType::U32)
            .input("x", DType::U32)
            .map(var("x"))
            .reduce(combine)
            .identity(0)
            .build()
    };
    let own = fold(var("a") + var("b"))?;
    let mut hand = own.clone();
    for p in fold(var("a").max(var("b")))?.programs(B::LANGUAGE, width, &[])? {
        // SAFETY: each pass is generated for the same name, signature and accumulator.
        hand = unsafe { hand.with_source(B::LANGUAGE, p.name(), source_of::<B>(&p)?)? };
    }
    let sum = x.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    let max = x.iter().copied().max().unwrap_or(0);
    for (k, want, what) in [(&own, sum, "sum"), (&hand, max, "maximum")] {
        let got = k.reduce::<_, u32>(&s, Args::new().arg(&xb))?;
        exact(&format!("whole {what}"), vec![want], &[got])?;
    }
    let rows = if n.is_multiple_of(3) { 3 } else { 1 };
    let cols = n / rows;
    let want: Vec<u32> = (0..rows).map(|r| x[r * cols..(r + 1) * cols].iter().copied().max().unwrap_or(0)).collect();
    let mut out = poisoned(device, &want)?;
    hand.reduce_axis(&s, Args::new().arg(&xb), rows, cols, 1, &mut out)?;
    exact("row maxima", want, &out.to_vec()?)?;

    // Scan: a running sum, every pass replaced by a running maximum's.
    let scan = |combine| Scan::new("hatch_scan", DType::U32).input("x", DType::U32).scan(combine).identity(0).build();
    let mut hand = scan(var("a") + var("b"))?;
    for p in scan(var("a").max(var("b")))?.programs(B::LANGUAGE, width, &[])? {
        // SAFETY: each pass is generated for the same name, signature and accumulator.
        hand = unsafe { hand.with_source(B::LANGUAGE, p.name(), source_of::<B>(&p)?)? };
    }
    let want: Vec<u32> = x
        .iter()
        .scan(0u32, |m, v| {
            *m = (*m).max(*v);
            Some(*m)
        })
        .collect();
    let mut out = poisoned(device, &want)?;
    hand.scan(&s, ScanKind::Inclusive, Args::new().arg(&xb), &mut out)?;
    exact("running maximum", want, &out.to_vec()?)?;
    unchanged("input x", &xb, &x)
}

/// An entry point the kernel lacks is refused, naming it.
fn refused<B: Backend>(_device: &Device<B>, _ctx: &mut Ctx) -> Result<(), Failure> {
    let k = Scan::new("hatch_scan", DType::U32).input("x", DType::U32).scan(var("a") + var("b")).identity(0).build()?;
    // SAFETY: refused before any source could run.
    match unsafe { k.with_source(B::LANGUAGE, "hatch_scan_sideways", "") } {
        Err(Error::InvalidArgument { .. }) => Ok(()),
        Err(e) => Err(Failure::Contract(format!("an unknown entry point gave {e}"))),
        Ok(_) => Err(Failure::Contract("an unknown entry point was accepted".into())),
    }
}

/// Add the escape-hatch cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "user/with-source", DType::U32, |d, ctx| replaced::<B>(d, ctx));
    c.one(group, "user/with-source-refused", DType::U32, |d, ctx| refused::<B>(d, ctx));
}
