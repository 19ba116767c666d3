//! sort, sort_into, sort_pairs and argsort of u32, i32 and f32 keys, ascending and
//! descending, exact: keys from the adversarial mix (NaN, infinities, -0.0,
//! extremes) or, for about a third of the runs, from a handful of values, so
//! that stability is tested on long runs of equal keys.

use std::cmp::Ordering;

use kiln_core::{Backend, DType, Device, Error};
use kiln_kernels::sort::{SortKey, SortOrder, argsort, sort, sort_into, sort_pairs};
use rand::Rng;

use super::transpose::{inverted, same_bits};
use crate::{Cases, Ctx, Failure, Sample};

/// Which call a case makes.
#[derive(Debug, Clone, Copy)]
enum Call {
    Keys,
    Into,
    Pairs,
    Argsort,
}

impl Call {
    const ALL: [Call; 4] = [Call::Keys, Call::Into, Call::Pairs, Call::Argsort];

    fn name(self) -> &'static str {
        match self {
            Call::Keys => "sort",
            Call::Into => "sort_into",
            Call::Pairs => "sort_pairs",
            Call::Argsort => "argsort",
        }
    }
}

/// A key type as the reference sees it.
trait Key: SortKey + Sample {
    /// The order of the specification: IEEE total order for floats with
    /// every NaN taken as the positive quiet NaN (so -0.0 < 0.0 and NaN
    /// last); the usual order for integers.
    fn order(a: &Self, b: &Self) -> Ordering;
    /// The key as sorted output holds it (NaN made the positive quiet NaN).
    fn canonical(self) -> Self {
        self
    }
}

impl Key for u32 {
    fn order(a: &u32, b: &u32) -> Ordering {
        a.cmp(b)
    }
}

impl Key for i32 {
    fn order(a: &i32, b: &i32) -> Ordering {
        a.cmp(b)
    }
}

impl Key for f32 {
    fn order(a: &f32, b: &f32) -> Ordering {
        a.canonical().total_cmp(&b.canonical())
    }
    fn canonical(self) -> f32 {
        if self.is_nan() { f32::from_bits(0x7fc0_0000) } else { self }
    }
}

/// `n` random keys: the adversarial mix, or a few distinct values repeated.
fn keys<K: Key>(ctx: &mut Ctx, n: usize) -> Vec<K> {
    if ctx.rng.random_range(0..3u32) == 0 {
        let distinct = ctx.rng.random_range(1..=5);
        let pool: Vec<K> = crate::random_vec(&mut ctx.rng, distinct);
        (0..n).map(|_| pool[ctx.rng.random_range(0..pool.len())]).collect()
    } else {
        crate::random_vec(&mut ctx.rng, n)
    }
}

/// Key counts at the edges of the tiles a sort is cut into, whatever the
/// case's size: CUDA sorts up to 384 x {1, 2, 4, 8, 16, 20} keys whole in
/// one block, and cuts more into onesweep tiles of 384 x 16 keys (x 20
/// with values); wgpu's tiles hold 256 x {8, 12, 16}.
const TILE_EDGES: [usize; 17] =
    [383, 384, 385, 768, 769, 1536, 1537, 2048, 3072, 3073, 4096, 6143, 6144, 6145, 7679, 7680, 7681];

/// Every call and order in turn on each count of [`TILE_EDGES`].
fn tile_edges<B: Backend, K: Key>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    if ctx.n == 0 {
        return Ok(());
    }
    for (j, &n) in TILE_EDGES.iter().enumerate() {
        let call = Call::ALL[(j + ctx.n) % Call::ALL.len()];
        let order = SortOrder::ALL[(j / Call::ALL.len() + ctx.n) % SortOrder::ALL.len()];
        run_n::<B, K>(call, order, device, ctx, n)?;
    }
    Ok(())
}

/// The positions of `keys` in stable sorted order.
fn stable_order<K: Key>(keys: &[K], order: SortOrder) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    // `sort_by` is stable: equal keys keep their positions' order.
    idx.sort_by(|&i, &j| {
        let o = K::order(&keys[i as usize], &keys[j as usize]);
        match order {
            SortOrder::Ascending => o,
            SortOrder::Descending => o.reverse(),
        }
    });
    idx
}

fn run<B: Backend, K: Key>(call: Call, order: SortOrder, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    run_n::<B, K>(call, order, device, ctx, ctx.n)
}

/// `call` in `order` on `n` random keys, against the stable sort of the host.
fn run_n<B: Backend, K: Key>(
    call: Call,
    order: SortOrder,
    device: &Device<B>,
    ctx: &mut Ctx,
    n: usize,
) -> Result<(), Failure> {
    let k: Vec<K> = keys(ctx, n);
    let perm = stable_order(&k, order);
    let sorted: Vec<K> = perm.iter().map(|&i| k[i as usize].canonical()).collect();
    let s = device.stream();
    let what = format!("{} of {} {} keys ({order})", call.name(), k.len(), K::DTYPE);
    match call {
        Call::Keys => {
            let mut kb = device.upload(&k)?;
            sort(&s, &mut kb, order)?;
            same_bits(&what, &sorted, &kb.to_vec()?)
        }
        Call::Into => {
            let kb = device.upload(&k)?;
            let mut out = device.upload(&inverted(&sorted))?;
            sort_into(&s, &kb, &mut out, order)?;
            same_bits(&format!("{what}: keys"), &k, &kb.to_vec()?)?;
            same_bits(&what, &sorted, &out.to_vec()?)
        }
        Call::Pairs => {
            let values: Vec<u32> = crate::random_vec(&mut ctx.rng, k.len());
            let moved: Vec<u32> = perm.iter().map(|&i| values[i as usize]).collect();
            let (mut kb, mut vb) = (device.upload(&k)?, device.upload(&values)?);
            sort_pairs(&s, &mut kb, &mut vb, order)?;
            same_bits(&format!("{what}: keys"), &sorted, &kb.to_vec()?)?;
            same_bits(&format!("{what}: values"), &moved, &vb.to_vec()?)
        }
        Call::Argsort => {
            let kb = device.upload(&k)?;
            let mut ib = device.upload(&inverted(&perm))?;
            argsort(&s, &kb, &mut ib, order)?;
            same_bits(&format!("{what}: keys"), &k, &kb.to_vec()?)?;
            same_bits(&format!("{what}: indices"), &perm, &ib.to_vec()?)
        }
    }
}

/// Values or indices of another length than the keys must be refused with
/// `LengthMismatch`, touching nothing.
fn mismatched<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let k: Vec<u32> = ctx.random();
    let v: Vec<u32> = crate::random_vec(&mut ctx.rng, k.len() + 1);
    let s = device.stream();
    let (mut kb, mut vb) = (device.upload(&k)?, device.upload(&v)?);
    match sort_pairs(&s, &mut kb, &mut vb, SortOrder::Ascending) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(Failure::Contract(format!("sort_pairs of n keys and n + 1 values returned {other:?}"))),
    }
    match argsort(&s, &kb, &mut vb, SortOrder::Descending) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(Failure::Contract(format!("argsort of n keys into n + 1 indices returned {other:?}"))),
    }
    same_bits("keys after refused calls", &k, &kb.to_vec()?)?;
    same_bits("values after refused calls", &v, &vb.to_vec()?)
}

/// Add the sort cases to `group`: each call and order on every key type, and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for call in Call::ALL {
        for order in SortOrder::ALL {
            let pattern = format!("{}/{order}", call.name());
            c.one(group, pattern.clone(), DType::U32, move |d, ctx| run::<B, u32>(call, order, d, ctx));
            c.one(group, pattern.clone(), DType::I32, move |d, ctx| run::<B, i32>(call, order, d, ctx));
            c.one(group, pattern, DType::F32, move |d, ctx| run::<B, f32>(call, order, d, ctx));
        }
    }
    c.one(group, "sort/tile_edges", DType::U32, tile_edges::<B, u32>);
    c.one(group, "sort/tile_edges", DType::I32, tile_edges::<B, i32>);
    c.one(group, "sort/tile_edges", DType::F32, tile_edges::<B, f32>);
    c.one(group, "sort/mismatched_lengths", DType::U32, mismatched::<B>);
}
