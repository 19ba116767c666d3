//! Values made once per key and kept: generated kernels and their
//! per-dtype instances.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use kiln_core::Result;

/// The value `map` holds for `key`, made by `make` and kept the first time
/// (under the lock: two threads never make the same value twice). An `Err`
/// from `make` is returned and nothing is kept.
pub(crate) fn cached<K: Hash + Eq, V: Clone>(
    map: &Mutex<HashMap<K, V>>,
    key: K,
    make: impl FnOnce() -> Result<V>,
) -> Result<V> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = map.get(&key) {
        return Ok(v.clone());
    }
    let v = make()?;
    map.insert(key, v.clone());
    Ok(v)
}
