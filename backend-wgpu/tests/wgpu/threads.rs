//! Several threads sharing one device, each with its own stream: every wait
//! that promises data on the host (a read-back, a host buffer's accessors,
//! an event's query and synchronize, stream and device synchronize) must
//! hold it even when another thread's poll or submit collected the
//! callbacks that deliver it.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use kiln_core::{Device, HostBuffer, RawHostBuffer};
use kiln_kernels::map::{map, MapOp};
use kiln_kernels::reduce::{reduce, reduce_into, ReduceOp};
use kiln_wgpu::Wgpu;
use rand::Rng;

use crate::common::{device, rng};

const THREADS: usize = 8;
const ROUNDS: usize = 100;
const LEN: usize = 3000;
const POISON: u32 = 0xa5a5_a5a5;

/// Compare `got` with `want`, naming the thread, round and first bad index.
#[track_caller]
fn check(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        let hi = (i + 4).min(got.len());
        panic!("{what}: first difference at {i}: got {:?}, want {:?}", &got[i..hi], &want[i..hi]);
    }
}

/// Compare the memory of `squares` and `total` with `want` and `want_sum`,
/// read directly, without the host buffers' own wait; `what` names each path.
///
/// # Safety
/// The copies into both host buffers have completed, and nothing writes them.
#[track_caller]
unsafe fn check_memory(
    squares: &HostBuffer<Wgpu, u32>,
    want: &[u32],
    total: &HostBuffer<Wgpu, u32>,
    want_sum: u32,
    what: &dyn Fn(&str) -> String,
) {
    // SAFETY: the copies are done and nothing writes (the caller's contract).
    let (got, got_sum) = unsafe { (squares.raw().bytes(), total.raw().bytes()) };
    // A pooled block may be longer than the buffer: its first bytes are the buffer's.
    let (got, got_sum) = (&got[..4 * squares.len()], &got_sum[..4]);
    check(bytemuck::cast_slice(got), want, &what("copy_to_host_async"));
    check(bytemuck::cast_slice(got_sum), &[want_sum], &what("copy_to_host_async of the sum"));
}

/// One thread's work: upload, square, sum, and read the squares and the sum
/// back by every path, each into memory poisoned first.
fn rounds(dev: &Device<Wgpu>, thread: usize, start: &Barrier) {
    let s = dev.create_stream(kiln_core::Priority::Normal).unwrap();
    let mut r = rng(100 + thread as u64);
    let mut squares: HostBuffer<Wgpu, u32> = dev.alloc_host(LEN).unwrap();
    let mut total: HostBuffer<Wgpu, u32> = dev.alloc_host(1).unwrap();
    start.wait();
    for round in 0..ROUNDS {
        let what = |path: &str| format!("thread {thread}, round {round}, {path}");
        let xs: Vec<u32> = (0..LEN).map(|_| r.random()).collect();
        let want: Vec<u32> = xs.iter().map(|x| x.wrapping_mul(*x)).collect();
        let want_sum = want.iter().fold(0u32, |a, b| a.wrapping_add(*b));

        let x = s.upload(&xs).unwrap();
        let mut y = s.upload(&vec![POISON; LEN]).unwrap();
        map(&s, MapOp::Square, &x, &mut y).unwrap();
        // A blocking read-back through the reduction.
        assert_eq!(reduce(&s, ReduceOp::Sum, &y).unwrap(), want_sum, "{}", what("reduce"));
        let mut sum = s.upload(&[POISON]).unwrap();
        reduce_into(&s, ReduceOp::Sum, &y, &mut sum).unwrap();

        squares.as_mut_slice().unwrap().fill(POISON);
        total.as_mut_slice().unwrap().fill(POISON);
        s.copy_to_host_async(&y, &mut squares).unwrap();
        s.copy_to_host_async(&sum, &mut total).unwrap();
        match round % 3 {
            // The host buffers' accessors wait through event synchronize.
            0 => {}
            // An event that reports complete promises the data: read the
            // memory directly, without the accessors' own wait.
            1 => {
                let done = s.record_event().unwrap();
                let t = Instant::now();
                while !done.query().unwrap() {
                    assert!(t.elapsed() < Duration::from_secs(60), "{}", what("an event never completed"));
                    std::thread::yield_now();
                }
                // SAFETY: the event was recorded after both copies and has
                // completed, and nothing else writes the host buffers.
                unsafe {
                    check_memory(&squares, &want, &total, want_sum, &|p| what(&format!("{p}, after Event::query")))
                };
            }
            // So does synchronizing the stream or the device.
            _ => {
                if round % 2 == 0 {
                    s.synchronize().unwrap();
                } else {
                    dev.synchronize().unwrap();
                }
                // SAFETY: as above, after a synchronize that covers both copies.
                unsafe {
                    check_memory(&squares, &want, &total, want_sum, &|p| what(&format!("{p}, after synchronize")))
                };
            }
        }
        check(squares.as_slice().unwrap(), &want, &what("copy_to_host_async then HostBuffer::as_slice"));
        check(total.as_slice().unwrap(), &[want_sum], &what("copy_to_host_async of the sum then HostBuffer::as_slice"));
        check(&y.to_vec().unwrap(), &want, &what("Buffer::to_vec"));
        check(&sum.to_vec().unwrap(), &[want_sum], &what("Buffer::to_vec of the sum"));
    }
}

#[test]
fn eight_threads_read_back_through_one_device() {
    let Some(dev) = device() else { return };
    let start = Barrier::new(THREADS);
    let t = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|i| {
                (
                    i,
                    scope.spawn({
                        let (dev, start) = (&dev, &start);
                        move || rounds(dev, i, start)
                    }),
                )
            })
            .collect();
        let failed: Vec<String> = workers
            .into_iter()
            .filter_map(|(i, w)| {
                w.join().err().map(|e| {
                    let text =
                        e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                    format!("thread {i}: {}", text.unwrap_or_default())
                })
            })
            .collect();
        assert!(failed.is_empty(), "{} of {THREADS} threads failed:\n{}", failed.len(), failed.join("\n"));
    });
    eprintln!("{THREADS} threads x {ROUNDS} rounds in {:?}", t.elapsed());
    dev.synchronize().unwrap();
}

/// Waits end, with data or an error, when the device goes away under them:
/// the device is destroyed while threads read back, and every thread must
/// still finish (a hang fails the test by its deadline).
#[test]
fn waits_end_when_the_device_is_destroyed() {
    let Some(dev) = device() else { return };
    let (sender, receiver) = std::sync::mpsc::channel();
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let (dev, sender) = (dev.clone(), sender.clone());
            std::thread::spawn(move || {
                let s = dev.stream();
                let mut host: HostBuffer<Wgpu, u32> = dev.alloc_host(LEN).unwrap();
                let mut outcomes = Vec::new();
                for _ in 0..20 {
                    let mut step = || -> kiln_core::Result<()> {
                        let x = s.upload(&vec![i as u32; LEN])?;
                        s.copy_to_host_async(&x, &mut host)?;
                        host.as_slice()?;
                        x.to_vec()?;
                        s.record_event()?.synchronize()
                    };
                    outcomes.push(step().is_ok());
                }
                sender.send(outcomes).unwrap();
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    dev.raw().wgpu_device().destroy();
    drop(sender);
    for _ in &workers {
        let outcomes =
            receiver.recv_timeout(Duration::from_secs(60)).expect("a wait hung after the device was destroyed");
        eprintln!("steps that succeeded: {}/{}", outcomes.iter().filter(|&&ok| ok).count(), outcomes.len());
    }
    for w in workers {
        w.join().unwrap();
    }
}
