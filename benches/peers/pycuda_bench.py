"""PyCUDA on the same cases and sizes as `kiln bench`, timed with CUDA events.

Usage: python3 pycuda_bench.py --cases vector_add --sizes 1024,67108864 --dtype f32 --runs 20 --json OUT
The case reduce_latency runs once, at 1 Ki f32, whatever --sizes and --dtype say.
Exits with status 3 and a one-line reason on stderr when PyCUDA cannot run here.
"""
import json, math, sys, time

from peer_common import peer_args, sample_windows

try:
    import numpy as np
    import pycuda.autoinit  # noqa: F401
    import pycuda
    import pycuda.driver as drv
    import pycuda.gpuarray as gpuarray
    from pycuda.elementwise import ElementwiseKernel
    from pycuda.scan import ExclusiveScanKernel, InclusiveScanKernel
except Exception as e:  # noqa: BLE001 - any failure means the peer is absent
    print(f"pycuda unavailable: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    sys.exit(3)

CACHE_BYTES = 64 << 20
args = peer_args()
np_dt = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32}[args.dtype]



def sampled(run):
    """kiln's sampling method: 3 untimed calls, then calls for --warmup-ms
    of busy time, then --runs samples of `launches` calls each between one
    pair of events, `launches` chosen so a sample covers --sample-ms.
    Returns the sorted ms per call and `launches`."""
    start, stop = drv.Event(), drv.Event()

    def window(k):
        start.record()
        for _ in range(k):
            run()
        stop.record()
        stop.synchronize()
        return start.time_till(stop) / k

    return sample_windows(window, args)
c_t = {"f32": "float", "f64": "double", "i32": "int", "u32": "unsigned int"}[args.dtype]
arrays = {"copy_d2d": 2, "fill": 1, "map_square": 2, "vector_add": 3, "axpy": 3,
          "reduce_sum": 1, "dot": 2, "scan_inclusive": 2, "scan_exclusive": 2}
add = ElementwiseKernel(f"{c_t} *a, {c_t} *b, {c_t} *c", "c[i] = a[i] + b[i]", "kiln_peer_add")
sq = ElementwiseKernel(f"{c_t} *a, {c_t} *b", "b[i] = a[i] * a[i]", "kiln_peer_sq")
axpy = ElementwiseKernel(f"{c_t} alpha, {c_t} *x, {c_t} *y, {c_t} *z", "z[i] = alpha * x[i] + y[i]", "kiln_peer_axpy")
inclusive_scan = InclusiveScanKernel(np_dt, "a+b")
# An exclusive scan writes the identity first: PyCUDA takes it as `neutral`.
exclusive_scan = ExclusiveScanKernel(np_dt, "a+b", "0")


def op(pattern, s, alpha):
    if pattern == "copy_d2d":
        return lambda: drv.memcpy_dtod(s[1].gpudata, s[0].gpudata, s[0].nbytes)
    if pattern == "fill":
        return lambda: s[0].fill(alpha)
    if pattern == "map_square":
        return lambda: sq(s[0], s[1])
    if pattern == "vector_add":
        return lambda: add(s[0], s[1], s[2])
    if pattern == "axpy":
        return lambda: axpy(alpha, s[0], s[1], s[2])
    # Reductions return a new one-element GPUArray each call (PyCUDA has no out=).
    if pattern == "reduce_sum":
        return lambda: gpuarray.sum(s[0])
    if pattern == "dot":
        return lambda: gpuarray.dot(s[0], s[1])
    if pattern == "scan_inclusive":
        return lambda: inclusive_scan(s[0], s[1])
    if pattern == "scan_exclusive":
        return lambda: exclusive_scan(s[0], s[1])
    return None


def timed(fns):
    """The calls of `fns` in turn (rotating buffer sets), sampled."""
    counter = [0]

    def run():
        fns[counter[0] % len(fns)]()
        counter[0] += 1

    return sampled(run)


# The end-to-end latency of small work, as kiln's reduce_latency rows take
# it: the sum of 1 Ki f32 already on the device, read back to the host
# (.get() blocks until the scalar is there), on the host clock.
LATENCY_ELEMENTS, LATENCY_MIN_RUNS, LATENCY_MIN_WARMUP = 1024, 200, 10


def latency_row():
    host = (rng.random(LATENCY_ELEMENTS) * 1.5 + 0.5).astype(np.float32)
    x = gpuarray.to_gpu(host)
    expected = float(host.astype(np.float64).sum())
    got = float(gpuarray.sum(x).get())
    if abs(got - expected) > 1e-4 * expected:
        raise ValueError(f"sum is {got}, the host's {expected}")
    for _ in range(LATENCY_MIN_WARMUP):
        gpuarray.sum(x).get()
    ts = []
    for _ in range(max(args.runs, LATENCY_MIN_RUNS)):
        t0 = time.perf_counter()
        gpuarray.sum(x).get()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return {"pattern": "reduce_latency", "dtype": "f32", "size": LATENCY_ELEMENTS,
            "median_ms": float(np.median(ts)), "min_ms": ts[0], "timer": "end-to-end"}


# The cost of one launch, as kiln's launch_overhead rows take it: a square
# of one f32, launched back to back, ms per launch.
def launch_row():
    x = gpuarray.to_gpu(np.array([3.0], np.float32))
    y = gpuarray.empty(1, np.float32)
    square = ElementwiseKernel("float *x, float *y", "y[i] = x[i] * x[i]", "kiln_square")
    square(x, y)
    if float(y.get()[0]) != 9.0:
        raise ValueError(f"3 squared is {float(y.get()[0])}")
    t, launches = sampled(lambda: square(x, y))
    return {"pattern": "launch_overhead", "dtype": "f32", "size": 1,
            "median_ms": float(np.median(t)), "min_ms": float(t[0]), "launches": launches}


rows = []
rng = np.random.default_rng(0x6B696C6E)
for size in [int(v) for v in args.sizes.split(",") if v]:
    for pattern in [c for c in args.cases.split(",") if c]:
        if pattern not in arrays:
            continue
        nbytes = arrays[pattern] * size * np.dtype(np_dt).itemsize
        sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
        try:
            base = (rng.random(size) * 1.5 + 0.5).astype(np_dt)
            sets = [[gpuarray.to_gpu(base) for _ in range(arrays[pattern])] for _ in range(sets_n)]
            t, launches = timed([op(pattern, s, np_dt(1.25)) for s in sets])
            rows.append({"pattern": pattern, "dtype": args.dtype, "size": size,
                         "median_ms": float(np.median(t)), "min_ms": float(t[0]), "launches": launches})
            del sets
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"pycuda {pattern} {size}: {e}", file=sys.stderr)
if "launch_overhead" in args.cases.split(","):
    try:
        rows.append(launch_row())
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"pycuda launch_overhead: {e}", file=sys.stderr)
if "reduce_latency" in args.cases.split(","):
    try:
        rows.append(latency_row())
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"pycuda reduce_latency: {e}", file=sys.stderr)
with open(args.json, "w") as f:
    json.dump({"peer": "pycuda", "version": pycuda.VERSION_TEXT, "rows": rows}, f)
