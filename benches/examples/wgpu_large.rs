//! Why large buffers run slower on wgpu: copy and map timed window by
//! window at sizes around the drop (64 Mi to 256 Mi f32), and the same
//! bytes moved three other ways: views into one larger allocation, the
//! work split over four buffer pairs of a quarter each, and each op alone
//! between its own events. Prints every window's time, so the spread shows
//! beside the median. With `--lab`, only the Philox and blur labs: the
//! library's kernel beside variants of it.
//!
//! ```text
//! cargo run --release -p kiln-benches --features cubecl --example wgpu_large
//! ```

use std::time::Instant;

use kiln_core::{Args, Buffer, LaunchConfig, Program, Result, Stream};
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
    // wgpu alone: a submission and a wait, empty and with a 16-byte queue write.
    let (device, queue) = (dev.raw().wgpu_device(), dev.raw().wgpu_queue());
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe"),
        size: 256,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let wait = || {
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| kiln_core::Error::invalid("poll", e.to_string()))
    };
    round("wgpu: empty submit + blocking poll", &mut || {
        queue.submit(std::iter::empty());
        wait()
    })?;
    round("wgpu: write_buffer 16 B + submit + poll", &mut || {
        queue.write_buffer(&uniform, 0, &[7u8; 16]);
        queue.submit(std::iter::empty());
        wait()
    })?;
    let big = s.upload(&vec![1.0f32; 1024])?;
    round("reduce 1 Ki, read back", &mut || {
        kiln_kernels::reduce::reduce(s, kiln_kernels::reduce::ReduceOp::Sum, &big).map(|_| ())
    })?;
    let _ = dev;
    Ok(())
}

/// The Philox uniform fill's WGSL (kernels/src/random: its cipher and both
/// of its ways to the high word of a product) and variants of it, each
/// timed on 64 Mi f32: what bounds the fill, compute or stores, and which
/// way of taking the high word runs fastest. `MUL` names the high-word
/// function, `DST` the element type `dst` is bound as.
const PHILOX_HEAD: &str = "
@group(0) @binding(0) var<storage, read_write> dst: array<DST>;
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;
fn unit(w: u32) -> f32 { return f32(w >> 8u) * 5.9604644775390625e-8; }
";

/// The high word from four 16-bit products summed: the library's way
/// before the carry form (mul_wide16.wgsl) replaced it.
const MUL_FOUR_PRODUCTS: &str = "
fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
    let lh = al * bh; let hl = ah * bl;
    let mid = ((al * bl) >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    return vec2<u32>(a * b, ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}
";

/// The library's Philox cipher and scalars, after a `kiln_mul_wide`.
const PHILOX: &str = include_str!("../../kernels/src/random/philox.wgsl");

/// The lab's ways to the high word: the name a body's `MUL` picks, and its WGSL.
const MULS: [(&str, &str); 3] = [
    ("mul16", MUL_FOUR_PRODUCTS),
    ("mul64", include_str!("../../kernels/src/random/mul_wide64.wgsl")),
    ("mulcarry", include_str!("../../kernels/src/mul_wide16.wgsl")),
];

/// The loop bodies: `w` is block b's words.
const PHILOX_BODIES: [(&str, &str, &str, &str); 7] = [
    ("16-bit split (four products)", "mul16", "f32", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    for (var k = 0u; k < 4u && k < n - b * 4u; k++) { dst[b * 4u + k] = unit(w[k]); }"),
    ("64-bit multiply", "mul64", "f32", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    for (var k = 0u; k < 4u && k < n - b * 4u; k++) { dst[b * 4u + k] = unit(w[k]); }"),
    ("carry from the low word", "mulcarry", "f32", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    for (var k = 0u; k < 4u && k < n - b * 4u; k++) { dst[b * 4u + k] = unit(w[k]); }"),
    ("16-bit split, unrolled stores", "mul16", "f32", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    let at = b * 4u;
    if (at + 3u < n) { dst[at] = unit(w.x); dst[at + 1u] = unit(w.y); dst[at + 2u] = unit(w.z); dst[at + 3u] = unit(w.w); }
    else { for (var k = 0u; k < 4u && k < n - at; k++) { dst[at + k] = unit(w[k]); } }"),
    ("16-bit split, vec4 stores", "mul16", "vec4<f32>", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    dst[b] = vec4<f32>(unit(w.x), unit(w.y), unit(w.z), unit(w.w));"),
    ("stores only (no Philox)", "mul16", "f32", "
    let at = b * 4u;
    for (var k = 0u; k < 4u && k < n - at; k++) { dst[at + k] = f32(at + k); }"),
    ("Philox only (no stores)", "mul16", "f32", "
    let w = kiln_philox(vec4<u32>(params.ctr_lo + b, params.ctr_hi, 0u, 0u), keys);
    if (w.x == 0x12345678u && w.y == 0x9abcdef0u) { dst[b] = 1.0; }"),
];

fn random_variants(dev: &kiln_core::Device<Wgpu>, s: &Stream<Wgpu>) -> Result<()> {
    // 64 Mi, or what one binding holds where that is less (lavapipe: 32 Mi).
    let n = (64 * MI).min(dev.info().limits.max_binding_bytes as usize / 4);
    let mut y = s.alloc::<f32>(n)?;
    let blocks = (n / 4) as u32;
    for (what, mul, dst, body) in PHILOX_BODIES {
        if mul == "mul64" && !dev.info().features.int64 {
            continue;
        }
        let mul = MULS.iter().find(|(name, _)| *name == mul).map_or("", |(_, src)| src);
        let src = format!(
            "{}{mul}{PHILOX}\n@compute @workgroup_size(block_x, block_y, block_z)\nfn lab(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {{\n    let n = params.n;\n    let keys = kiln_philox_keys(vec2<u32>(params.seed_lo, params.seed_hi));\n    for (var b = gid.x; b < n / 4u; b += g.x * block_x) {{{body}\n    }}\n}}",
            PHILOX_HEAD.replace("DST", dst)
        );
        let kernel = match dev.kernel(&Program::new("lab").wgsl(src)) {
            Ok(k) => k,
            Err(e) => {
                println!("philox {what:<32} does not build: {e}");
                continue;
            }
        };
        let cfg = LaunchConfig::new(blocks.div_ceil(256).min(2048), 256);
        let run = |y: &mut Buffer<Wgpu, f32>| {
            let args = Args::new()
                .arg(y)
                .scalar(7u32)
                .scalar(0u32)
                .scalar(0u32)
                .scalar(0u32)
                .scalar(1.0f32)
                .scalar(0u32)
                .scalar(n as u32);
            // SAFETY: every variant writes dst[0..n) at most.
            unsafe { s.launch(&kernel, cfg, args) }
        };
        match windows(s, 10, |_| run(&mut y)) {
            Ok((t, _)) => println!(
                "philox {what:<32} {} Mi: {:.4} ms ({:.0} GB/s), best {:.4}",
                n / MI,
                t[t.len() / 2],
                4.0 * n as f64 / t[t.len() / 2] / 1e6,
                t[0]
            ),
            Err(e) => println!("philox {what:<32} fails: {e}"),
        }
    }
    // The library's fill, for the same size, to tie the lab to the bench.
    let mut rng = kiln_kernels::random::Philox::new(7);
    let (t, _) = windows(s, 10, |_| rng.fill_uniform(s, &mut y))?;
    println!("philox {:<32} {} Mi: {:.4} ms", "the library's fill_uniform", n / MI, t[t.len() / 2]);
    Ok(())
}

/// The 3 x 3 blur's tile kernel (the library's `conv_tiled.wgsl`, f32,
/// clamped border) with its interior tiles staged each lab way (`STAGE`)
/// and its taps in registers, tiles `TILE_H` rows high; `src4` is the
/// image again as `vec4`s.
const BLUR_LAB: &str = r#"
const RX: u32 = u32(FILTER_W) / 2u;
const RY: u32 = u32(FILTER_H) / 2u;
const TW: u32 = 128u;
const TH: u32 = TILE_H;
const SW: u32 = TW + 2u * RX;
const SH: u32 = TH + 2u * RY;
const ROWS: u32 = (SH + 7u) / 8u;
var<workgroup> tile: array<f32, SW * SH>;
@group(0) @binding(3) var<storage, read> src4: array<vec4<f32>>;

@compute @workgroup_size(block_x, block_y, block_z)
fn lab(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    var w: array<f32, FW * FH>;
    for (var k = 0u; k < u32(FILTER_W * FILTER_H); k += 1u) {
        w[k] = weights[k];
    }
    let width = params.width;
    let height = params.height;
    let wi = i32(width);
    let h = i32(height);
    let tiles_x = (width + TW - 1u) / TW;
    let tiles_y = (height + TH - 1u) / TH;
    for (var by = wid.y; by < tiles_y; by += groups.y) {
        for (var bx = wid.x; bx < tiles_x; bx += groups.x) {
            let x0 = i32(bx * TW) - i32(RX);
            let y0 = i32(by * TH) - i32(RY);
            if (x0 >= 0 && y0 >= 0 && x0 + i32(SW) <= wi && y0 + i32(SH) <= h) {
                let corner = u32(y0) * width + u32(x0);
                STAGE
            } else {
                for (var sy = ty; sy < SH; sy += 8u) {
                    let gy = border_index(y0 + i32(sy), h);
                    for (var sx = tx; sx < SW; sx += 32u) {
                        let gx = border_index(x0 + i32(sx), wi);
                        var p = 0.0;
                        if (gy >= 0 && gx >= 0) {
                            p = pixel(u32(gy) * width + u32(gx));
                        }
                        tile[sy * SW + sx] = p;
                    }
                }
            }
            workgroupBarrier();
            let ox = bx * TW + tx;
            for (var r = 0u; r < TH / 8u; r += 1u) {
                let ly = ty + 8u * r;
                var a0 = 0.0;
                var a1 = 0.0;
                var a2 = 0.0;
                var a3 = 0.0;
                for (var i = 0u; i < u32(FILTER_H); i += 1u) {
                    let row = (ly + i) * SW + tx;
                    for (var j = 0u; j < u32(FILTER_W); j += 1u) {
                        let t = w[i * u32(FILTER_W) + j];
                        a0 += t * tile[row + j];
                        a1 += t * tile[row + 32u + j];
                        a2 += t * tile[row + 64u + j];
                        a3 += t * tile[row + 96u + j];
                    }
                }
                let oy = by * TH + ly;
                if (oy < height) {
                    let o = oy * width + ox;
                    if (ox < width) { dst[o] = a0 / params.divisor; }
                    if (ox + 32u < width) { dst[o + 32u] = a1 / params.divisor; }
                    if (ox + 64u < width) { dst[o + 64u] = a2 / params.divisor; }
                    if (ox + 96u < width) { dst[o + 96u] = a3 / params.divisor; }
                }
            }
            workgroupBarrier();
        }
    }
}
"#;

/// The ways to stage an interior tile (`corner` is its first pixel), and
/// the tile's height (its width is 128). Measured before: a `vec4` binding
/// of the image for the tile's core columns, a row at a time or every
/// row's loads first, ran at 0.392 and 0.511 ms against 0.246
/// (`h200-2026-12-03-a-wgpu-lab.txt`).
const BLUR_STAGES: [(&str, u32, &str); 5] = [
    ("five loads a row, then stores", 32, FIVE_LOADS),
    ("every row's loads first", 32, LOADS_FIRST),
    ("every row's loads first, 16 rows", 16, LOADS_FIRST),
    ("every row's loads first, 8 rows", 8, LOADS_FIRST),
    ("five loads a row, 16 rows", 16, FIVE_LOADS),
];

/// A row's five loads, then its stores, a row at a time.
const FIVE_LOADS: &str = "
                let hx = tx + TW;
                for (var sy = ty; sy < SH; sy += 8u) {
                    let row = corner + sy * width;
                    let v0 = pixel(row + tx);
                    let v1 = pixel(row + tx + 32u);
                    let v2 = pixel(row + tx + 64u);
                    let v3 = pixel(row + tx + 96u);
                    var v4 = 0.0;
                    if (hx < SW) { v4 = pixel(row + hx); }
                    let at = sy * SW + tx;
                    tile[at] = v0; tile[at + 32u] = v1; tile[at + 64u] = v2; tile[at + 96u] = v3;
                    if (hx < SW) { tile[at + TW] = v4; }
                }";

/// Every row's loads, then every row's stores.
const LOADS_FIRST: &str = "
                let hx = tx + TW;
                var v: array<f32, ROWS * 5u>;
                for (var r = 0u; r < ROWS; r += 1u) {
                    let sy = ty + 8u * r;
                    if (sy < SH) {
                        let row = corner + sy * width;
                        v[5u * r] = pixel(row + tx);
                        v[5u * r + 1u] = pixel(row + tx + 32u);
                        v[5u * r + 2u] = pixel(row + tx + 64u);
                        v[5u * r + 3u] = pixel(row + tx + 96u);
                        if (hx < SW) { v[5u * r + 4u] = pixel(row + hx); }
                    }
                }
                for (var r = 0u; r < ROWS; r += 1u) {
                    let sy = ty + 8u * r;
                    if (sy < SH) {
                        let at = sy * SW + tx;
                        tile[at] = v[5u * r]; tile[at + 32u] = v[5u * r + 1u];
                        tile[at + 64u] = v[5u * r + 2u]; tile[at + 96u] = v[5u * r + 3u];
                        if (hx < SW) { tile[at + TW] = v[5u * r + 4u]; }
                    }
                }";

/// The 3 x 3 box blur of an 8192 x 8192 f32 image (64 Mi pixels): the
/// library's, then each lab staging, its output checked against the
/// library's.
fn blur_variants(dev: &kiln_core::Device<Wgpu>, s: &Stream<Wgpu>) -> Result<()> {
    use kiln_kernels::image::{Border, Filter, convolve};
    // 8192, or what one binding holds, or `--side N` (a multiple of 128).
    let asked = std::env::args().skip_while(|a| a != "--side").nth(1).and_then(|v| v.parse::<usize>().ok());
    let side =
        asked.unwrap_or(8192).min(((dev.info().limits.max_binding_bytes / 4) as f64).sqrt() as usize / 128 * 128);
    let n = side * side;
    let host: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
    let img: Buffer<Wgpu, f32> = s.upload(&host)?;
    let filter = Filter::box_blur(3)?;
    let device_filter = filter.upload(s)?;
    let mut want = s.alloc::<f32>(n)?;
    let gbs = |ms: f64| 8.0 * n as f64 / ms / 1e6;
    let (t, _) = windows(s, 10, |_| convolve(s, &img, side, side, &device_filter, Border::Clamp, &mut want))?;
    println!("blur {:<36} {side}^2: {:.4} ms ({:.0} GB/s)", "the library's", t[t.len() / 2], gbs(t[t.len() / 2]));
    let want = want.to_vec()?;
    let weights: Buffer<Wgpu, f32> = s.upload(&[1.0f32; 9])?;
    let common = include_str!("../../kernels/src/image/conv_common.wgsl");
    let abi = include_str!("../../kernels/src/abi.wgsl");
    for (what, th, stage) in BLUR_STAGES {
        let lab = BLUR_LAB.replace("STAGE", stage).replace("TILE_H", &format!("{th}u"));
        let src = format!("{abi}{common}{lab}");
        let prog = Program::new("lab")
            .wgsl(src)
            .define("FW", 3)
            .define("FH", 3)
            .define("PIX", "f32")
            .define("PER_UNIT", "1u")
            .define("PIXEL_LOAD", "src[i]")
            .define("PACK_BODY", "return vals[0];");
        let kernel = match dev.kernel(&prog) {
            Ok(k) => k,
            Err(e) => {
                println!("blur {what:<36} does not build: {e}");
                continue;
            }
        };
        let mut out = s.alloc::<f32>(n)?;
        let cfg = LaunchConfig::new(((side / 128) as u32, side.div_ceil(th as usize) as u32), (32, 8));
        let run = |out: &mut Buffer<Wgpu, f32>| {
            let args = Args::new()
                .arg(&img)
                .arg(&weights)
                .arg(out)
                .arg(&img)
                .scalar(side as u32)
                .scalar(side as u32)
                .scalar(3u32)
                .scalar(3u32)
                .scalar(0u32)
                .scalar(9.0f32);
            // SAFETY: the kernel reads the side x side image (twice bound)
            // and 9 weights, and writes the side x side output.
            unsafe { s.launch(&kernel, cfg, args) }
        };
        match windows(s, 10, |_| run(&mut out)) {
            Ok((t, _)) => {
                let got = out.to_vec()?;
                let same = got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs().max(1.0));
                let med = t[t.len() / 2];
                println!(
                    "blur {what:<36} {side}^2: {med:.4} ms ({:.0} GB/s), best {:.4}, output {}",
                    gbs(med),
                    t[0],
                    if same { "matches" } else { "DIFFERS" }
                );
            }
            Err(e) => println!("blur {what:<36} fails: {e}"),
        }
    }
    Ok(())
}

/// Keep the GPU busy for 1.5 s, so the lab runs at its working clock
/// (NVIDIA's Vulkan driver raises it slowly).
fn warm(s: &Stream<Wgpu>) -> Result<()> {
    let n = (64 * MI).min(s.device().info().limits.max_binding_bytes as usize / 4);
    let x = s.alloc::<f32>(n)?;
    let mut y = s.alloc::<f32>(n)?;
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < 1.5 {
        for _ in 0..20 {
            map(s, MapOp::Square, &x, &mut y)?;
        }
        s.synchronize()?;
    }
    Ok(())
}

fn main() -> Result<()> {
    let dev = kiln_core::Device::<Wgpu>::open(0)?;
    println!("{}", dev.name());
    let s = dev.stream();
    if std::env::args().any(|a| a == "--lab") {
        warm(&s)?;
        if !std::env::args().any(|a| a == "--side") {
            random_variants(&dev, &s)?;
            warm(&s)?;
        }
        return blur_variants(&dev, &s);
    }
    small(&dev, &s)?;
    random_variants(&dev, &s)?;
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
