//! What bounds a pass of the onesweep sort on wgpu: the library's WGSL
//! pass (the first of four, 32-bit keys) beside variants of it that each
//! leave one step out, every output checked against the host's.
//!
//! - `library`: the pass as the library builds it;
//! - `no look-back`: each tile's digit starts read from a table the host
//!   worked out (what the look-back would have found), so no tile waits on
//!   another; its status words are still published;
//! - `no look-back, no stores`: the same, keys not written (flag 16);
//! - `narrow`: each of those with the ranking's ballots taken one word
//!   wide, on subgroups of at most 32 lanes;
//! - a copy of the keys, the memory's rate for the same bytes.
//!
//! ```text
//! cargo run --release -p kiln-benches --features cubecl --example wgpu_sort_lab -- [--mi 64] [--items 16]
//! ```

use kiln_benches::{Sampling, SmClock, clock_is_up, sample_windows_warmed};
use kiln_core::{Args, Buffer, Device, Event, LaunchConfig, Program, Result, Stream};
use kiln_wgpu::Wgpu;

const ABI: &str = include_str!("../../kernels/src/abi.wgsl");
const KEYS: &str = include_str!("../../kernels/src/sort/keys.wgsl");
const IO: &str = include_str!("../../kernels/src/sort/io.wgsl");
const PASS: &str = include_str!("../../kernels/src/sort/onesweep.wgsl");
/// Reads of a silent tile's status word before the workgroup counts it
/// (the library's SPIN).
const SPIN: u32 = 64;
const RUNS: usize = 15;

fn arg(name: &str) -> Option<usize> {
    std::env::args().skip_while(|a| a != name).nth(1).and_then(|v| v.parse().ok())
}

/// `rank_key` with one word of ballot: subgroups of at most 32 lanes.
const NARROW_RANK: &str = "fn rank_key(b: u32, upto: vec4<u32>) -> u32 {
    let d = digit_of(b);
    var peers = subgroupBallot(true).x;
    for (var k = 0u; k < 8u; k += 1u) {
        let bit = ((d >> k) & 1u) != 0u;
        let vote = subgroupBallot(bit).x;
        peers &= select(~vote, vote, bit);
    }
    let below = countOneBits(peers & upto.x);
    let leader = firstLeadingBit(peers);
    var before = 0u;
    if (sg_lane == leader) {
        let sh = 16u * (d & 1u);
        before = (atomicAdd(&sub_counts[sg_id * 128u + d / 2u], below << sh) >> sh) & 0xffffu;
    }
    return subgroupShuffle(before, leader) + below - 1u;
}
";

/// The pass program with `items` keys per invocation, the look-back's call
/// replaced by a read of `oracle` when `oracle` is set, the ranking's
/// ballots one word wide when `narrow` is.
fn program(items: u32, subs: u32, oracle: bool, narrow: bool) -> Program {
    let unrolled = |body: &str| (0..items).map(|i| body.replace('#', &format!("{i}u"))).collect::<String>();
    let mut pass = PASS.to_string();
    if narrow {
        let from = pass.find("fn rank_key(").expect("onesweep.wgsl has rank_key");
        let to = from + pass[from..].find("\n}\n").expect("rank_key ends") + 3;
        pass.replace_range(from..to, NARROW_RANK);
    }
    if oracle {
        let call = "let before = look_back(tile, starts.y, sbase);";
        assert!(pass.contains(call), "onesweep.wgsl no longer calls the look-back as the lab expects");
        pass = pass.replace(call, "let before = oracle[tile * 256u + me];");
        pass = format!("@group(0) @binding(6) var<storage, read> oracle: array<u32>;\n{pass}");
    }
    Program::new("lab")
        .wgsl(format!("{ABI}{KEYS}\n{IO}{pass}"))
        .define("KERNEL", "lab")
        .define("KEY_TYPE", 0)
        .define("DESCENDING", 0)
        .define("SORT_ITEMS", format!("{items}u"))
        .define("SORT_SUBS", format!("{subs}u"))
        .define("SORT_SPIN", format!("{SPIN}u"))
        .define("SORT_VALUES", false)
        .define("SORT_LOAD_KEYS", unrolled("key[#] = load_key(base, first, #, count);\n"))
        .define("SORT_RANK_KEYS", unrolled("place[#] = rank_key(key[#], upto);\n"))
        .define("SORT_PLACE_KEYS", unrolled("place[#] = slot_of(key[#], place[#]);\nitems[place[#]] = key[#];\n"))
        .define("SORT_STORE_KEYS", unrolled("digit[#] = store_key(# * 256u + me, count);\n"))
        .define("SORT_LOAD_VALS", "")
        .define("SORT_PLACE_VALS", "")
        .define("SORT_STORE_VALS", "")
}

/// The bench's sampling, one operation a sample: warm-up until the SM
/// clock is up, then `RUNS` samples.
const SAMPLING: Sampling = Sampling { warmup: 2, warmup_ms: 500.0, runs: RUNS, sample_ms: 0.0 };

/// Median and best ms of what `op` records between the two events it is
/// given (it may enqueue untimed work before the first), sampled as the
/// bench samples ([`sample_windows_warmed`]).
fn time(
    s: &Stream<Wgpu>,
    clock: Option<&SmClock>,
    mut op: impl FnMut(&Event<Wgpu>, &Event<Wgpu>) -> Result<()>,
) -> Result<(f64, f64)> {
    let (start, stop) = (s.device().create_event()?, s.device().create_event()?);
    let (t, _) = sample_windows_warmed(&SAMPLING, clock_is_up(clock), |_, launches, _| {
        let mut ms = 0.0;
        for _ in 0..launches {
            op(&start, &stop)?;
            stop.synchronize()?;
            ms += stop.elapsed_since(&start)?.as_secs_f64() * 1e3;
        }
        Ok(ms)
    })?;
    Ok((t[t.len() / 2], t[0]))
}

fn main() -> Result<()> {
    let dev = Device::<Wgpu>::open(0)?;
    let s = dev.stream();
    let info = dev.info();
    let n = arg("--mi").unwrap_or(64) << 20;
    let subs = 256 / info.limits.min_warp_size.max(1);
    // The library's choice: the most of 16, 12, 8 whose workgroup memory fits.
    let fits = |i: u32| 4 * (256 * i + subs * 128 + 3 * 256 + 2 * subs + 3) <= info.limits.max_shared_mem_per_block;
    let items = arg("--items").map_or_else(|| [16, 12, 8].into_iter().find(|&i| fits(i)).unwrap_or(8), |i| i as u32);
    let tile = 256 * items as usize;
    let tiles = n.div_ceil(tile);
    println!("{}: {} Mi u32 keys, tiles of 256 x {items}, {tiles} tiles", dev.name(), n >> 20);

    // Seeded keys, pass 0's digit counts and starts, each tile's starts.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let keys: Vec<u32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 16) as u32
        })
        .collect();
    let mut counts = vec![0u32; 1024];
    for &k in &keys {
        counts[(k & 255) as usize] += 1;
    }
    let mut start = [0u32; 256];
    for d in 1..256 {
        start[d] = start[d - 1] + counts[d - 1];
    }
    let mut oracle = vec![0u32; tiles * 256];
    let mut run = start;
    for (t, chunk) in keys.chunks(tile).enumerate() {
        oracle[t * 256..(t + 1) * 256].copy_from_slice(&run);
        for &k in chunk {
            run[(k & 255) as usize] += 1;
        }
    }
    let mut want = vec![0u32; n];
    let mut next = start;
    for &k in &keys {
        let d = (k & 255) as usize;
        want[next[d] as usize] = k;
        next[d] += 1;
    }

    let keys_d: Buffer<Wgpu, u32> = s.upload(&keys)?;
    let counts_d = s.upload(&counts)?;
    let oracle_d = s.upload(&oracle)?;
    let vals = s.alloc_zeroed::<u32>(1)?;
    let mut vals_out = s.alloc_zeroed::<u32>(1)?;
    let mut status = s.alloc_zeroed::<u32>(4 * tiles * 256 + 4)?;
    let mut out = s.alloc::<u32>(n)?;
    let groups = (tiles as u32).min(info.limits.max_grid[0]);
    let clock = SmClock::find(&info.name);
    let gbs = |ms: f64| 8.0 * n as f64 / ms / 1e6;

    let (med, best) = time(&s, clock.as_ref(), |start, stop| {
        s.record(start)?;
        s.copy(&keys_d, &mut out)?;
        s.record(stop)
    })?;
    println!("{:<32} {med:.4} ms (best {best:.4}), {:.0} GB/s", "copy of the keys", gbs(med));
    let narrow = info.limits.warp_size <= 32;
    for (what, oracle, narrow, flags) in [
        ("library", false, false, 0u32),
        ("no look-back", true, false, 0),
        ("no look-back, no stores", true, false, 16),
        ("narrow ballots", false, narrow, 0),
        ("narrow, no look-back", true, narrow, 0),
        ("narrow, no look-back, no stores", true, narrow, 16),
    ] {
        if what.starts_with("narrow") && !narrow {
            println!("{what:<32} needs subgroups of at most 32 lanes");
            continue;
        }
        let kernel = match dev.kernel(&program(items, subs, oracle, narrow)) {
            Ok(k) => k,
            Err(e) => {
                println!("{what:<32} does not build: {e}");
                continue;
            }
        };
        s.fill(&mut out, 0xdead_beef)?;
        let (med, best) = time(&s, clock.as_ref(), |start, stop| {
            s.fill(&mut status, 0u32)?;
            s.record(start)?;
            let mut args =
                Args::new().arg(&keys_d).arg(&vals).arg(&mut out).arg(&mut vals_out).arg(&counts_d).arg(&mut status);
            if oracle {
                args = args.arg(&oracle_d);
            }
            let args = args.scalar(n as u32).scalar(tiles as u32).scalar(0u32).scalar(flags);
            // SAFETY: the pass reads keys[0..n), counts[0..1024) and (with
            // the table) oracle[0..tiles * 256), writes out[0..n) and
            // status[0..4 * tiles * 256 + 4), all of those lengths; the
            // values are not moved (flag 4 unset).
            unsafe { s.launch(&kernel, LaunchConfig::new(groups, 256), args)? };
            s.record(stop)
        })?;
        let got = out.to_vec()?;
        let check = if flags & 16 != 0 {
            "no output"
        } else if got == want {
            "output matches"
        } else {
            "output DIFFERS"
        };
        println!("{what:<32} {med:.4} ms (best {best:.4}), {:.0} GB/s, {check}", gbs(med));
    }
    Ok(())
}
