//! Buffer memory across streams: a buffer used on a stream other than its
//! own keeps its memory until that use has run, however early it is dropped;
//! errors kept from `Drop` surface at the next synchronize, not in a copy.
//!
//! Each scenario busies a second stream with a kernel that spins for tens of
//! milliseconds, queues work that uses a buffer behind it, drops the buffer
//! and allocates more on the buffer's own stream, which the pool serves from
//! the memory just freed. Without the tracking, the queued work reads or
//! writes the new buffers (the read comes back as 49.0, the square of the
//! -7.0 the new buffer was filled with).

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;
use kiln_conformance::{assert_matches, Expected, Tolerance};
use kiln_core::{Args, Buffer, Device, Error, Event, Kernel, LaunchConfig, Priority, Stream, View, ViewMut};
use kiln_cuda::Cuda;
use rand::seq::SliceRandom;
use rand::Rng;

use super::common::*;

/// One thread spins until `ns` nanoseconds of the GPU's global timer have passed.
const SPIN: &str = r#"
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"#;

/// `y[i] = x[i] * x[i]` for i < n, grid-stride.
const SQUARE: &str = r#"
extern "C" __global__ void square(const float* x, float* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = x[i] * x[i];
    }
}
"#;

/// What the buffers given to the pool again are filled with.
const FRESH: f32 = -7.0;

/// Run `scenario` with its busy stream spinning for `ms` milliseconds, 100
/// first, longer while the stream finished before the host had done its part
/// (a loaded machine). `scenario` checks its results on every run and returns
/// whether the work it queued was still pending when it had dropped and
/// allocated again, i.e. whether the hazard was really set up.
#[track_caller]
fn with_busy_stream(what: &str, mut scenario: impl FnMut(u64) -> bool) {
    for ms in [100, 400, 1600] {
        if scenario(ms) {
            return;
        }
        eprintln!("{what}: the busy stream finished within {ms} ms, before the host had dropped and allocated; again");
    }
    panic!("{what}: the busy stream always finished before the host had dropped and allocated");
}

/// The two kernels, compiled and run once before a scenario: loading a
/// module may wait for the device.
struct Kernels {
    spin: Kernel<Cuda>,
    square: Kernel<Cuda>,
}

impl Kernels {
    fn new(dev: &Device<Cuda>) -> Self {
        let k = Kernels { spin: kernel(dev, "spin", SPIN), square: kernel(dev, "square", SQUARE) };
        let s = dev.stream();
        let x = s.upload(&[3.0f32]).unwrap();
        let mut y = s.alloc::<f32>(1).unwrap();
        k.square(&s, &x, &mut y);
        k.busy(&s, 0);
        assert_eq!(y.to_vec().unwrap(), vec![9.0]);
        k
    }

    /// Keep `s` busy for `ms` milliseconds of device time.
    fn busy(&self, s: &Stream<Cuda>, ms: u64) {
        let args = Args::new().arg(ms * 1_000_000);
        // SAFETY: the kernel touches no memory.
        unsafe { s.launch(&self.spin, LaunchConfig::new(1, 1), args) }.unwrap();
    }

    /// `y = x * x` on `s`; a kernel launch with two buffer arguments (views included).
    fn square(&self, s: &Stream<Cuda>, x: &impl View<Cuda, f32>, y: &mut impl ViewMut<Cuda, f32>) {
        let n = x.view().len();
        assert_eq!(y.view().len(), n);
        let cfg = LaunchConfig::for_elements(n.min(1 << 16), 256);
        let args = Args::new().arg(x.view()).arg(y.view_mut()).arg(n as u64);
        // SAFETY: the kernel reads x[0..n) and writes y[0..n), both n long.
        unsafe { s.launch(&self.square, cfg, args) }.unwrap();
    }
}

#[track_caller]
fn assert_all(what: &str, got: &[f32], value: f32) {
    assert_matches(what, &Expected::new(vec![value; got.len()], Tolerance::Exact), got);
}

fn squares(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * v).collect()
}

/// The reported case: `x` uploaded on the default stream, squared into `y` on
/// a busy stream, dropped, and its memory handed to `z`, filled with -7.0.
#[test]
fn a_buffer_read_on_a_busy_stream_keeps_its_memory_after_drop() {
    let Some(dev) = gpu() else { return };
    let k = Kernels::new(&dev);
    let n = (1 << 20) + 3;
    let data = random_f32(11, n);
    with_busy_stream("x read on s2", |ms| {
        let s2 = dev.create_stream(Priority::Normal).unwrap();
        let x = dev.upload(&data).unwrap();
        let mut y = s2.alloc::<f32>(n).unwrap();
        s2.fill(&mut y, POISON_F32).unwrap();
        k.busy(&s2, ms);
        k.square(&s2, &x, &mut y);
        let squared = s2.record_event().unwrap();
        let x_at = x.raw().device_ptr();
        drop(x);
        let mut z = dev.alloc::<f32>(n).unwrap();
        z.fill(FRESH).unwrap();
        let z_at = z.raw().device_ptr();
        let pending = !squared.query().unwrap();
        s2.synchronize().unwrap();
        let want = Expected::new(squares(&data), Tolerance::Exact);
        assert_matches("y = x * x, x dropped while queued", &want, &y.to_vec().unwrap());
        assert_all("z, filled after x was dropped", &z.to_vec().unwrap(), FRESH);
        println!("z {} x's memory", if z_at == x_at { "reused" } else { "did not reuse" });
        pending
    });
}

/// How a busy stream writes a buffer allocated on another stream.
#[derive(Debug, Clone, Copy)]
enum Writer {
    Fill,
    Copy,
    CopyFromHostAsync,
    Kernel,
}

/// A write queued on a busy stream to a buffer of the default stream, which
/// is dropped at once: the buffers allocated after it on the default stream
/// must not receive the write.
#[test]
fn a_write_queued_on_a_busy_stream_lands_before_the_memory_is_reused() {
    let Some(dev) = gpu() else { return };
    let k = Kernels::new(&dev);
    let home = dev.stream();
    let n = 300_007;
    for (i, writer) in [Writer::Fill, Writer::Copy, Writer::CopyFromHostAsync, Writer::Kernel].into_iter().enumerate() {
        let data = random_f32(20 + i as u64, n);
        let mut host = dev.alloc_host::<f32>(n).unwrap();
        host.as_mut_slice().unwrap().copy_from_slice(&data);
        with_busy_stream(&format!("{writer:?}"), |ms| {
            let s2 = dev.create_stream(Priority::High).unwrap();
            let src = s2.upload(&data).unwrap();
            // Not synchronized: the first use on s2 must also wait for the allocation.
            let mut b = home.alloc::<f32>(n).unwrap();
            k.busy(&s2, ms);
            match writer {
                Writer::Fill => s2.fill(&mut b, 5.0).unwrap(),
                Writer::Copy => s2.copy(&src, &mut b).unwrap(),
                Writer::CopyFromHostAsync => s2.copy_to_device_async(&host, &mut b).unwrap(),
                Writer::Kernel => k.square(&s2, &src, &mut b),
            }
            let written = s2.record_event().unwrap();
            let b_at = b.raw().device_ptr();
            drop(b);
            let mut fresh: Vec<Buffer<Cuda, f32>> = Vec::new();
            for _ in 0..4 {
                let mut z = home.alloc::<f32>(n).unwrap();
                z.fill(FRESH).unwrap();
                fresh.push(z);
            }
            let pending = !written.query().unwrap();
            s2.synchronize().unwrap();
            let reused = fresh.iter().any(|z| z.raw().device_ptr() == b_at);
            for (j, z) in fresh.iter().enumerate() {
                assert_all(&format!("{writer:?}: buffer {j} allocated after the drop"), &z.to_vec().unwrap(), FRESH);
            }
            println!(
                "{writer:?}: a later buffer {} the dropped one's memory",
                if reused { "reused" } else { "did not reuse" }
            );
            pending
        });
    }
}

/// Many buffers of one stream, read and written (whole and through views) on
/// four busy streams, dropped in random order while that work is queued,
/// with allocations on the home stream in between.
#[test]
fn buffers_dropped_in_random_order_while_used_on_other_streams() {
    let Some(dev) = gpu() else { return };
    let k = Kernels::new(&dev);
    let seed = 0x11fe;
    let mut rng = rng(seed);
    let home = dev.stream();
    let streams: Vec<Stream<Cuda>> = (0..4).map(|_| dev.create_stream(Priority::Normal).unwrap()).collect();
    const K: usize = 48;
    let data: Vec<Vec<f32>> = (0..K).map(|i| random_f32(seed + i as u64, rng.random_range(1..50_000usize))).collect();
    with_busy_stream(&format!("seed {seed:#x}"), |ms| {
        let mut inputs = Vec::new();
        let mut temps = Vec::new();
        for d in &data {
            inputs.push(Some(home.upload(d).unwrap()));
            // Not synchronized (for the last ones): a first use elsewhere waits for the allocation.
            temps.push(Some(home.alloc::<f32>(d.len()).unwrap()));
        }
        let mut results = Vec::new();
        for (i, d) in data.iter().enumerate() {
            let s = &streams[i % streams.len()];
            let mut r = s.alloc::<f32>(d.len()).unwrap();
            s.fill(&mut r, POISON_F32).unwrap();
            results.push(r);
        }
        for s in &streams {
            k.busy(s, ms / 2 + rng.random_range(0..ms / 2));
        }
        for i in 0..K {
            let s = &streams[i % streams.len()];
            let (x, t, r) = (inputs[i].as_ref().unwrap(), temps[i].as_mut().unwrap(), &mut results[i]);
            let len = data[i].len();
            if i % 2 == 0 || len < 2 {
                k.square(s, x, t);
                s.copy(t, r).unwrap();
            } else {
                // Views: x[1..] squared into t[..len-1], then into r[1..]; r[0] keeps the poison.
                k.square(s, &x.slice(1..).unwrap(), &mut t.slice_mut(..len - 1).unwrap());
                s.copy(&t.slice(..len - 1).unwrap(), &mut r.slice_mut(1..).unwrap()).unwrap();
            }
        }
        let queued: Vec<Event<Cuda>> = streams.iter().map(|s| s.record_event().unwrap()).collect();
        let mut order: Vec<(bool, usize)> = (0..K).flat_map(|i| [(false, i), (true, i)]).collect();
        order.shuffle(&mut rng);
        let mut fresh = Vec::new();
        for (temp, i) in order {
            if temp {
                temps[i] = None;
            } else {
                inputs[i] = None;
            }
            if rng.random_bool(0.5) {
                let mut z = home.alloc::<f32>(rng.random_range(1..50_000usize)).unwrap();
                z.fill(FRESH).unwrap();
                fresh.push(z);
            }
        }
        let pending = queued.iter().any(|e| !e.query().unwrap());
        for s in &streams {
            s.synchronize().unwrap();
        }
        for (i, d) in data.iter().enumerate() {
            let want = if i % 2 == 0 || d.len() < 2 {
                squares(d)
            } else {
                std::iter::once(POISON_F32).chain(squares(&d[1..])).collect()
            };
            let what = format!("result {i} of {} elements (seed {seed:#x}, {ms} ms)", d.len());
            assert_matches(&what, &Expected::new(want, Tolerance::Exact), &results[i].to_vec().unwrap());
        }
        for (j, z) in fresh.iter().enumerate() {
            let what = format!("buffer {j} allocated among the drops (seed {seed:#x}, {ms} ms)");
            assert_all(&what, &z.to_vec().unwrap(), FRESH);
        }
        pending
    });
}

/// Make the next free of a device buffer fail: cudarc keeps the errors met in
/// its own `Drop`s (a failed `cuStreamDestroy`, say) and hands them to the
/// next call that makes the context current, which the free is.
fn fail_next_free(dev: &Device<Cuda>) {
    dev.raw().context().record_err(Err::<(), _>(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE)));
}

/// An error kept from an earlier `Drop` is reported by the next explicit
/// synchronize, once; copies in between return their data.
#[test]
fn an_error_kept_from_drop_waits_for_synchronize() {
    let Some(dev) = gpu() else { return };
    let n = 4099;
    let data = random_f32(31, n);
    for by_stream in [false, true] {
        let victim = dev.alloc::<f32>(16).unwrap();
        fail_next_free(&dev);
        drop(victim);
        let x = dev.upload(&data).expect("an upload after a failed free");
        let mut back = vec![POISON_F32; n];
        x.copy_to_host(&mut back).expect("a copy to the host after a failed free");
        assert_matches("copied back", &Expected::new(data.clone(), Tolerance::Bits), &back);
        assert_matches("to_vec", &Expected::new(data.clone(), Tolerance::Bits), &x.to_vec().unwrap());
        let reported = if by_stream { dev.stream().synchronize() } else { dev.synchronize() };
        match reported {
            Err(e @ Error::Driver { .. }) => {
                let text = e.to_string();
                assert!(text.contains("device buffer of 64 bytes"), "{text}");
                println!(
                    "reported by {}: {text}",
                    if by_stream { "Stream::synchronize" } else { "Device::synchronize" }
                );
            }
            other => panic!("synchronize after a failed free gave {other:?}"),
        }
        dev.synchronize().expect("the kept error is reported once");
    }
}
