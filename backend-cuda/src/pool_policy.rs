//! kiln's [`CachePolicy`] on CUDA's stream-ordered pool (the device's
//! default `CUmemoryPool`, which every kiln allocation comes from where the
//! device has pools). The driver's pool already reuses memory across sizes
//! (it suballocates and splits its reserved chunks); what kiln bounds is
//! how much of it the pool keeps unused:
//!
//! - The budget is the pool's release threshold: at each synchronization
//!   the driver returns reserved memory past it (`u64::MAX`, keep all,
//!   without a budget).
//! - The peak bound is applied at each [`RawDevice::synchronize`]
//!   (`kiln_core::RawDevice`), when no stream-ordered free is pending:
//!   where the pool keeps more unused bytes than the most in use since the
//!   last trim (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`), or the budget, it is
//!   trimmed (`cuMemPoolTrimTo`) to its bytes in use and the bound; since
//!   the driver releases whole chunks and keeps at least what it is asked
//!   to, a pool still past the bound then gives back all it keeps unused.
//!
//! The default pool belongs to the device, not to one opened handle: the
//! policy set last through any handle of the ordinal applies.

use std::sync::atomic::Ordering;

use kiln_core::{CachePolicy, CacheStats, Result};

use crate::ffi;
use crate::state::DeviceState;

/// Apply `policy` to `state`'s device from now on, and trim the pool to it.
pub(crate) fn set_policy(state: &DeviceState, policy: CachePolicy) -> Result<()> {
    state.check_usable()?;
    let budget = policy.budget.unwrap_or(u64::MAX);
    state.cache_budget.store(budget, Ordering::Relaxed);
    if !state.pooled {
        return Ok(());
    }
    state.bind("cuMemPoolSetAttribute(release threshold)")?;
    let dev = state.ctx.cu_device();
    ffi::set_release_threshold(dev, budget)
        .map_err(|e| state.fail("cuMemPoolSetAttribute(release threshold)", e, 0))?;
    enforce(state)
}

/// The policy now on `state`'s device.
fn policy(state: &DeviceState) -> CachePolicy {
    let budget = state.cache_budget.load(Ordering::Relaxed);
    CachePolicy { budget: (budget != u64::MAX).then_some(budget) }
}

/// The pool's bytes in use and kept unused, its peak in use since the last
/// trim and the policy's bound. All zeros where the device has no pools.
pub(crate) fn stats(state: &DeviceState) -> Result<CacheStats> {
    state.check_usable()?;
    if !state.pooled {
        return Ok(CacheStats { bound: policy(state).bound(0), ..CacheStats::default() });
    }
    state.bind("cuMemPoolGetAttribute")?;
    let dev = state.ctx.cu_device();
    let (used, reserved) =
        ffi::pool_usage(dev).map_err(|e| state.fail("cuMemPoolGetAttribute(used, reserved)", e, 0))?;
    let high = ffi::pool_peak(dev).map_err(|e| state.fail("cuMemPoolGetAttribute(used high)", e, 0))?;
    // The watermark reads 0 after a reset until the next allocation.
    let peak = high.max(used);
    Ok(CacheStats {
        used,
        cached: reserved.saturating_sub(used),
        // The driver does not count its free chunks.
        cached_blocks: 0,
        peak,
        bound: policy(state).bound(peak),
    })
}

/// Trim the pool to its bytes in use and the policy's bound, where it keeps
/// more. Called with no stream-ordered free pending (after a device
/// synchronize), so that everything unused can go.
pub(crate) fn enforce(state: &DeviceState) -> Result<()> {
    if !state.pooled {
        return Ok(());
    }
    let s = stats(state)?;
    if s.cached <= s.bound {
        return Ok(());
    }
    state.bind("cuMemPoolTrimTo")?;
    let dev = state.ctx.cu_device();
    ffi::trim_pool(dev, s.used.saturating_add(s.bound)).map_err(|e| state.fail("cuMemPoolTrimTo", e, 0))?;
    // The driver releases whole chunks while it keeps at least what it was
    // asked to: where the chunk it kept still passes the bound, everything
    // unused goes.
    if stats(state)?.cached > s.bound {
        ffi::trim_pool(dev, s.used).map_err(|e| state.fail("cuMemPoolTrimTo", e, 0))?;
    }
    Ok(())
}

/// Return the pool's unused memory past `keep` bytes to the driver and start
/// its peak in use over (the high watermark can only be reset to zero; the
/// next allocation raises it again, and [`stats`] reads at least the bytes
/// in use).
pub(crate) fn trim(state: &DeviceState, keep: u64) -> Result<()> {
    state.check_usable()?;
    if !state.pooled {
        return Ok(());
    }
    state.bind("cuMemPoolTrimTo")?;
    let dev = state.ctx.cu_device();
    let (used, _) = ffi::pool_usage(dev).map_err(|e| state.fail("cuMemPoolGetAttribute(used, reserved)", e, 0))?;
    ffi::trim_pool(dev, used.saturating_add(keep)).map_err(|e| state.fail("cuMemPoolTrimTo", e, 0))?;
    ffi::reset_pool_peak(dev).map_err(|e| state.fail("cuMemPoolSetAttribute(used high)", e, 0))
}
