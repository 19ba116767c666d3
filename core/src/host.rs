//! Host buffers for asynchronous copies (page-locked memory on CUDA).

use std::marker::PhantomData;
use std::sync::Mutex;

use crate::{Backend, Device, Element, Error, Event, RawDevice, RawHostBuffer, Result, Stream};

/// Host memory that streams copy to and from without blocking the host.
///
/// The buffer keeps the events of the asynchronous copies that use it:
/// [`as_slice`](Self::as_slice) waits for copies into it, and
/// [`as_mut_slice`](Self::as_mut_slice) and drop wait for every copy, so a
/// copy in flight is never raced by the host.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut host = dev.alloc_host::<u32>(4)?;
/// host.as_mut_slice()?.copy_from_slice(&[1, 2, 3, 4]);
/// let mut dev_buf = s.alloc::<u32>(4)?;
/// s.copy_to_device_async(&host, &mut dev_buf)?;   // returns at once
/// let mut back = dev.alloc_host::<u32>(4)?;
/// s.copy_to_host_async(&dev_buf, &mut back)?;
/// assert_eq!(back.as_slice()?, &[1, 2, 3, 4]);    // waits for the copy
/// # Ok(()) }
/// ```
pub struct HostBuffer<B: Backend, T: Element> {
    raw: B::HostBuffer,
    len: usize,
    device: Device<B>,
    /// Copies reading this memory (host to device), not yet known complete.
    reads: Mutex<Vec<Event<B>>>,
    /// Copies writing this memory (device to host), not yet known complete.
    writes: Mutex<Vec<Event<B>>>,
    _t: PhantomData<T>,
}

impl<B: Backend, T: Element> HostBuffer<B, T> {
    pub(crate) fn new(device: &Device<B>, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::invalid("Device::alloc_host", format!("{len} elements of {} overflow the address space", T::DTYPE))
        })?;
        let raw = device.raw().alloc_host(bytes)?;
        Ok(HostBuffer {
            raw,
            len,
            device: device.clone(),
            reads: Mutex::new(Vec::new()),
            writes: Mutex::new(Vec::new()),
            _t: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device this memory is registered with.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// The backend's host buffer.
    pub fn raw(&self) -> &B::HostBuffer {
        &self.raw
    }

    /// The contents; blocks until every copy into the buffer has completed.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait_for_device_writes()?;
        // SAFETY: every copy into the buffer has completed (waited above), and
        // new ones need `&mut self`, which this borrow excludes.
        let bytes = unsafe { self.raw.bytes() };
        Ok(&bytemuck::cast_slice(bytes)[..self.len])
    }

    /// The contents, writable; blocks until every copy from or into the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait_for_device_writes()?;
        self.wait_for_device_reads()?;
        // SAFETY: no copy from or into the buffer is in flight (waited above),
        // and new ones need a borrow of `self`, which this one excludes.
        let bytes = unsafe { self.raw.bytes_mut() };
        Ok(&mut bytemuck::cast_slice_mut(bytes)[..self.len])
    }

    /// A copy of the contents; blocks like [`as_slice`](Self::as_slice).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.as_slice()?.to_vec())
    }

    pub(crate) fn wait_for_device_writes(&self) -> Result<()> {
        drain(&self.writes)
    }

    pub(crate) fn wait_for_device_reads(&self) -> Result<()> {
        drain(&self.reads)
    }

    pub(crate) fn track_device_read(&self, stream: &Stream<B>) -> Result<()> {
        let event = stream.record_event()?;
        self.reads.lock().unwrap_or_else(|p| p.into_inner()).push(event);
        Ok(())
    }

    pub(crate) fn track_device_write(&self, stream: &Stream<B>) -> Result<()> {
        let event = stream.record_event()?;
        self.writes.lock().unwrap_or_else(|p| p.into_inner()).push(event);
        Ok(())
    }
}

fn drain<B: Backend>(events: &Mutex<Vec<Event<B>>>) -> Result<()> {
    let mut events = events.lock().unwrap_or_else(|p| p.into_inner());
    while let Some(e) = events.last() {
        e.synchronize()?;
        events.pop();
    }
    Ok(())
}

impl<B: Backend, T: Element> Drop for HostBuffer<B, T> {
    fn drop(&mut self) {
        // The memory must outlive every copy that uses it. A failure here has
        // already been noted on the device and surfaces at its next synchronize.
        let _ = self.wait_for_device_writes();
        let _ = self.wait_for_device_reads();
    }
}
