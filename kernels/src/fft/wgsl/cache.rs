//! Plans, made once per device, length, kind, direction and precision:
//! the kernels' structure and their constants, uploaded once and kept
//! (the earliest made dropped past [`KEEP_BYTES`] of tables or
//! [`KEEP_PLANS`] plans).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use kiln_core::{Backend, Buffer, Complex, DType, Error, FftKind, Result, Stream};

use super::bluestein::Bluestein;
use super::{Core, FftFloat, plan, sequence, tables};

/// A plan: how its complex transform is computed, the offset of the real
/// transform's folding twiddles where it is a half-length one, and the
/// table every kernel reads its constants from.
pub(super) struct Plan<B: Backend, T: FftFloat> {
    pub(super) core: Core,
    pub(super) pack: Option<u32>,
    pub(super) table: Buffer<B, Complex<T>>,
}

/// What a plan is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    backend: TypeId,
    device: u64,
    dtype: DType,
    kind: FftKind,
    n: usize,
    inverse: bool,
}

/// The plans kept, their table bytes, and the order they were made in.
#[derive(Default)]
struct Kept {
    plans: HashMap<Key, (Arc<dyn Any + Send + Sync>, usize)>,
    order: Vec<Key>,
    bytes: usize,
}

/// Tables past this many bytes in all, or plans past this many, push the
/// oldest plans out (they are made again when next needed).
const KEEP_BYTES: usize = 256 << 20;
const KEEP_PLANS: usize = 256;

/// The plan of `kind` of length `n` in direction `inverse` on `stream`'s
/// device, made (and its table uploaded, on the device's default stream,
/// which is then synchronised so that every stream may read it) the first
/// time.
pub(super) fn plan<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    kind: FftKind,
    n: usize,
    inverse: bool,
    shared: usize,
    what: &dyn Fn() -> String,
) -> Result<Arc<Plan<B, T>>> {
    static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
    let device = stream.device();
    let key = Key { backend: TypeId::of::<B>(), device: device.id(), dtype: T::DTYPE, kind, n, inverse };
    let mut kept = KEPT.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some((p, _)) = kept.plans.get(&key)
        && let Ok(p) = p.clone().downcast::<Plan<B, T>>()
    {
        return Ok(p);
    }
    let (core, pack, data) = build(kind, n, inverse, size_of::<Complex<T>>(), shared)
        .ok_or_else(|| Error::unsupported(B::KIND, what(), "the device's workgroup memory is too small to plan it"))?;
    let rounded: Vec<Complex<T>> = data.iter().map(|v| Complex::new(T::from_wide(v.re), T::from_wide(v.im))).collect();
    let default = device.stream();
    let table = default.upload(&rounded)?;
    default.synchronize()?;
    let bytes = rounded.len() * size_of::<Complex<T>>();
    let plan = Arc::new(Plan { core, pack, table });
    while (kept.bytes + bytes > KEEP_BYTES || kept.order.len() >= KEEP_PLANS) && !kept.order.is_empty() {
        let old = kept.order.remove(0);
        if let Some((_, b)) = kept.plans.remove(&old) {
            kept.bytes -= b;
        }
    }
    kept.plans.insert(key, (plan.clone(), bytes));
    kept.order.push(key);
    kept.bytes += bytes;
    Ok(plan)
}

/// The plan's structure and table (f64): `None` where workgroup memory
/// is too small or `n` too long.
fn build(
    kind: FftKind,
    n: usize,
    inverse: bool,
    csize: usize,
    shared: usize,
) -> Option<(Core, Option<u32>, Vec<Complex<f64>>)> {
    let packed = kind != FftKind::C2C && n.is_multiple_of(2);
    let len = if packed { n / 2 } else { n };
    let mut tb = tables::Builder::default();
    let core = if plan::smooth(len) {
        Core::Smooth(sequence(len, inverse, csize, shared, &mut tb)?)
    } else {
        Core::Bluestein(Bluestein::new(len, inverse, csize, shared, &mut tb)?)
    };
    let pack = packed.then(|| tb.pack(n, inverse));
    let mut data = tb.data;
    if data.is_empty() {
        // A binding holds at least one element.
        data.push(Complex::new(0.0, 0.0));
    }
    Some((core, pack, data))
}
