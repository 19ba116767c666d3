"""CuPy on the same cases and sizes as `kiln bench`, timed the same way.

Usage: python3 cupy_bench.py --cases vector_add,axpy --sizes 1024,67108864 --dtype f32 --runs 20 --json OUT
Writes {"peer": "cupy", "version": ..., "rows": [{pattern, dtype, size, median_ms, min_ms}]}.
Exits with status 3 and a one-line reason on stderr when CuPy cannot run here.
"""
import argparse, json, sys

try:
    import numpy as np
    import cupy as cp
    from cupyx.profiler import benchmark
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # noqa: BLE001 - any failure means the peer is absent
    print(f"cupy unavailable: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    sys.exit(3)

CACHE_BYTES = 64 << 20
ap = argparse.ArgumentParser()
ap.add_argument("--cases", required=True)
ap.add_argument("--sizes", required=True)
ap.add_argument("--dtype", default="f32")
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--json", required=True)
args = ap.parse_args()
dt = {"f32": cp.float32, "f64": cp.float64, "i32": cp.int32, "u32": cp.uint32}[args.dtype]
arrays = {"copy_d2d": 2, "fill": 1, "sequence": 1, "map_square": 2, "map_abs": 2, "map_negate": 2,
          "map_sqrt": 2, "vector_add": 3, "axpy": 3}
kernels = {
    "map_square": cp.ElementwiseKernel("T a", "T b", "b = a * a", "kiln_peer_sq"),
    "map_abs": cp.ElementwiseKernel("T a", "T b", "b = abs(a)", "kiln_peer_abs"),
    "map_negate": cp.ElementwiseKernel("T a", "T b", "b = -a", "kiln_peer_neg"),
    "map_sqrt": cp.ElementwiseKernel("T a", "T b", "b = sqrt(a)", "kiln_peer_sqrt"),
    "axpy": cp.ElementwiseKernel("T a, T x, T y", "T z", "z = a * x + y", "kiln_peer_axpy"),
}


def op(pattern, s, alpha):
    if pattern == "copy_d2d":
        return lambda: cp.copyto(s[1], s[0])
    if pattern == "fill":
        return lambda: s[0].fill(alpha)
    if pattern == "sequence":
        n = s[0].size
        return lambda: cp.arange(0, n, dtype=dt)  # allocates: CuPy has no out= for arange
    if pattern == "vector_add":
        return lambda: cp.add(s[0], s[1], out=s[2])
    if pattern == "axpy":
        return lambda: kernels["axpy"](alpha, s[0], s[1], s[2])
    if pattern in kernels:
        return lambda: kernels[pattern](s[0], s[1])
    return None


rows = []
rng = cp.random.default_rng(0x6B696C6E)
for size in [int(v) for v in args.sizes.split(",") if v]:
    for pattern in [c for c in args.cases.split(",") if c]:
        if pattern not in arrays:
            continue
        nbytes = arrays[pattern] * size * np.dtype(dt).itemsize
        sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
        try:
            base = (rng.random(size, dtype=cp.float64) * 1.5 + 0.5).astype(dt)
            sets = [[base.copy() for _ in range(arrays[pattern])] for _ in range(sets_n)]
            alpha = dt(1.25)
            fns = [op(pattern, s, alpha) for s in sets]
            if fns[0] is None:
                continue
            counter = [0]

            def run():
                fns[counter[0] % sets_n]()
                counter[0] += 1

            r = benchmark(run, n_repeat=args.runs, n_warmup=3)
            t = np.sort(np.asarray(r.gpu_times).reshape(-1)) * 1e3
            rows.append({"pattern": pattern, "dtype": args.dtype, "size": size,
                         "median_ms": float(np.median(t)), "min_ms": float(t[0])})
            del sets, fns, base
            cp.get_default_memory_pool().free_all_blocks()
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"cupy {pattern} {size}: {e}", file=sys.stderr)
with open(args.json, "w") as f:
    json.dump({"peer": "cupy", "version": cp.__version__, "rows": rows}, f)
