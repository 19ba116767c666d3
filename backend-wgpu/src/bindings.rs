//! Bind groups made once and reused, so that a launch whose arguments were
//! bound before creates nothing.
//!
//! - Layouts are shared by every pipeline: one storage layout per pattern
//!   of read-only and writable bindings, one layout for the scalar block.
//!   Bind groups made for one pipeline then fit every pipeline of that
//!   pattern.
//! - The scalar block is bound with a dynamic offset, so one bind group per
//!   block (and size class) serves every launch that has its scalars there
//!   (see `context::Params`).
//! - Storage bind groups are cached by layout and bound ranges. A range
//!   names its buffer by a number given when the buffer was made (never
//!   reused): the cache holds no buffer alive by its key, only through the
//!   bind group, and a buffer's groups are dropped when kiln's buffer is
//!   ([`Bindings::forget`]). The cache is cleared whole when it reaches
//!   [`MAX_GROUPS`], which bounds what it keeps alive.

use std::collections::HashMap;
use std::sync::Mutex;

use kiln_core::Result;

use crate::errors::scoped;
use crate::resources::{binding, create_buffer, next_id, params_entry, storage_entry, STORAGE};

/// Bind groups kept at most before the cache starts over.
pub(crate) const MAX_GROUPS: usize = 4096;

/// A bound range: the buffer's number, the offset and the size in bytes.
pub(crate) type Range = (u64, u64, u64);

#[derive(Clone, PartialEq, Eq, Hash)]
struct GroupKey {
    layout: wgpu::BindGroupLayout,
    ranges: Vec<Range>,
}

#[derive(Default)]
struct Groups {
    map: HashMap<GroupKey, wgpu::BindGroup>,
    /// Per buffer number, the keys of the groups that bind it.
    by_buffer: HashMap<u64, Vec<GroupKey>>,
}

/// The layouts and bind groups of one device.
pub(crate) struct Bindings {
    storage: Mutex<HashMap<Vec<bool>, wgpu::BindGroupLayout>>,
    /// The layout of the scalar block: a uniform with a dynamic offset.
    pub(crate) params: wgpu::BindGroupLayout,
    groups: Mutex<Groups>,
    /// Per binding index, the buffer bound for an empty view: buffer, number, bytes.
    scratch: Mutex<Vec<Option<(wgpu::Buffer, u64, u64)>>>,
}

/// A bind group of `layout` over `buffers`, made now.
pub(crate) fn make_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffers: &[(&wgpu::Buffer, Range)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(i, (buffer, (_, offset, size)))| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: binding(buffer, *offset, *size),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("kiln storage"), layout, entries: &entries })
}

impl Bindings {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let params = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kiln kernel scalars"),
            entries: &[params_entry()],
        });
        Bindings { storage: Mutex::default(), params, groups: Mutex::default(), scratch: Mutex::default() }
    }

    /// The layout of storage bindings `0..writable.len()`, binding `i`
    /// read-write when `writable[i]`.
    pub(crate) fn storage(&self, device: &wgpu::Device, writable: &[bool]) -> wgpu::BindGroupLayout {
        let mut layouts = self.storage.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = layouts.get(writable) {
            return l.clone();
        }
        let entries: Vec<_> = writable.iter().enumerate().map(|(i, &w)| storage_entry(i as u32, !w)).collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kiln storage"),
            entries: &entries,
        });
        layouts.insert(writable.to_vec(), layout.clone());
        layout
    }

    /// The bind group of `layout` over `buffers` (each with its range), made
    /// on first use; the error wgpu raises making it, if any.
    pub(crate) fn group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        buffers: &[(&wgpu::Buffer, Range)],
    ) -> std::result::Result<wgpu::BindGroup, wgpu::Error> {
        let key = GroupKey { layout: layout.clone(), ranges: buffers.iter().map(|(_, r)| *r).collect() };
        let mut groups = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = groups.map.get(&key) {
            return Ok(g.clone());
        }
        let (group, error) = scoped(device, || make_group(device, layout, buffers));
        if let Some(e) = error {
            return Err(e);
        }
        if groups.map.len() >= MAX_GROUPS {
            *groups = Groups::default();
        }
        for (id, _, _) in &key.ranges {
            groups.by_buffer.entry(*id).or_default().push(key.clone());
        }
        groups.map.insert(key, group.clone());
        Ok(group)
    }

    /// A scratch buffer of at least `bytes` bytes for binding `index` of a
    /// launch whose view there is empty (the kernel reads none of it), with
    /// its number; one per binding index, so that a launch never binds one
    /// twice, grown when a kernel needs more.
    pub(crate) fn scratch(
        &self,
        device: &wgpu::Device,
        device_name: &str,
        index: usize,
        bytes: u64,
    ) -> Result<(wgpu::Buffer, u64, u64)> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if scratch.len() <= index {
            scratch.resize(index + 1, None);
        }
        match &scratch[index] {
            Some(s) if s.2 >= bytes => Ok(s.clone()),
            _ => {
                let buffer = create_buffer(device, device_name, "empty view", bytes, STORAGE, false)?;
                let s = (buffer, next_id(), bytes);
                scratch[index] = Some(s.clone());
                Ok(s)
            }
        }
    }

    /// Drop the bind groups that bind buffer `id`, which is being dropped.
    pub(crate) fn forget(&self, id: u64) {
        let mut groups = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        let Some(keys) = groups.by_buffer.remove(&id) else { return };
        for key in keys {
            groups.map.remove(&key);
            // The other buffers of the group no longer lead to it.
            for (other, _, _) in &key.ranges {
                if let Some(list) = groups.by_buffer.get_mut(other) {
                    list.retain(|k| k != &key);
                    if list.is_empty() {
                        groups.by_buffer.remove(other);
                    }
                }
            }
        }
    }

    /// Bind groups held now (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.groups.lock().unwrap_or_else(|p| p.into_inner()).map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare wgpu device on the first adapter kiln accepts, if any.
    fn device() -> Option<wgpu::Device> {
        let adapters = crate::adapter::adapters().ok()?;
        let adapter = adapters.into_iter().find(|a| crate::adapter::accepted_backend(a.get_info().backend))?;
        let desc = wgpu::DeviceDescriptor::default();
        pollster::block_on(adapter.request_device(&desc)).ok().map(|(d, _)| d)
    }

    fn buffer(device: &wgpu::Device) -> wgpu::Buffer {
        create_buffer(device, "test", "test", 1024, STORAGE, false).unwrap()
    }

    #[test]
    fn groups_are_made_once_and_dropped_with_their_buffers() {
        let Some(device) = device() else { return };
        let b = Bindings::new(&device);
        let layout = b.storage(&device, &[false, true]);
        assert_eq!(b.storage(&device, &[false, true]), layout, "one layout per pattern");
        let (x, y, z) = (buffer(&device), buffer(&device), buffer(&device));
        let (ix, iy, iz) = (next_id(), next_id(), next_id());
        let g1 = b.group(&device, &layout, &[(&x, (ix, 0, 512)), (&y, (iy, 0, 1024))]).unwrap();
        let g2 = b.group(&device, &layout, &[(&x, (ix, 0, 512)), (&y, (iy, 0, 1024))]).unwrap();
        assert_eq!(g1, g2, "the second launch reuses the group");
        b.group(&device, &layout, &[(&x, (ix, 256, 512)), (&y, (iy, 0, 1024))]).unwrap();
        b.group(&device, &layout, &[(&z, (iz, 0, 1024)), (&y, (iy, 0, 1024))]).unwrap();
        assert_eq!(b.len(), 3, "another range or buffer is another group");
        b.forget(ix);
        assert_eq!(b.len(), 1, "x's two groups go with x");
        {
            let groups = b.groups.lock().unwrap();
            assert_eq!(groups.by_buffer[&iy].len(), 1, "y no longer leads to x's groups");
            assert!(!groups.by_buffer.contains_key(&ix));
        }
        b.forget(iy);
        assert_eq!(b.len(), 0);
        assert!(b.groups.lock().unwrap().by_buffer.is_empty(), "nothing left behind");
    }

    #[test]
    fn the_cache_starts_over_when_full() {
        let Some(device) = device() else { return };
        let b = Bindings::new(&device);
        let layout = b.storage(&device, &[true]);
        let x = create_buffer(&device, "test", "test", 4 * (MAX_GROUPS as u64 + 1), STORAGE, false).unwrap();
        let id = next_id();
        for k in 1..=MAX_GROUPS as u64 {
            b.group(&device, &layout, &[(&x, (id, 0, 4 * k))]).unwrap();
        }
        assert_eq!(b.len(), MAX_GROUPS);
        b.group(&device, &layout, &[(&x, (id, 0, 4 * (MAX_GROUPS as u64 + 1)))]).unwrap();
        assert_eq!(b.len(), 1, "cleared, then the new group");
        assert_eq!(b.groups.lock().unwrap().by_buffer[&id].len(), 1);
    }
}
