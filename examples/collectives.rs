//! Every NCCL collective on every GPU found, checked and timed, and copies
//! between each pair of GPUs: the multi-GPU bench.
//!
//! ```text
//! cargo run --release --example collectives                  # one process drives every GPU
//! cargo run --release --example collectives -- --processes   # one process per GPU, joined by a unique id
//! cargo run --release --example collectives -- --json out.json
//! ```
//!
//! Sizes run from 4 B to 1 GiB by factors of 4 (`--max-bytes` lowers the
//! top). Each collective's result is checked against the host once, after
//! the warm-up; then `iters` calls run back to back between two full
//! synchronizations, timed on the host clock as NCCL's own tests time them.
//! The bandwidths are theirs too: `algbw = size / time`, and the bus
//! bandwidth `busbw = algbw * factor` with factor `2 (n - 1) / n` for
//! all-reduce, `(n - 1) / n` for all-gather and reduce-scatter (whose size is
//! the gathered or scattered whole), 1 for broadcast and reduce.
//!
//! Without CUDA or NCCL it says so and exits successfully: nothing to run.

use std::process::ExitCode;

#[cfg(feature = "cuda")]
mod bench {
    use std::time::Instant;

    use kiln::nccl::{Comm, Comms, ReduceOp, UniqueId};
    use kiln::typed::{Buffer, Device, Stream};
    use kiln::{Cuda, Error, Result};

    /// The collectives, in report order.
    pub const KINDS: [&str; 5] = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"];

    /// One measured size of one collective.
    pub struct Row {
        pub kind: &'static str,
        pub bytes: usize,
        pub seconds: f64,
        pub ranks: usize,
    }

    impl Row {
        fn factor(&self) -> f64 {
            let n = self.ranks as f64;
            match self.kind {
                "all_reduce" => 2.0 * (n - 1.0) / n,
                "all_gather" | "reduce_scatter" => (n - 1.0) / n,
                _ => 1.0,
            }
        }

        pub fn algbw(&self) -> f64 {
            self.bytes as f64 / self.seconds / 1e9
        }

        pub fn busbw(&self) -> f64 {
            self.algbw() * self.factor()
        }
    }

    /// Rank `r`'s element `i`: small integers, so every sum is exact.
    fn value(i: usize, r: usize) -> f32 {
        ((i % 64) + r) as f32
    }

    /// Calls per timing at `bytes`: many for small messages, a few for large.
    pub fn iters(bytes: usize) -> usize {
        ((256usize << 20) / bytes.max(1)).clamp(5, 100)
    }

    /// The sizes from 4 B to `max` by factors of 4.
    pub fn sizes(max: usize) -> Vec<usize> {
        (0..).map(|k| 4usize << (2 * k)).take_while(|&s| s <= max).collect()
    }

    /// Elements each rank sends and receives for `kind` at a total of
    /// `bytes` over `n` ranks; `None` where the size does not divide.
    fn counts(kind: &str, bytes: usize, n: usize) -> Option<(usize, usize)> {
        let total = bytes / 4;
        match kind {
            "all_gather" => (total.is_multiple_of(n) && total >= n).then(|| (total / n, total)),
            "reduce_scatter" => (total.is_multiple_of(n) && total >= n).then(|| (total, total / n)),
            _ => Some((total, total)),
        }
    }

    /// What rank `r` of `n` must hold after `kind`, for element `i`; `None`
    /// where nothing is defined (a reduce's other ranks).
    fn expected(kind: &str, i: usize, r: usize, n: usize, recv: usize) -> Option<f32> {
        match kind {
            "all_reduce" => Some((0..n).map(|q| value(i, q)).sum()),
            "reduce" => (r == 0).then(|| (0..n).map(|q| value(i, q)).sum()),
            "broadcast" => Some(value(i, 0)),
            "all_gather" => Some(value(i % (recv / n), i / (recv / n))),
            "reduce_scatter" => Some((0..n).map(|q| value(r * recv + i, q)).sum()),
            _ => None,
        }
    }

    /// Check rank `r`'s result.
    fn check(kind: &str, r: usize, n: usize, got: &[f32]) -> Result<()> {
        for (i, &g) in got.iter().enumerate() {
            if let Some(want) = expected(kind, i, r, n, got.len())
                && g != want
            {
                return Err(Error::invalid(
                    "collectives",
                    format!("{kind} of {} elements: rank {r} holds {g} at {i}, the host expects {want}", got.len()),
                ));
            }
        }
        Ok(())
    }

    /// One rank's buffers for one collective and size.
    pub struct Part {
        stream: Stream<Cuda>,
        send: Buffer<Cuda, f32>,
        recv: Buffer<Cuda, f32>,
    }

    fn part(device: &Device<Cuda>, r: usize, send: usize, recv: usize) -> Result<Part> {
        let stream = device.stream();
        let host: Vec<f32> = (0..send).map(|i| value(i, r)).collect();
        let send = stream.upload(&host)?;
        let mut recv = stream.alloc::<f32>(recv)?;
        recv.fill(f32::NAN)?;
        Ok(Part { stream, send, recv })
    }

    /// Enqueue `kind` for every rank driven by this process.
    pub trait Ranks {
        fn ranks(&self) -> (usize, Vec<usize>);
        fn enqueue(&self, kind: &str, parts: &mut [Part]) -> Result<()>;
    }

    impl Ranks for Comms {
        fn ranks(&self) -> (usize, Vec<usize>) {
            (self.size(), (0..self.size()).collect())
        }

        fn enqueue(&self, kind: &str, parts: &mut [Part]) -> Result<()> {
            let streams: Vec<Stream<Cuda>> = parts.iter().map(|p| p.stream.clone()).collect();
            let (send, mut recv): (Vec<_>, Vec<_>) =
                parts.iter_mut().map(|p| (p.send.view(), p.recv.view_mut())).unzip();
            match kind {
                "all_reduce" => self.all_reduce(&streams, &send, &mut recv, ReduceOp::Sum),
                "reduce" => self.reduce(&streams, &send, &mut recv, ReduceOp::Sum, 0),
                "broadcast" => self.broadcast(&streams, &send, &mut recv, 0),
                "all_gather" => self.all_gather(&streams, &send, &mut recv),
                _ => self.reduce_scatter(&streams, &send, &mut recv, ReduceOp::Sum),
            }
        }
    }

    impl Ranks for Comm {
        fn ranks(&self) -> (usize, Vec<usize>) {
            (self.size(), vec![self.rank()])
        }

        fn enqueue(&self, kind: &str, parts: &mut [Part]) -> Result<()> {
            let p = &mut parts[0];
            match kind {
                "all_reduce" => self.all_reduce(&p.stream, &p.send, &mut p.recv, ReduceOp::Sum),
                "reduce" => self.reduce(&p.stream, &p.send, &mut p.recv, ReduceOp::Sum, 0),
                "broadcast" => self.broadcast(&p.stream, &p.send, &mut p.recv, 0),
                "all_gather" => self.all_gather(&p.stream, &p.send, &mut p.recv),
                _ => self.reduce_scatter(&p.stream, &p.send, &mut p.recv, ReduceOp::Sum),
            }
        }
    }

    /// Check, then time, every collective at every size on `comms`, whose
    /// ranks this process drives on `devices` (one per rank it drives).
    pub fn run(comms: &impl Ranks, devices: &[Device<Cuda>], max: usize) -> Result<Vec<Row>> {
        let (n, mine) = comms.ranks();
        let mut rows = Vec::new();
        for kind in KINDS {
            for bytes in sizes(max) {
                let Some((send, recv)) = counts(kind, bytes, n) else { continue };
                let mut parts =
                    mine.iter().zip(devices).map(|(&r, d)| part(d, r, send, recv)).collect::<Result<Vec<_>>>()?;
                comms.enqueue(kind, &mut parts)?;
                for (p, &r) in parts.iter().zip(&mine) {
                    check(kind, r, n, &p.recv.to_vec()?)?;
                }
                let sync = |parts: &[Part]| parts.iter().try_for_each(|p| p.stream.synchronize());
                for _ in 0..3 {
                    comms.enqueue(kind, &mut parts)?;
                }
                sync(&parts)?;
                let count = iters(bytes);
                let t0 = Instant::now();
                for _ in 0..count {
                    comms.enqueue(kind, &mut parts)?;
                }
                sync(&parts)?;
                rows.push(Row { kind, bytes, seconds: t0.elapsed().as_secs_f64() / count as f64, ranks: n });
            }
        }
        Ok(rows)
    }

    /// Copies from device `src` to device `dst` at every size: checked, then
    /// timed (GB/s of bytes copied).
    pub fn peer(devices: &[Device<Cuda>], src: usize, dst: usize, max: usize) -> Result<Vec<(usize, f64)>> {
        let mut out = Vec::new();
        for bytes in sizes(max).into_iter().filter(|&b| b >= 4096) {
            let n = bytes / 4;
            let host: Vec<f32> = (0..n).map(|i| value(i, src)).collect();
            let x = devices[src].upload(&host)?;
            let s = devices[dst].stream();
            let mut y = s.alloc::<f32>(n)?;
            y.fill(f32::NAN)?;
            devices[src].synchronize()?;
            s.copy_from_peer(&x, &mut y)?;
            if y.to_vec()? != host {
                return Err(Error::invalid(
                    "collectives",
                    format!("peer copy {src} -> {dst} of {bytes} bytes differs"),
                ));
            }
            let count = iters(bytes);
            s.synchronize()?;
            let t0 = Instant::now();
            for _ in 0..count {
                s.copy_from_peer(&x, &mut y)?;
            }
            s.synchronize()?;
            out.push((bytes, bytes as f64 * count as f64 / t0.elapsed().as_secs_f64() / 1e9));
        }
        Ok(out)
    }

    /// One process's rank of a communicator joined by `id`.
    pub fn join(rank: usize, size: usize, id: &str) -> Result<(Comm, Device<Cuda>)> {
        let bytes: Vec<u8> = (0..id.len() / 2)
            .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::invalid("collectives --id", e.to_string()))?;
        let device = Device::<Cuda>::open(rank)?;
        let mut comm = Comm::join(&device, &UniqueId::from_bytes(&bytes)?, rank, size)?;
        comm.set_checked(false); // timing the collective, not kiln's agreement check
        Ok((comm, device))
    }

    /// A new id, as hex for a child's command line.
    pub fn new_id() -> Result<String> {
        Ok(UniqueId::new()?.to_bytes().iter().map(|b| format!("{b:02x}")).collect())
    }
}

#[cfg(feature = "cuda")]
fn print_rows(mode: &str, rows: &[bench::Row], json: &mut Vec<String>) {
    println!("{mode}: {} ranks", rows.first().map_or(0, |r| r.ranks));
    println!("{:<15} {:>12} {:>10} {:>10} {:>10}", "collective", "bytes", "time us", "algbw GB/s", "busbw GB/s");
    for r in rows {
        println!("{:<15} {:>12} {:>10.1} {:>10.2} {:>10.2}", r.kind, r.bytes, r.seconds * 1e6, r.algbw(), r.busbw());
        json.push(format!(
            "{{\"mode\":\"{mode}\",\"collective\":\"{}\",\"ranks\":{},\"bytes\":{},\"seconds\":{:e},\"algbw_gb_s\":{:.4},\"busbw_gb_s\":{:.4}}}",
            r.kind,
            r.ranks,
            r.bytes,
            r.seconds,
            r.algbw(),
            r.busbw()
        ));
    }
}

#[cfg(feature = "cuda")]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let max = flag("--max-bytes").and_then(|v| v.parse().ok()).unwrap_or(1usize << 30);
    let outcome = (|| -> kiln::Result<Option<()>> {
        if let (Some(rank), Some(size), Some(id)) = (flag("--rank"), flag("--ranks"), flag("--id")) {
            // A child: one rank, its rows on stdout as JSON lines when rank 0.
            let (rank, size) = (rank.parse().unwrap_or(0), size.parse().unwrap_or(0));
            let (comm, device) = bench::join(rank, size, &id)?;
            let rows = bench::run(&comm, &[device], max)?;
            if rank == 0 {
                let mut json = Vec::new();
                print_rows("processes", &rows, &mut json);
                if let Some(path) = flag("--json") {
                    std::fs::write(path, json.join("\n") + "\n")
                        .map_err(|e| kiln::Error::invalid("--json", e.to_string()))?;
                }
            }
            return Ok(Some(()));
        }
        if kiln::nccl::nccl_version().is_err() {
            return Ok(None);
        }
        let Ok(devices) = kiln::typed::Device::<kiln::Cuda>::all() else { return Ok(None) };
        if devices.is_empty() {
            return Ok(None);
        }
        let mut json = Vec::new();
        if args.iter().any(|a| a == "--processes") {
            let id = bench::new_id()?;
            let exe = std::env::current_exe().map_err(|e| kiln::Error::invalid("current_exe", e.to_string()))?;
            let children: Vec<_> = (0..devices.len())
                .map(|r| {
                    let mut c = std::process::Command::new(&exe);
                    c.args(["--rank", &r.to_string(), "--ranks", &devices.len().to_string(), "--id", &id]);
                    c.args(["--max-bytes", &max.to_string()]);
                    if let Some(path) = flag("--json") {
                        c.args(["--json", &path]);
                    }
                    c.spawn()
                })
                .collect::<std::io::Result<_>>()
                .map_err(|e| kiln::Error::invalid("spawning the ranks", e.to_string()))?;
            drop(devices);
            for (r, mut child) in children.into_iter().enumerate() {
                let status = child.wait().map_err(|e| kiln::Error::invalid("waiting for a rank", e.to_string()))?;
                if !status.success() {
                    return Err(kiln::Error::invalid("collectives", format!("rank {r} exited with {status}")));
                }
            }
            return Ok(Some(()));
        }
        let comms = kiln::nccl::Comms::new(&devices)?;
        let rows = bench::run(&comms, &devices, max)?;
        print_rows("one process", &rows, &mut json);
        for src in 0..devices.len() {
            for dst in (0..devices.len()).filter(|&d| d != src) {
                println!("peer copy {src} -> {dst}");
                for (bytes, gbs) in bench::peer(&devices, src, dst, max)? {
                    println!("{bytes:>12} bytes {gbs:>10.2} GB/s");
                    json.push(format!(
                        "{{\"mode\":\"peer\",\"src\":{src},\"dst\":{dst},\"bytes\":{bytes},\"gb_s\":{gbs:.4}}}"
                    ));
                }
            }
        }
        if let Some(path) = flag("--json") {
            std::fs::write(path, json.join("\n") + "\n").map_err(|e| kiln::Error::invalid("--json", e.to_string()))?;
        }
        Ok(Some(()))
    })();
    match outcome {
        Ok(Some(())) => ExitCode::SUCCESS,
        Ok(None) => {
            println!("no CUDA device with NCCL here: nothing to run");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("collectives: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "cuda"))]
fn main() -> ExitCode {
    println!("built without CUDA: nothing to run");
    ExitCode::SUCCESS
}
