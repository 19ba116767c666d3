"""PyTorch's torch.matmul on kiln's matrix products, the same cases and sizes, timed the same way.

Usage: python3 torch_bench.py --cases sgemm,matmul_f32_tf32@16777216 --sizes 1024,67108864 --dtype f32 --runs 20 --json OUT
A plain case name runs at every --sizes size; `name@size` at that size alone
(kiln gives its matmul_* products so: they have sizes of their own).
Cases: sgemm and sgemm_cublas (f32), dgemm (f64), and the products
matmul_<dtype>[_<mode>] (one square product of side isqrt(size)) and
matmul_batch_<dtype>[_<mode>] (256 products of side isqrt(size / 256),
torch.matmul on 3-d tensors: one strided batched GEMM); other names are
ignored. Each case's mode is set before it runs:
  exact f32:        torch.backends.cuda.matmul.allow_tf32 = False (precision "highest")
  tf32:             torch.backends.cuda.matmul.allow_tf32 = True
  bf16 (f32 inputs): torch.set_float32_matmul_precision("medium")
  f16, bf16 inputs: the product in the input type (torch.matmul's), with the
                    reduced-precision reductions off, so sums stay in f32 as kiln's
  f8e4m3 inputs:    torch._scaled_mm (cuBLASLt) into bf16, scales of 1, b column-major
                    (as kiln's matmul_f8e4m3 stores it transposed), square products only
and each row says what it called and, for f32 inputs, how the product
rounded them (a probe in the same mode: a product by the identity of
1 + 2^-12, which only fp32 keeps, and of 1 + 2^-9, which TF32 keeps too and
bf16 does not).
Timed as kiln's rows are: 3 untimed calls, calls for --warmup-ms of busy
time, then --runs samples of `launches` calls each between one pair of CUDA
events, `launches` chosen so a sample covers --sample-ms; inputs uniform in
[-1, 1), rotated among buffer sets past the size of the caches.
Writes {"peer": "torch", "version": ..., "rows": [{pattern, dtype, size, median_ms, min_ms, launches, calls}]}.
Exits with status 3 and a one-line reason on stderr when PyTorch or a CUDA device is not here.
"""
import json, math, statistics, sys, time

from peer_common import peer_args, sample_windows

try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
except Exception as e:  # noqa: BLE001 - any failure means the peer is absent
    print(f"torch unavailable: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    sys.exit(3)

CACHE_BYTES = 64 << 20
# Products in one batched row (benches/src/case.rs, BATCH).
BATCH = 256
args = peer_args()

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}
if hasattr(torch, "float8_e4m3fn"):
    DTYPES["f8e4m3"] = torch.float8_e4m3fn
MODES = ("exact", "tf32", "bf16")
# kiln's older product rows: name -> (input dtype label, mode, batched).
GEMMS = {"sgemm": ("f32", "exact", False), "sgemm_cublas": ("f32", "exact", False), "dgemm": ("f64", "exact", False)}


def product(pattern):
    """(input dtype label, mode, batched) of a product case, or None for other names."""
    if pattern in GEMMS:
        return GEMMS[pattern]
    parts = pattern.split("_")
    if parts[0] != "matmul":
        return None
    batched = parts[1:2] == ["batch"]
    rest = parts[2:] if batched else parts[1:]
    # kiln's products into the 16-bit input type ("matmul_f16_f16"): torch.matmul's own.
    if len(rest) == 2 and rest[0] == rest[1] and rest[0] in ("f16", "bf16"):
        rest = rest[:1]
    if not 1 <= len(rest) <= 2 or rest[0] not in DTYPES:
        return None
    mode = rest[1] if len(rest) == 2 else "exact"
    if mode not in MODES or (mode != "exact" and rest[0] != "f32"):
        return None
    if rest[0] == "f8e4m3" and batched:
        return None
    return rest[0], mode, batched


def work(cases, sizes):
    """(pattern, size) pairs: a plain name at each of `sizes`, `name@size` at its own."""
    plain = [c for c in cases if "@" not in c]
    pairs = [(c, n) for n in sizes for c in plain]
    for c in cases:
        if "@" in c:
            name, _, n = c.partition("@")
            pairs.append((name, int(n)))
    return pairs


def set_mode(mode):
    """Set PyTorch's flags for `mode`; returns how the call is described."""
    m = torch.backends.cuda.matmul
    for flag in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        if hasattr(m, flag):
            setattr(m, flag, False)
    if mode == "bf16":
        torch.set_float32_matmul_precision("medium")
        return "torch.set_float32_matmul_precision('medium')"
    torch.set_float32_matmul_precision("highest")
    m.allow_tf32 = mode == "tf32"
    return f"allow_tf32 = {mode == 'tf32'}"


def f32_rounding():
    """How torch.matmul rounds f32 inputs in the mode set now: "fp32", "tf32", "bf16" or "other"."""
    n = 512
    fine, coarse = 1 + 2 ** -12, 1 + 2 ** -9
    x = torch.full((n, n), fine, device="cuda", dtype=torch.float32)
    x[:, n // 2:] = coarse
    c = torch.matmul(x, torch.eye(n, device="cuda", dtype=torch.float32))
    got = (float(c[0, 0]), float(c[0, n - 1]))
    return {(fine, coarse): "fp32", (1.0, coarse): "tf32", (1.0, 1.0): "bf16"}.get(got, "other")


def sampled(run):
    """kiln's sampling method: the sorted ms per call over --runs samples, and the calls per sample."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def window(k):
        start.record()
        for _ in range(k):
            run()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / k

    return sample_windows(window, args)


generator = torch.Generator(device="cuda")
generator.manual_seed(0x6B696C6E)


def random_matrix(shape, dtype):
    """Uniform in [-1, 1), drawn in f32 (f64 for f64) and rounded to `dtype`, as kiln draws its inputs."""
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    return (torch.rand(shape, device="cuda", dtype=wide, generator=generator) * 2 - 1).to(dtype)


def bench(pattern, size):
    label, mode, batched = product(pattern)
    dtype = DTYPES[label]
    side = math.isqrt(size // BATCH) if batched else math.isqrt(size)
    shape = (BATCH, side, side) if batched else (side, side)
    flags = set_mode(mode)
    what = f"torch.matmul on {tuple(shape)} tensors" if batched else "torch.matmul"
    if label == "f8e4m3":
        return bench_fp8(pattern, size, side)
    if label == "f32":
        calls = f"{what}, {flags} (f32 inputs used as {f32_rounding()})"
    elif label in ("f16", "bf16"):
        calls = f"{what}, {label} into {label}, reduced-precision reductions off"
    else:
        calls = f"{what}, {label}"
    elements = math.prod(shape)
    nbytes = 3 * elements * torch.tensor([], dtype=dtype).element_size()
    sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
    sets = [(random_matrix(shape, dtype), random_matrix(shape, dtype), torch.empty(shape, device="cuda", dtype=dtype))
            for _ in range(sets_n)]
    counter = [0]

    def run():
        a, b, c = sets[counter[0] % sets_n]
        torch.matmul(a, b, out=c)
        counter[0] += 1

    t, launches = sampled(run)
    del sets
    torch.cuda.empty_cache()
    return {"pattern": pattern, "dtype": label, "size": size, "median_ms": statistics.median(t), "min_ms": t[0],
            "launches": launches, "calls": calls}


def bench_fp8(pattern, size, side):
    """torch._scaled_mm of E4M3 matrices into bf16: a row-major, b column-major, scales of 1."""
    dtype = DTYPES["f8e4m3"]
    nbytes = 2 * side * side + 2 * side * side
    sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
    one = torch.ones((), device="cuda", dtype=torch.float32)
    sets = [(random_matrix((side, side), dtype), random_matrix((side, side), dtype).t()) for _ in range(sets_n)]
    counter = [0]

    def run():
        a, b = sets[counter[0] % sets_n]
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        counter[0] += 1

    t, launches = sampled(run)
    del sets
    torch.cuda.empty_cache()
    return {"pattern": pattern, "dtype": "f8e4m3", "size": size, "median_ms": statistics.median(t), "min_ms": t[0],
            "launches": launches, "calls": "torch._scaled_mm, e4m3 into bf16, scales of 1, b column-major"}


rows = []
cases = [c for c in args.cases.split(",") if c]
sizes = [int(v) for v in args.sizes.split(",") if v]
for pattern, size in work(cases, sizes):
    if product(pattern) is None:
        continue
    try:
        rows.append(bench(pattern, size))
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"torch {pattern} {size}: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        torch.cuda.empty_cache()
set_mode("exact")
with open(args.json, "w") as f:
    json.dump({"peer": "torch", "version": f"{torch.__version__} (CUDA {torch.version.cuda})", "rows": rows}, f)
