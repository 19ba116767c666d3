//! Eager streams: every operation runs on the calling thread when enqueued,
//! holding the memory it uses while it runs (see `access`).

use kiln_core::{HostArg, HostArgs, LaunchConfig, Priority, RawArg, RawStream, Result};
use rayon::prelude::*;

use std::sync::Arc;

use crate::access::{hold, Use};
use crate::memory::{allocate, check_span};
use crate::pool::Pool;
use crate::{Cpu, CpuEvent, CpuKernel, CpuMemory};

/// Copies larger than this are split over rayon's threads.
const PARALLEL_COPY_BYTES: usize = 1 << 20;

/// A CPU stream. Work runs eagerly, in program order, on the calling thread.
pub struct CpuStream {
    priority: Priority,
    device: String,
    pool: Arc<Pool>,
}

impl CpuStream {
    pub(crate) fn new(priority: Priority, device: String, pool: Arc<Pool>) -> Self {
        CpuStream { priority, device, pool }
    }
}

/// `dst.copy_from_slice(src)`, over rayon's threads for large copies.
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    if dst.len() < PARALLEL_COPY_BYTES {
        dst.copy_from_slice(src);
    } else {
        let chunk = dst.len().div_ceil(rayon::current_num_threads()).max(1 << 16);
        dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
    }
}

impl RawStream for CpuStream {
    type B = Cpu;

    fn priority(&self) -> Priority {
        self.priority
    }

    fn alloc(&self, bytes: usize) -> Result<CpuMemory> {
        allocate(CpuMemory::from_pool(&self.pool, bytes), bytes, &format!("buffer of {bytes} bytes"), &self.device)
    }

    unsafe fn write(&self, dst: &CpuMemory, dst_offset: usize, src: &[u8]) -> Result<()> {
        check_span(dst, dst_offset, src.len(), "CpuStream::write destination")?;
        let _held = hold(&mut [(dst, Use::Write)], &"CpuStream::write destination")?;
        // SAFETY: in bounds (checked) and exclusive: held above.
        copy_bytes(unsafe { dst.range_mut(dst_offset, src.len()) }, src);
        Ok(())
    }

    unsafe fn read(&self, src: &CpuMemory, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        check_span(src, src_offset, dst.len(), "CpuStream::read source")?;
        let _held = hold(&mut [(src, Use::Read)], &"CpuStream::read source")?;
        // SAFETY: in bounds (checked); nothing writes while we read: held above.
        copy_bytes(dst, unsafe { src.range(src_offset, dst.len()) });
        Ok(())
    }

    unsafe fn write_async(
        &self,
        dst: &CpuMemory,
        dst_offset: usize,
        src: &CpuMemory,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract covers bounds and exclusivity.
        unsafe { self.copy(src, src_offset, dst, dst_offset, bytes) }
    }

    unsafe fn read_async(
        &self,
        src: &CpuMemory,
        src_offset: usize,
        dst: &CpuMemory,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract covers bounds and exclusivity.
        unsafe { self.copy(src, src_offset, dst, dst_offset, bytes) }
    }

    unsafe fn copy(
        &self,
        src: &CpuMemory,
        src_offset: usize,
        dst: &CpuMemory,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        check_span(src, src_offset, bytes, "CpuStream::copy source")?;
        check_span(dst, dst_offset, bytes, "CpuStream::copy destination")?;
        let _held = hold(&mut [(src, Use::Read), (dst, Use::Write)], &"CpuStream::copy")?;
        // SAFETY: in bounds (checked); nothing else uses them (held above),
        // and the ranges do not overlap, by the caller's contract.
        let (s, d) = unsafe { (src.range(src_offset, bytes), dst.range_mut(dst_offset, bytes)) };
        copy_bytes(d, s);
        Ok(())
    }

    unsafe fn fill(&self, dst: &CpuMemory, offset: usize, bytes: usize, pattern: &[u8]) -> Result<()> {
        check_span(dst, offset, bytes, "CpuStream::fill destination")?;
        let _held = hold(&mut [(dst, Use::Write)], &"CpuStream::fill destination")?;
        // SAFETY: in bounds (checked) and exclusive: held above.
        let d = unsafe { dst.range_mut(offset, bytes) };
        crate::fill::fill(d, pattern);
        Ok(())
    }

    unsafe fn launch(&self, kernel: &CpuKernel, config: &LaunchConfig, args: &[RawArg<'_, Cpu>]) -> Result<()> {
        let mut uses = Vec::with_capacity(args.len());
        for a in args {
            if let RawArg::Buffer { buffer, offset, len, writable, .. } = a {
                check_span(buffer, *offset, *len, "CpuStream::launch buffer argument")?;
                uses.push((*buffer, if *writable { Use::Write } else { Use::Read }));
            }
        }
        let _held = hold(&mut uses, &format_args!("launch of kernel `{}`", kernel_name(kernel)))?;
        let host_args = args
            .iter()
            .map(|a| match a {
                RawArg::Buffer { buffer, offset, len, dtype, writable: true } => {
                    // SAFETY: in bounds (checked above); no other thread uses the
                    // buffer (held above), and writable ranges overlap nothing
                    // else of this launch, by the caller's contract.
                    HostArg::Output(unsafe { buffer.range_mut(*offset, *len) }, *dtype)
                }
                RawArg::Buffer { buffer, offset, len, dtype, writable: false } => {
                    // SAFETY: in bounds (checked above); no other thread writes the
                    // buffer (held above), nor this launch, by the caller's contract.
                    HostArg::Input(unsafe { buffer.range(*offset, *len) }, *dtype)
                }
                RawArg::Scalar(s) => HostArg::Scalar(*s),
            })
            .collect();
        kernel.f.call(&mut HostArgs::new(kernel_name(kernel), *config, host_args))
    }

    fn record(&self, event: &CpuEvent) -> Result<()> {
        event.mark();
        Ok(())
    }

    fn wait(&self, _event: &CpuEvent) -> Result<()> {
        // Work is eager: whatever the event marks has already run.
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

fn kernel_name(k: &CpuKernel) -> &str {
    kiln_core::RawKernel::name(k)
}

#[cfg(test)]
mod tests {
    use kiln_core::{DType, Device, Program, RawArg, RawDevice, RawStream};

    use crate::{Cpu, CpuMemory};

    // A graph holds its buffers' memory and replays into it through shared
    // handles: writes on one thread while another reads must not interleave
    // (on host memory that would be a data race). Every read sees one fill
    // whole. Without the buffers held per operation, most runs read vectors
    // that mix the two fills.
    #[test]
    fn graph_replays_and_reads_on_other_threads_do_not_interleave() {
        let dev = Device::<Cpu>::open(0).unwrap();
        let s = dev.stream();
        let n = 1 << 18;
        let mut x = s.alloc::<f32>(n).unwrap();
        let mut graphs = Vec::new();
        for v in [1.0f32, 2.0] {
            s.begin_capture().unwrap();
            s.fill(&mut x, v).unwrap();
            graphs.push(s.end_capture().unwrap());
        }
        s.fill(&mut x, 1.0).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mixed = std::thread::scope(|scope| {
            let writers: Vec<_> = (0..2)
                .map(|t| {
                    let (graphs, stop, dev) = (&graphs, &stop, &dev);
                    scope.spawn(move || {
                        let other = dev.create_stream(kiln_core::Priority::Normal).unwrap();
                        let mut i = t;
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            graphs[i % 2].launch(&other).unwrap();
                            i += 1;
                        }
                    })
                })
                .collect();
            let mut mixed = 0;
            let start = std::time::Instant::now();
            let mut reads = 0;
            while reads < 100 || start.elapsed() < std::time::Duration::from_millis(300) {
                let v = x.to_vec().unwrap();
                mixed += usize::from(v.iter().any(|&e| e != v[0]) || !(v[0] == 1.0 || v[0] == 2.0));
                reads += 1;
                if start.elapsed() > std::time::Duration::from_secs(3) {
                    break;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            writers.into_iter().for_each(|w| w.join().unwrap());
            mixed
        });
        assert_eq!(mixed, 0, "reads that mixed two replays");
    }

    fn untouched(_args: &mut kiln_core::HostArgs<'_>) -> kiln_core::Result<()> {
        Ok(())
    }

    // The typed layer never passes a range outside its buffer; these calls
    // break that contract on purpose, and the reference backend refuses them
    // instead of reading or writing past the allocation.
    #[test]
    fn ranges_past_an_allocation_are_refused() {
        let dev = Device::<Cpu>::open(0).unwrap();
        let stream = dev.raw().create_stream(kiln_core::Priority::Normal).unwrap();
        let mem = CpuMemory::new(16).unwrap();
        let other = CpuMemory::new(16).unwrap();
        let host = CpuMemory::new(16).unwrap();
        let mut out = [0u8; 8];
        // SAFETY: every call below is refused before it touches memory.
        unsafe {
            let err = stream.write(&mem, 12, &[1; 8]).unwrap_err();
            assert!(err.to_string().contains("bytes 12..20 lie outside an allocation of 16 bytes"), "{err}");
            assert!(stream.read(&mem, 9, &mut out).is_err());
            assert!(stream.copy(&mem, 0, &other, 9, 8).is_err());
            assert!(stream.copy(&mem, usize::MAX, &other, 0, 2).is_err());
            assert!(stream.write_async(&mem, 16, &host, 0, 1).is_err());
            assert!(stream.read_async(&mem, 0, &host, 12, 8).is_err());
            assert!(stream.fill(&mem, 8, 16, &[7; 4]).is_err());
        }
        let kernel = dev.raw().compile(&Program::new("untouched").host(untouched)).unwrap();
        let arg = RawArg::Buffer { buffer: &mem, offset: 8, len: 16, dtype: DType::U8, writable: true };
        let config = kiln_core::LaunchConfig::for_elements(16, 64);
        // SAFETY: refused before the kernel runs.
        let err = unsafe { stream.launch(&kernel, &config, &[arg]) }.unwrap_err();
        assert!(err.to_string().contains("bytes 8..24 lie outside an allocation of 16 bytes"), "{err}");
        // Nothing was written.
        // SAFETY: no other user of `mem`.
        assert_eq!(unsafe { mem.range(0, 16) }, &[0; 16]);
        // In-bounds calls still work, up to the last byte.
        // SAFETY: in bounds; `mem` has no other user.
        unsafe { stream.fill(&mem, 8, 8, &[7; 4]).unwrap() };
        // SAFETY: as above.
        assert_eq!(unsafe { mem.range(0, 16) }, &[0, 0, 0, 0, 0, 0, 0, 0, 7, 7, 7, 7, 7, 7, 7, 7]);
    }
}
