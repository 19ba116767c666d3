//! [`HostBuffer`] of the run-time tier.

use kiln_core::{Element, Result};

use super::{Device, HostBuffer, Tier, describe, dispatch};

impl<T: Element> HostBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        dispatch!(self, HostBuffer, h => h.len())
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device this memory is registered with.
    pub fn device(&self) -> Device {
        dispatch!(self, HostBuffer, h => B::wrap_device(h.device().clone()))
    }

    /// The typed host buffer, if this one is of backend `B`.
    pub fn typed<B: Tier>(&self) -> Option<&kiln_core::HostBuffer<B, T>> {
        B::host(self)
    }

    /// The contents; blocks until every copy into the buffer has completed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let s = dev.stream();
    /// let mut host = dev.alloc_host::<u32>(3)?;
    /// host.as_mut_slice()?.copy_from_slice(&[7, 8, 9]);
    /// let mut on_device = s.alloc::<u32>(3)?;
    /// s.copy_to_device_async(&host, &mut on_device)?;
    /// let mut back = dev.alloc_host::<u32>(3)?;
    /// s.copy_to_host_async(&on_device, &mut back)?;
    /// assert_eq!(back.as_slice()?, [7, 8, 9]);
    /// # Ok(()) }
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        dispatch!(self, HostBuffer, h => h.as_slice())
    }

    /// The contents, writable; blocks until every copy from or into the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        dispatch!(self, HostBuffer, h => h.as_mut_slice())
    }

    /// A copy of the contents; blocks like [`as_slice`](Self::as_slice).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        dispatch!(self, HostBuffer, h => h.to_vec())
    }

    /// "cpu:0 name", for errors.
    pub(crate) fn describe(&self) -> String {
        dispatch!(self, HostBuffer, h => describe(h.device()))
    }
}
