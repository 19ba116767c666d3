//! Graphs on every device that opens here (the CPU always, lavapipe or a
//! GPU where present): captured patterns replay like the same work run
//! directly, checked against plain-Rust references on seeded random inputs
//! with the outputs poisoned before each replay; streams fork into a capture
//! and join back through events; calls a capture cannot take are errors
//! naming the call; a graph keeps its memory alive.

use kiln::kernels::compact::{Predicate, copy_if_into};
use kiln::kernels::elementwise::{BinaryOp, binary};
use kiln::kernels::map::{MapOp, map};
use kiln::kernels::matmul::{MatmulShape, matmul};
use kiln::kernels::reduce::{ReduceOp, dot_into, reduce_into};
use kiln::kernels::scan::{ScanKind, scan};
use kiln::kernels::sort::{SortOrder, sort};
use kiln::{BackendKind, Device, Error, Priority};
use rand::Rng;

mod common;
use common::{devices, on_each_device};

/// Device 0 of every backend compiled in that opens here.
fn graph_error(e: Error, call: &str) {
    match &e {
        Error::Graph { call: c, .. } => assert!(c.contains(call), "{e} should name {call}"),
        other => panic!("expected a graph error naming {call}, got {other}"),
    }
}

/// Square, add, sort, scan, sum and compact, as the captured step computes them.
fn host_step(x: &[i32], w: &[i32]) -> (Vec<i32>, Vec<i32>, i32, Vec<i32>, u64) {
    let mut z: Vec<i32> = x.iter().zip(w).map(|(x, w)| x.wrapping_mul(*x).wrapping_add(*w)).collect();
    z.sort();
    let mut acc = 0i32;
    let scanned: Vec<i32> = z
        .iter()
        .map(|v| {
            acc = acc.wrapping_add(*v);
            acc
        })
        .collect();
    let sum = z.iter().fold(0i32, |a, v| a.wrapping_add(*v));
    let kept: Vec<i32> = z.iter().copied().filter(|v| *v > 500).collect();
    let count = kept.len() as u64;
    (z, scanned, sum, kept, count)
}

#[test]
fn a_captured_step_of_patterns_replays_like_the_host() {
    on_each_device(21, |dev, s, rng| {
        for n in [1usize, 100, 4097] {
            let x: Vec<i32> = (0..n).map(|_| rng.random_range(-40..40)).collect();
            let dx = s.upload(&x).unwrap();
            let mut dw = s.alloc::<i32>(n).unwrap();
            let (mut sq, mut z, mut scanned) = (s.alloc(n).unwrap(), s.alloc(n).unwrap(), s.alloc(n).unwrap());
            let (mut sum, mut kept, mut count) = (s.alloc(1).unwrap(), s.alloc(n).unwrap(), s.alloc::<u64>(1).unwrap());

            s.begin_capture().unwrap();
            map(s, MapOp::Square, &dx, &mut sq).unwrap();
            binary(s, BinaryOp::Add, &sq, &dw, &mut z).unwrap();
            sort(s, &mut z, SortOrder::Ascending).unwrap();
            scan(s, ScanKind::Inclusive, &z, &mut scanned).unwrap();
            reduce_into(s, ReduceOp::Sum, &z, &mut sum).unwrap();
            copy_if_into(s, &z, Predicate::GreaterThan(500), &mut kept, &mut count).unwrap();
            let graph = s.end_capture().unwrap();
            // Each of the six calls captured a step at least (a sort of one
            // element has none to capture).
            let calls = if n == 1 { 5 } else { 6 };
            assert!(graph.len() >= calls, "{graph:?} on {dev}");

            for round in 0..3 {
                // New values in w, poisoned outputs: each replay must redo every step.
                let w: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
                dw.copy_from_host(&w).unwrap();
                for out in [&mut sq, &mut z, &mut scanned, &mut kept] {
                    out.fill(i32::MIN + 7).unwrap();
                }
                sum.fill(-1).unwrap();
                count.fill(u64::MAX).unwrap();
                graph.launch(s).unwrap();
                let (hz, hscan, hsum, hkept, hcount) = host_step(&x, &w);
                let what = format!("n = {n}, round {round} on {dev}");
                assert_eq!(z.to_vec().unwrap(), hz, "sorted sums, {what}");
                assert_eq!(scanned.to_vec().unwrap(), hscan, "scan, {what}");
                assert_eq!(sum.to_vec().unwrap(), [hsum], "sum, {what}");
                assert_eq!(count.to_vec().unwrap(), [hcount], "count, {what}");
                assert_eq!(kept.to_vec().unwrap()[..hkept.len()], hkept[..], "kept, {what}");
            }
        }
    });
}

#[test]
fn nothing_runs_until_launch_and_any_stream_of_the_device_replays() {
    for dev in devices() {
        let on = dev.to_string();
        let s = dev.stream();
        let mut x = s.upload(&[1u32, 2, 3, 4]).unwrap();
        s.begin_capture().unwrap();
        assert!(s.is_capturing());
        x.fill(9).unwrap(); // the buffer's stream is the capturing one
        s.copy_to_device(&[5u32, 6], &mut x.slice_mut(2..).unwrap()).unwrap();
        let graph = s.end_capture().unwrap();
        assert!(!s.is_capturing());
        assert_eq!(graph.len(), 2, "{on}");
        assert_eq!(x.to_vec().unwrap(), [1, 2, 3, 4], "captured work ran early on {on}");

        let other = dev.create_stream(Priority::High).unwrap();
        graph.launch(&other).unwrap();
        other.synchronize().unwrap();
        assert_eq!(x.to_vec().unwrap(), [9, 9, 5, 6], "{on}");
        // The host data was captured: changing x and replaying writes it again.
        x.copy_from_host(&[0, 0, 0, 0]).unwrap();
        graph.launch(&s).unwrap();
        assert_eq!(x.to_vec().unwrap(), [9, 9, 5, 6], "{on}");

        // An empty capture is an empty graph.
        s.begin_capture().unwrap();
        let empty = s.end_capture().unwrap();
        assert!(empty.is_empty());
        empty.launch(&s).unwrap();
    }
}

#[test]
fn streams_fork_into_a_capture_and_join_back() {
    for dev in devices() {
        let on = dev.to_string();
        let (a, b) = (dev.stream(), dev.create_stream(Priority::Normal).unwrap());
        let n = 1000;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let dx = a.upload(&x).unwrap();
        let (mut left, mut right) = (a.alloc::<f32>(n).unwrap(), a.alloc::<f32>(n).unwrap());
        let mut both = a.alloc::<f32>(n).unwrap();

        a.begin_capture().unwrap();
        let fork = a.record_event().unwrap();
        assert!(fork.query().is_err(), "an event inside a graph has no state to query");
        b.wait(&fork).unwrap();
        assert!(b.is_capturing(), "b joined the capture on {on}");
        map(&a, MapOp::Square, &dx, &mut left).unwrap();
        map(&b, MapOp::Negate, &dx, &mut right).unwrap();
        // Not joined back yet: the end is refused and the capture stays open.
        graph_error(a.end_capture().unwrap_err(), "Stream::end_capture");
        graph_error(b.end_capture().unwrap_err(), "Stream::end_capture");
        let join = b.record_event().unwrap();
        a.wait(&join).unwrap();
        binary(&a, BinaryOp::Add, &left, &right, &mut both).unwrap();
        let graph = a.end_capture().unwrap();
        assert!(!b.is_capturing(), "b runs its work again on {on}");

        both.fill(f32::NAN).unwrap();
        graph.launch(&a).unwrap();
        let want: Vec<f32> = x.iter().map(|v| v * v - v).collect();
        assert_eq!(both.to_vec().unwrap(), want, "{on}");
        // The event marked a point inside the ended capture.
        graph_error(b.wait(&fork).unwrap_err(), "Stream::wait");
        graph_error(join.synchronize().unwrap_err(), "Event::synchronize");
        // Recorded again outside a capture, it is an ordinary event.
        a.record(&fork).unwrap();
        b.wait(&fork).unwrap();
        fork.synchronize().unwrap();
    }
}

#[test]
fn calls_a_capture_cannot_take_are_errors_naming_the_call() {
    for dev in devices() {
        let on = dev.to_string();
        let s = dev.stream();
        let mut x = s.upload(&[1.0f32; 8]).unwrap();
        graph_error(s.end_capture().unwrap_err(), "Stream::end_capture");
        let outside = s.record_event().unwrap();
        let mut host = dev.alloc_host::<f32>(8).unwrap();

        // Each refused call enqueues nothing and spoils the capture: its end
        // names the call and makes no graph, and the stream runs work again.
        type Refused<'a> = Box<dyn Fn(&mut kiln::Buffer<f32>, &mut kiln::HostBuffer<f32>) -> kiln::Result<()> + 'a>;
        let calls: Vec<(&str, Refused)> = vec![
            ("Stream::copy_to_host", Box::new(|x, _| x.to_vec().map(drop))),
            ("Stream::synchronize", Box::new(|_, _| s.synchronize())),
            ("Stream::wait", Box::new(|_, _| s.wait(&outside))),
            ("Stream::copy_to_host_async", Box::new(|x, h| s.copy_to_host_async(x, h))),
            ("Stream::copy_to_device_async", Box::new(|x, h| s.copy_to_device_async(h, x))),
            ("Stream::copy_to_host", Box::new(|x, _| kiln::kernels::reduce::reduce(&s, ReduceOp::Sum, x).map(drop))),
        ];
        for (call, refused) in calls {
            s.begin_capture().unwrap();
            x.fill(5.0).unwrap();
            graph_error(refused(&mut x, &mut host).unwrap_err(), call);
            let e = s.end_capture().unwrap_err();
            assert!(e.to_string().contains(call), "{e} should name {call}, on {on}");
            graph_error(e, "Stream::end_capture");
            assert!(!s.is_capturing(), "{call} on {on}");
            assert_eq!(x.to_vec().unwrap(), [1.0; 8], "{call} on {on}: nothing ran");
        }

        // Calls that are refused without spoiling it.
        s.begin_capture().unwrap();
        graph_error(s.begin_capture().unwrap_err(), "Stream::begin_capture");
        let inside = s.record_event().unwrap();
        graph_error(inside.query().unwrap_err(), "Event::query");
        graph_error(inside.elapsed_since(&outside).unwrap_err(), "Event::elapsed_since");
        x.fill(2.0).unwrap();
        let graph = s.end_capture().unwrap();
        assert_eq!(graph.len(), 1);
        graph.launch(&s).unwrap();
        assert_eq!(x.to_vec().unwrap(), [2.0; 8]);

        // A graph launched inside a capture spoils it too.
        s.begin_capture().unwrap();
        graph_error(graph.launch(&s).unwrap_err(), "Graph::launch");
        graph_error(s.end_capture().unwrap_err(), "Stream::end_capture");

        // A stream of another device (a second open is another device to kiln).
        let other = Device::open(dev.kind(), 0).unwrap();
        match graph.launch(&other.stream()).unwrap_err() {
            Error::DeviceMismatch { what, .. } => assert_eq!(what, "Graph::launch"),
            e => panic!("expected a device mismatch, got {e}"),
        }
        if dev.kind() != BackendKind::Cpu {
            let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
            assert!(matches!(graph.launch(&cpu.stream()), Err(Error::DeviceMismatch { .. })));
        }
    }
}

#[test]
fn a_graph_keeps_its_memory_until_it_is_dropped() {
    for dev in devices() {
        let on = dev.to_string();
        let s = dev.stream();
        let n = 1 << 16;
        let before = dev.memory_stats().unwrap().used;
        let mut out = s.alloc::<u32>(1).unwrap();
        let graph = {
            let mut tmp = s.alloc::<u32>(n).unwrap();
            s.begin_capture().unwrap();
            tmp.fill(3).unwrap();
            reduce_into(&s, ReduceOp::Sum, &tmp, &mut out).unwrap();
            s.end_capture().unwrap()
            // tmp dropped here: the graph holds its memory.
        };
        let held = dev.memory_stats().unwrap().used;
        assert!(held >= before + 4 * n as u64, "{held} bytes used, {before} before, on {on}");
        for _ in 0..2 {
            out.fill(0).unwrap();
            graph.launch(&s).unwrap();
            assert_eq!(out.to_vec().unwrap(), [3 * n as u32], "{on}");
        }
        drop(graph);
        s.synchronize().unwrap();
        let after = dev.memory_stats().unwrap().used;
        assert!(after < before + 4 * n as u64, "{after} bytes used after the drop, on {on}");
    }
}

/// Jacobi iterations for a diagonally dominant system, one step captured
/// (a product, three elementwise kernels and a dot), replayed against the
/// same iteration on the host.
#[test]
fn a_solver_step_replayed_converges_like_the_host() {
    on_each_device(5, |dev, s, rng| {
        let n = 64;
        let mut a: Vec<f32> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for i in 0..n {
            a[i * n + i] = n as f32 * 2.0;
        }
        let b: Vec<f32> = (0..n).map(|_| rng.random_range(-10.0..10.0)).collect();
        let dinv: Vec<f32> = (0..n).map(|i| 1.0 / a[i * n + i]).collect();
        let (da, db, dd) = (s.upload(&a).unwrap(), s.upload(&b).unwrap(), s.upload(&dinv).unwrap());
        let mut x = s.alloc_zeroed::<f32>(n).unwrap();
        let (mut ax, mut r, mut step) = (s.alloc(n).unwrap(), s.alloc(n).unwrap(), s.alloc(n).unwrap());
        let mut norm = s.alloc::<f32>(1).unwrap();
        let mut next = s.alloc::<f32>(n).unwrap();

        s.begin_capture().unwrap();
        matmul(s, &da, &x, &mut ax, MatmulShape::new(n, 1, n)).unwrap();
        binary(s, BinaryOp::Sub, &db, &ax, &mut r).unwrap();
        binary(s, BinaryOp::Mul, &r, &dd, &mut step).unwrap();
        binary(s, BinaryOp::Add, &x, &step, &mut next).unwrap();
        s.copy(&next, &mut x).unwrap();
        dot_into(s, &r, &r, &mut norm).unwrap();
        let graph = s.end_capture().unwrap();

        let mut hx = vec![0.0f32; n];
        let mut hnorm = 0.0f32;
        for _ in 0..20 {
            graph.launch(s).unwrap();
            let r: Vec<f32> = (0..n).map(|i| b[i] - (0..n).map(|j| a[i * n + j] * hx[j]).sum::<f32>()).collect();
            hnorm = r.iter().map(|v| v * v).sum();
            hx = (0..n).map(|i| hx[i] + r[i] * dinv[i]).collect();
        }
        let got = x.to_vec().unwrap();
        for (i, (g, w)) in got.iter().zip(&hx).enumerate() {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "x[{i}] = {g}, host {w}, on {dev}");
        }
        let dnorm = norm.to_vec().unwrap()[0];
        assert!((dnorm - hnorm).abs() <= 1e-3 * (1.0 + hnorm), "residual {dnorm} vs {hnorm} on {dev}");
        assert!(hnorm < 1e-6, "the iteration converged: {hnorm}");
    });
}

/// Products of every strategy the device offers, captured and replayed with
/// new inputs each time (on CUDA the vendor strategy is cuBLAS, captured
/// into the graph), against the host's product.
#[test]
fn captured_products_of_every_strategy_match_the_host() {
    use kiln::kernels::matmul::{MatmulStrategy, matmul_with};
    on_each_device(9, |dev, s, rng| {
        let (m, n, k) = (33, 70, 45);
        let mut da = s.alloc::<f32>(m * k).unwrap();
        let mut db = s.alloc::<f32>(k * n).unwrap();
        let mut dc = s.alloc::<f32>(m * n).unwrap();
        for strategy in [MatmulStrategy::Tiled, MatmulStrategy::Naive, MatmulStrategy::Vendor] {
            s.begin_capture().unwrap();
            let captured = matmul_with(s, strategy, &da, &db, &mut dc, MatmulShape::new(m, n, k));
            let graph = s.end_capture();
            if let Err(e) = captured {
                assert!(matches!(e, Error::Unsupported { .. }), "{strategy:?} on {dev}: {e}");
                assert!(graph.is_ok(), "an unsupported product records nothing and spoils nothing");
                continue;
            }
            let graph = graph.unwrap();
            for round in 0..2 {
                let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
                let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
                da.copy_from_host(&a).unwrap();
                db.copy_from_host(&b).unwrap();
                dc.fill(f32::NAN).unwrap();
                graph.launch(s).unwrap();
                let got = dc.to_vec().unwrap();
                for i in 0..m {
                    for j in 0..n {
                        let want: f32 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                        let g = got[i * n + j];
                        assert!(
                            (g - want).abs() <= 1e-4 * (1.0 + want.abs()),
                            "{strategy:?} round {round} c[{i}][{j}] = {g}, host {want}, on {dev}"
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn each_captured_launch_keeps_its_own_scalars_and_views() {
    // Forty axpys with forty alphas into views at offsets that bind in
    // place and at one that does not (a u8 view one byte in), fills and
    // copies between them: replayed twice into poisoned outputs.
    on_each_device(0x6772_6170, |dev, s, rng| {
        let on = dev.to_string();
        let n = 1000;
        let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-4.0f32..4.0)).collect();
        let alphas: Vec<f32> = (0..40).map(|k| k as f32 * 0.25 - 3.0).collect();
        let x = s.upload(&xs).unwrap();
        let mut y = s.upload(&vec![f32::NAN; n]).unwrap();
        let mut z = s.upload(&vec![f32::NAN; n]).unwrap();
        let mut bytes = s.upload(&[0xeeu8; 65]).unwrap();
        s.begin_capture().unwrap();
        y.fill(1.0).unwrap();
        for (k, &a) in alphas.iter().enumerate() {
            let at = (k % 4) * 64;
            let mut view = y.slice_mut(at..).unwrap();
            kiln::kernels::elementwise::axpy_in_place(s, a, &x.slice(..n - at).unwrap(), &mut view).unwrap();
        }
        s.copy(&y, &mut z).unwrap();
        bytes.slice_mut(1..).unwrap().fill(7).unwrap();
        let graph = s.end_capture().unwrap();
        // A view one f32 in binds through a temporary on wgpu.
        s.begin_capture().unwrap();
        kiln::kernels::map::map(s, MapOp::Negate, &z.slice(1..).unwrap(), &mut y.slice_mut(1..).unwrap()).unwrap();
        let negate = s.end_capture().unwrap();

        let mut want_z = vec![1.0f32; n];
        for (k, &a) in alphas.iter().enumerate() {
            let at = (k % 4) * 64;
            for i in at..n {
                want_z[i] += a * xs[i - at];
            }
        }
        let mut want_y: Vec<f32> = want_z.iter().map(|v| -v).collect();
        want_y[0] = want_z[0];
        let mut want_bytes = vec![7u8; 65];
        want_bytes[0] = 0xee;
        for replay in 0..2 {
            y.copy_from_host(&vec![f32::NAN; n]).unwrap();
            z.copy_from_host(&vec![f32::NAN; n]).unwrap();
            bytes.copy_from_host(&[0xeeu8; 65]).unwrap();
            graph.launch(s).unwrap();
            negate.launch(s).unwrap();
            let (got_y, got_z) = (y.to_vec().unwrap(), z.to_vec().unwrap());
            for i in 0..n {
                let close = |g: f32, w: f32| (g - w).abs() <= 1e-4 * (1.0 + w.abs());
                assert!(close(got_z[i], want_z[i]), "z[{i}] {} != {} on {on}, replay {replay}", got_z[i], want_z[i]);
                assert!(close(got_y[i], want_y[i]), "y[{i}] {} != {} on {on}, replay {replay}", got_y[i], want_y[i]);
            }
            assert_eq!(bytes.to_vec().unwrap(), want_bytes, "{on}, replay {replay}");
        }
    });
}
