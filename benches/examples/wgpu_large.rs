//! Why large buffers run slower on wgpu: copy and map timed window by
//! window at sizes around the drop (64 Mi to 256 Mi f32), and the same
//! bytes moved three other ways: views into one larger allocation, the
//! work split over four buffer pairs of a quarter each, and each op alone
//! between its own events. Prints every window's time, so the spread shows
//! beside the median.
//!
//! ```text
//! cargo run --release -p kiln-benches --features cubecl --example wgpu_large
//! ```

use std::time::Instant;

use kiln_core::{Buffer, Result, Stream};
use kiln_kernels::map::{MapOp, map};
use kiln_wgpu::Wgpu;

const MI: usize = 1 << 20;
const WINDOWS: usize = 15;

/// Per-op ms of each window of `ops` operations between two events, sorted,
/// and the host's ms to enqueue a window.
fn windows(s: &Stream<Wgpu>, ops: usize, mut op: impl FnMut(usize) -> Result<()>) -> Result<(Vec<f64>, f64)> {
    for i in 0..3 {
        op(i)?;
    }
    s.synchronize()?;
    let (mut times, mut host) = (Vec::new(), 0.0);
    for _ in 0..WINDOWS {
        let start = s.record_event()?;
        let t = Instant::now();
        for i in 0..ops {
            op(i)?;
        }
        let stop = s.record_event()?;
        host += t.elapsed().as_secs_f64() * 1e3;
        stop.synchronize()?;
        times.push(stop.elapsed_since(&start)?.as_secs_f64() * 1e3 / ops as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok((times, host / WINDOWS as f64))
}

fn show(what: &str, bytes: usize, (t, host): (Vec<f64>, f64)) {
    let gbs = |ms: f64| bytes as f64 / ms / 1e6;
    let med = t[t.len() / 2];
    let all: Vec<String> = t.iter().map(|x| format!("{x:.3}")).collect();
    println!(
        "{what:<34} median {:7.1} GB/s  best {:7.1}  worst {:7.1}  host/window {host:.3} ms  [{}]",
        gbs(med),
        gbs(t[0]),
        gbs(t[t.len() - 1]),
        all.join(" ")
    );
}

/// Host and device time of tiny launches: dependent ones (each writes the
/// buffer the next writes) and independent ones (64 outputs in turn), and
/// the host's round trips of a launch and a 4-byte read.
fn small(dev: &kiln_core::Device<Wgpu>, s: &Stream<Wgpu>) -> Result<()> {
    let x = s.upload(&[3.0f32])?;
    let mut ys = (0..64).map(|_| s.upload(&[0.0f32])).collect::<Result<Vec<_>>>()?;
    for (what, spread) in [("dependent", 1usize), ("independent", 64)] {
        let (t, host) = windows(s, 1000, |i| map(s, MapOp::Square, &x, &mut ys[i % spread]))?;
        println!(
            "launch, {what:<11}: device {:.2} us (best {:.2}), host {:.2} us a launch",
            t[t.len() / 2] * 1e3,
            t[0] * 1e3,
            host * 1e3 / 1000.0
        );
    }
    let round = |what: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        let mut v = Vec::new();
        for _ in 0..300 {
            let t = Instant::now();
            f()?;
            v.push(t.elapsed().as_secs_f64() * 1e6);
        }
        v.sort_by(f64::total_cmp);
        println!("{what:<40} median {:7.1} us, best {:7.1}", v[150], v[0]);
        Ok(())
    };
    round("synchronize, nothing enqueued", &mut || s.synchronize())?;
    round("launch + synchronize", &mut || {
        map(s, MapOp::Square, &x, &mut ys[0])?;
        s.synchronize()
    })?;
    round("read 4 bytes", &mut || x.to_vec().map(|_| ()))?;
    round("launch + read 4 bytes", &mut || {
        map(s, MapOp::Square, &x, &mut ys[0])?;
        ys[0].to_vec().map(|_| ())
    })?;
    // A graph of 100 dependent launches, replayed ten times a window.
    let one = s.upload(&[1.0f32])?;
    let mut acc = s.upload(&[0.0f32])?;
    s.begin_capture()?;
    for _ in 0..100 {
        kiln_kernels::elementwise::binary_in_place(s, kiln_kernels::elementwise::BinaryOp::Add, &mut acc, &one)?;
    }
    let graph = s.end_capture()?;
    let (t, host) = windows(s, 10, |_| graph.launch(s))?;
    println!(
        "graph of 100 launches: device {:.2} us (best {:.2}), host {:.2} us a kernel",
        t[t.len() / 2] * 1e3 / 100.0,
        t[0] * 1e3 / 100.0,
        host * 1e3 / 1000.0
    );
    let big = s.upload(&vec![1.0f32; 1024])?;
    round("reduce 1 Ki, read back", &mut || {
        kiln_kernels::reduce::reduce(s, kiln_kernels::reduce::ReduceOp::Sum, &big).map(|_| ())
    })?;
    let _ = dev;
    Ok(())
}

fn main() -> Result<()> {
    let dev = kiln_core::Device::<Wgpu>::open(0)?;
    println!("{}", dev.name());
    let s = dev.stream();
    small(&dev, &s)?;
    if std::env::args().any(|a| a == "--small") {
        return Ok(());
    }
    for &mi in &[64usize, 128, 160, 192, 256] {
        let n = mi * MI;
        let host = vec![1.5f32; n];
        let t = Instant::now();
        let x: Buffer<Wgpu, f32> = s.upload(&host)?;
        s.synchronize()?;
        let up = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = x.to_vec()?;
        let down = t.elapsed().as_secs_f64();
        assert_eq!(back.len(), n);
        println!(
            "upload {mi} Mi: {:.1} GB/s, read back {:.1} GB/s",
            4.0 * n as f64 / up / 1e9,
            4.0 * n as f64 / down / 1e9
        );
        let mut y = s.alloc::<f32>(n)?;
        show(&format!("copy {mi} Mi"), 8 * n, windows(&s, 4, |_| s.copy(&x, &mut y))?);
        show(&format!("copy {mi} Mi, one op a window"), 8 * n, windows(&s, 1, |_| s.copy(&x, &mut y))?);
        show(&format!("map {mi} Mi"), 8 * n, windows(&s, 4, |_| map(&s, MapOp::Square, &x, &mut y))?);
        drop((x, y));
        // The same bytes split over four pairs of buffers.
        let q = n / 4;
        let xs = (0..4).map(|_| s.upload(&vec![1.5f32; q])).collect::<Result<Vec<_>>>()?;
        let mut ys = (0..4).map(|_| s.alloc::<f32>(q)).collect::<Result<Vec<_>>>()?;
        show(
            &format!("copy {mi} Mi as 4 buffers"),
            8 * n,
            windows(&s, 2, |_| (0..4).try_for_each(|k| s.copy(&xs[k], &mut ys[k])))?,
        );
        show(
            &format!("map {mi} Mi as 4 buffers"),
            8 * n,
            windows(&s, 2, |_| (0..4).try_for_each(|k| map(&s, MapOp::Square, &xs[k], &mut ys[k])))?,
        );
        drop((xs, ys));
        s.synchronize()?;
        dev.trim_memory(0)?;
    }
    // Views of the first 64 Mi of buffers of 256 Mi: allocation size against footprint.
    let big: Buffer<Wgpu, f32> = s.upload(&vec![1.5f32; 256 * MI])?;
    let mut out = s.alloc::<f32>(256 * MI)?;
    for &mi in &[64usize, 128, 256] {
        let n = mi * MI;
        show(
            &format!("copy {mi} Mi of 256 Mi buffers"),
            8 * n,
            windows(&s, 4, |_| s.copy(&big.slice(..n)?, &mut out.slice_mut(..n)?))?,
        );
        show(
            &format!("map {mi} Mi of 256 Mi buffers"),
            8 * n,
            windows(&s, 4, |_| map(&s, MapOp::Square, &big.slice(..n)?, &mut out.slice_mut(..n)?))?,
        );
    }
    // Again at 256 Mi after everything, the first touch long past.
    show("copy 256 Mi again", 8 * 256 * MI, windows(&s, 4, |_| s.copy(&big, &mut out))?);
    show("map 256 Mi again", 8 * 256 * MI, windows(&s, 4, |_| map(&s, MapOp::Square, &big, &mut out))?);
    Ok(())
}
