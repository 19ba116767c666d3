"""CuPy on the same cases and sizes as `kiln bench`, timed the same way.

Usage: python3 cupy_bench.py --cases vector_add,axpy --sizes 1024,67108864 --dtype f32 --runs 20 --json OUT [--fuse]
With --fuse only the array cases run, each expression as one `cupy.fuse` kernel
(the peer `cupy.fuse`); without, they run as plain CuPy expressions.
A plain case name runs at every --sizes size; `name@size` at that size alone
(kiln gives its matmul_* products so: they have sizes of their own). The
products are cupy.matmul: matmul_<dtype>[_tf32] one square product of side
isqrt(size), matmul_batch_<dtype>[_tf32] 256 products of side isqrt(size / 256)
on 3-d arrays (one strided batched GEMM). CuPy reads CUPY_TF32 once, at its
first f32 product: the TF32 rows run only in a process started with
CUPY_TF32=1, the exact f32 rows only in one without it (kiln runs the two
apart). CuPy has no bfloat16 dtype and no public bf16 mode for f32 products:
matmul_bf16 and matmul_f32_bf16 have no CuPy row. Each product row says what
it called and, for f32 inputs, how the product rounded them (a probe: a
product by the identity of 1 + 2^-12, which only fp32 keeps, and of
1 + 2^-9, which TF32 keeps too and bf16 does not).
Writes {"peer": "cupy", "version": ..., "rows": [{pattern, dtype, size, median_ms, min_ms[, timer][, calls]}]}.
The case reduce_latency runs once, at 1 Ki f32, whatever --sizes and --dtype say;
launch_overhead and graph_launch once, over one f32.
Exits with status 3 and a one-line reason on stderr when CuPy cannot run here.
"""
import json, math, os, sys, time

from peer_common import peer_args, sample_windows

try:
    import numpy as np
    import cupy as cp
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # noqa: BLE001 - any failure means the peer is absent
    print(f"cupy unavailable: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    sys.exit(3)

CACHE_BYTES = 64 << 20
args = peer_args(("--fuse", {"action": "store_true"}))
# Whether this process's f32 products may use TF32, as CuPy itself reads CUPY_TF32.
TF32 = int(os.environ.get("CUPY_TF32", "0") or "0") > 0
dt = {"f32": cp.float32, "f64": cp.float64, "i32": cp.int32, "u32": cp.uint32}[args.dtype]



def sampled(run):
    """kiln's sampling method: 3 untimed calls, then calls for --warmup-ms
    of busy time, then --runs samples of `launches` calls each between one
    pair of events, `launches` chosen so a sample covers --sample-ms.
    Returns the sorted ms per call and `launches`."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def window(k):
        start.record()
        for _ in range(k):
            run()
        stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / k

    return sample_windows(window, args)
arrays = {"copy_d2d": 2, "fill": 1, "sequence": 1, "map_square": 2, "map_abs": 2, "map_negate": 2,
          "map_sqrt": 2, "vector_add": 3, "axpy": 3, "user_axpy": 3, "array_axpy": 3, "array_fused_sum": 2,
          "array_row_sums": 1, "random_uniform": 1, "random_normal": 1}
# The array cases: kiln evaluates each expression as one generated kernel.
ARRAY = {"array_axpy", "array_fused_sum", "array_row_sums", "random_uniform", "random_normal"}


# Named functions: cupy.fuse names its kernel after the function, and a
# lambda's name is no C identifier.
def kiln_peer_fused_axpy(a, x, y):
    return a * x + y


def kiln_peer_fused_sum(a, b):
    return cp.sum(cp.sqrt(a * 2 + b))


fused_axpy = cp.fuse(kiln_peer_fused_axpy)
fused_sum = cp.fuse(kiln_peer_fused_sum)
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
    if pattern in ("axpy", "user_axpy"):
        # kiln's user_axpy row is its generated user kernel: CuPy's
        # ElementwiseKernel is the same thing.
        return lambda: kernels["axpy"](alpha, s[0], s[1], s[2])
    if pattern in kernels:
        return lambda: kernels[pattern](s[0], s[1])
    if pattern == "array_axpy":
        # A new array each time, as kiln's row makes one.
        if args.fuse:
            return lambda: fused_axpy(alpha, s[0], s[1])
        return lambda: alpha * s[0] + s[1]
    if pattern == "array_fused_sum":
        two = dt(2)
        if args.fuse:
            return lambda: fused_sum(s[0], s[1])
        return lambda: cp.sqrt(s[0] * two + s[1]).sum()
    if pattern == "array_row_sums":
        rows = s[0].size // 8
        return lambda: s[0][:8 * rows].reshape(8, rows).sum(axis=1)
    if pattern == "random_uniform":
        gen = cp.random.Generator(cp.random.Philox4x3210(0x6B696C6E))
        if np.dtype(dt).kind == "f":
            return lambda: gen.random(s[0].size, dtype=dt, out=s[0])
        return None  # CuPy's Generator has no raw 32-bit fill into out=
    if pattern == "random_normal":
        gen = cp.random.Generator(cp.random.Philox4x3210(0x6B696C6E))
        return lambda: gen.standard_normal(s[0].size, dtype=dt, out=s[0])
    return None


# The 2D patterns (a square of side isqrt(size)) and the sort, measured as
# ../../shared/peers/cupy_patterns.py measured them; each row carries the
# dtype kiln's row has (grayscale u8, sgemm f32, dgemm f64, sort_u32 u32).
GEMMS = {"sgemm": ("f32", cp.float32), "sgemm_cublas": ("f32", cp.float32), "dgemm": ("f64", cp.float64)}
# kiln's matmul_* products: name -> (input dtype label, dtype, batched, whether TF32 is allowed).
PRODUCTS = {"matmul_f32": ("f32", cp.float32, False, False), "matmul_f32_tf32": ("f32", cp.float32, False, True),
            "matmul_f64": ("f64", cp.float64, False, False), "matmul_f16": ("f16", cp.float16, False, False),
            "matmul_batch_f32": ("f32", cp.float32, True, False),
            "matmul_batch_f32_tf32": ("f32", cp.float32, True, True),
            "matmul_batch_f16": ("f16", cp.float16, True, False),
            # kiln's products rounded to the 16-bit input type: cupy.matmul's own.
            "matmul_f16_f16": ("f16", cp.float16, False, False),
            "matmul_batch_f16_f16": ("f16", cp.float16, True, False)}
# Products in one batched row (benches/src/case.rs, BATCH).
BATCH = 256
# kiln's sorts: name -> (key dtype label, key dtype, whether u32 values ride along).
SORTS = {"sort_u32": ("u32", cp.uint32, False), "sort_i32": ("i32", cp.int32, False),
         "sort_f32": ("f32", cp.float32, False), "sort_pairs_u32": ("u32", cp.uint32, True)}
MATRIX = {"transpose", "grayscale", "blur3x3_f32"} | set(GEMMS) | set(SORTS) | set(PRODUCTS)
gray_kernel = cp.ElementwiseKernel(
    "raw uint8 rgb", "uint8 g",
    "g = (unsigned char)(0.299f*rgb[3*i] + 0.587f*rgb[3*i+1] + 0.114f*rgb[3*i+2])", "kiln_peer_gray")


def random_array(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.random(shape, dtype=cp.float64).astype(dtype) * 2 - 1
    return rng.integers(0, 2 ** 31, shape, dtype=cp.int64).astype(dtype)


_rounding = []


def f32_rounding():
    """How cupy.matmul rounds f32 inputs in this process: "fp32", "tf32", "bf16" or "other"."""
    if not _rounding:
        n = 512
        fine, coarse = 1 + 2 ** -12, 1 + 2 ** -9
        x = cp.full((n, n), fine, cp.float32)
        x[:, n // 2:] = coarse
        c = cp.matmul(x, cp.eye(n, dtype=cp.float32))
        got = (float(c[0, 0]), float(c[0, n - 1]))
        _rounding.append({(fine, coarse): "fp32", (1.0, coarse): "tf32", (1.0, 1.0): "bf16"}.get(got, "other"))
    return _rounding[0]


def product_shape(pattern, size):
    """The shape of each operand of a product case: a square of side isqrt(size), or 256 of side isqrt(size / 256)."""
    if pattern in PRODUCTS and PRODUCTS[pattern][2]:
        edge = math.isqrt(size // BATCH)
        return (BATCH, edge, edge)
    side = math.isqrt(size)
    return (side, side)


def product_calls(label, shape):
    """What a product row calls, and how its f32 inputs were rounded."""
    what = f"cupy.matmul on {shape} arrays" if len(shape) == 3 else "cupy.matmul"
    if label != "f32":
        return f"{what}, {label} into {label}"
    return f"{what}, CUPY_TF32={int(TF32)} (f32 inputs used as {f32_rounding()})"


def matrix_case(pattern, size):
    """(dtype label, bytes of one set, a function making one set's timed call)."""
    side = math.isqrt(size)
    if pattern == "transpose":
        def make():
            m, out = random_array((side, side), dt), cp.empty((side, side), dt)
            return lambda: cp.copyto(out, m.T)
        return args.dtype, 2 * side * side * np.dtype(dt).itemsize, make
    if pattern in PRODUCTS:
        label, mdt, _, tf32 = PRODUCTS[pattern]
        if label == "f32" and tf32 != TF32:
            raise ValueError(f"needs CUPY_TF32={int(tf32)}: CuPy reads it once per process")
        shape = product_shape(pattern, size)

        def make():
            a, b = random_array(shape, mdt), random_array(shape, mdt)
            c = cp.empty(shape, mdt)
            return lambda: cp.matmul(a, b, out=c)
        return label, 3 * math.prod(shape) * np.dtype(mdt).itemsize, make
    if pattern in GEMMS:
        label, mdt = GEMMS[pattern]
        if TF32 and mdt == cp.float32:
            raise ValueError("an exact f32 product, and CUPY_TF32 is set")

        def make():
            a, b = random_array((side, side), mdt), random_array((side, side), mdt)
            c = cp.empty((side, side), mdt)
            return lambda: cp.matmul(a, b, out=c)
        return label, 3 * side * side * np.dtype(mdt).itemsize, make
    if pattern == "grayscale":
        def make():
            rgb = rng.integers(0, 256, (side, side, 3), dtype=cp.int32).astype(cp.uint8)
            g = cp.empty((side, side), cp.uint8)
            return lambda: gray_kernel(rgb, g)
        return "u8", 4 * side * side, make
    if pattern == "blur3x3_f32":
        from cupyx.scipy import ndimage

        def make():
            img, out = random_array((side, side), cp.float32), cp.empty((side, side), cp.float32)
            return lambda: ndimage.uniform_filter(img, 3, output=out, mode="nearest")
        return "f32", 2 * side * side * 4, make
    if pattern in SORTS:
        label, kdt, pairs = SORTS[pattern]

        def make():
            if np.dtype(kdt).kind == "f":
                k = (rng.random(size, dtype=cp.float64) * 2e6 - 1e6).astype(kdt)
            else:
                info = np.iinfo(kdt)
                k = rng.integers(info.min, info.max + 1, size, dtype=cp.int64).astype(kdt)
            if not pairs:
                return lambda: cp.sort(k)
            v = rng.integers(0, 2 ** 32, size, dtype=cp.int64).astype(cp.uint32)

            def run():
                # CuPy's sort of pairs: argsort (a stable radix sort), then both gathered.
                order = cp.argsort(k)
                return k[order], v[order]
            return run
        return label, (4 if pairs else 2) * size * 4, make
    return None


# The data-parallel patterns, on the inputs kiln's rows use (floats uniform
# in [0.5, 2), integers in [1, 1000); histograms of int32 or float32 in
# [0, 1024) into 256 bins, or all 7), each result left on the device.
# kiln's histograms: name -> (sample dtype label, sample dtype, whether all are 7).
HISTOGRAMS = {"histogram_i32": ("i32", cp.int32, False), "histogram_i32_skewed": ("i32", cp.int32, True),
              "histogram_f32": ("f32", cp.float32, False), "histogram_f32_skewed": ("f32", cp.float32, True)}
PARALLEL = {"reduce_sum", "dot", "scan_inclusive", "compact", "user_sum_squares", "user_scan"} | set(HISTOGRAMS)
sum_squares = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "kiln_peer_sum_squares")


def bench_input(size, dtype):
    if np.dtype(dtype).kind == "f":
        return (rng.random(size, dtype=cp.float64) * 1.5 + 0.5).astype(dtype)
    return rng.integers(1, 1000, size, dtype=cp.int64).astype(dtype)


def parallel_case(pattern, size):
    """(dtype label, bytes of one set, a function making one set's timed call)."""
    item = np.dtype(dt).itemsize
    threshold = dt(1.25) if np.dtype(dt).kind == "f" else dt(500)
    if pattern == "reduce_sum":
        def make():
            x, out = bench_input(size, dt), cp.empty((), dt)
            return lambda: cp.sum(x, out=out)
        return args.dtype, size * item, make
    if pattern == "dot":
        def make():
            x, y, out = bench_input(size, dt), bench_input(size, dt), cp.empty((), dt)
            return lambda: cp.dot(x, y, out=out)
        return args.dtype, 2 * size * item, make
    if pattern == "user_sum_squares":
        def make():
            x, out = bench_input(size, dt), cp.empty((), dt)
            return lambda: sum_squares(x, out)
        return args.dtype, size * item, make
    if pattern in ("scan_inclusive", "user_scan"):
        # CuPy has no user-defined scan kernel: user_scan's peer is cumsum.
        def make():
            x, y = bench_input(size, dt), cp.empty(size, dt)
            return lambda: cp.cumsum(x, out=y)
        return args.dtype, 2 * size * item, make
    # scan_exclusive has no CuPy row: CuPy has no exclusive scan, and cumsum
    # minus x (two passes, and rounding of its own) would be no peer of one.
    if pattern == "compact":
        def make():
            x = bench_input(size, dt)
            return lambda: x[x > threshold]
        return args.dtype, (size + size // 2) * item, make
    if pattern in HISTOGRAMS:
        label, sample, skewed = HISTOGRAMS[pattern]

        def make():
            if skewed:
                x = cp.full(size, 7, sample)
            elif sample == cp.int32:
                x = rng.integers(0, 1024, size, dtype=cp.int64).astype(cp.int32)
            else:
                # An exact grid of step 2^-14 in [0, 1024): no value rounds up to 1024.
                x = rng.integers(0, 1 << 24, size, dtype=cp.int64).astype(cp.float32) * cp.float32(2.0 ** -14)
            return lambda: cp.histogram(x, bins=256, range=(0, 1024))
        return label, 4 * size, make
    return None


def bench_matrix(pattern, size):
    label, nbytes, make = matrix_case(pattern, size) or parallel_case(pattern, size)
    sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
    fns = [make() for _ in range(sets_n)]
    counter = [0]

    def run():
        fns[counter[0] % sets_n]()
        counter[0] += 1

    t, launches = sampled(run)
    del fns
    cp.get_default_memory_pool().free_all_blocks()
    row = {"pattern": pattern, "dtype": label, "size": size, "median_ms": float(np.median(t)), "min_ms": float(t[0]),
           "launches": launches}
    if pattern in PRODUCTS or pattern in GEMMS:
        row["calls"] = product_calls(label, product_shape(pattern, size))
    return row


# The end-to-end latency of small work, as kiln's reduce_latency rows take
# it: the sum of 1 Ki f32 already on the device, read back to the host
# (float() blocks until the scalar is there), on the host clock.
LATENCY_ELEMENTS, LATENCY_MIN_RUNS, LATENCY_MIN_WARMUP = 1024, 200, 10


def latency_row():
    x = (rng.random(LATENCY_ELEMENTS, dtype=cp.float64) * 1.5 + 0.5).astype(cp.float32)
    expected = float(cp.asnumpy(x).astype(np.float64).sum())
    got = float(cp.sum(x))
    if abs(got - expected) > 1e-4 * expected:
        raise ValueError(f"sum is {got}, the host's {expected}")
    for _ in range(LATENCY_MIN_WARMUP):
        float(cp.sum(x))
    ts = []
    for _ in range(max(args.runs, LATENCY_MIN_RUNS)):
        t0 = time.perf_counter()
        float(cp.sum(x))
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return {"pattern": "reduce_latency", "dtype": "f32", "size": LATENCY_ELEMENTS,
            "median_ms": float(np.median(ts)), "min_ms": ts[0], "timer": "end-to-end"}


# The cost of one launch, as kiln's launch_overhead rows take it: a square
# of one f32, launched back to back, ms per launch.
def launch_row():
    x = cp.full(1, 3.0, cp.float32)
    y = cp.empty(1, cp.float32)
    cp.square(x, out=y)
    if float(y[0]) != 9.0:
        raise ValueError(f"3 squared is {float(y[0])}")
    t, launches = sampled(lambda: cp.square(x, out=y))
    return {"pattern": "launch_overhead", "dtype": "f32", "size": 1,
            "median_ms": float(np.median(t)), "min_ms": float(t[0]), "launches": launches}


# The cost of one kernel of a graph, as kiln's graph_launch rows take it: 100
# dependent kernels (x += 1 on one f32) captured on a stream into a CUDA graph
# (CuPy's Stream.begin_capture / end_capture), replayed back to back, ms per kernel.
GRAPH_KERNELS = 100


def graph_row():
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.zeros(1, cp.float32)
        one = cp.ones(1, cp.float32)
        cp.add(x, one, out=x)
        x.fill(0)
        s.synchronize()
        s.begin_capture()
        for _ in range(GRAPH_KERNELS):
            cp.add(x, one, out=x)
        g = s.end_capture()
        g.launch(stream=s)
        s.synchronize()
        if float(x[0]) != GRAPH_KERNELS:
            raise ValueError(f"a replay of {GRAPH_KERNELS} kernels gave {float(x[0])}")
        t, launches = sampled(lambda: g.launch(stream=s))
    return {"pattern": "graph_launch", "dtype": "f32", "size": 1,
            "median_ms": float(np.median(t)) / GRAPH_KERNELS, "min_ms": float(t[0]) / GRAPH_KERNELS,
            "launches": launches}


rows = []
rng = cp.random.default_rng(0x6B696C6E)
entries = [c for c in args.cases.split(",") if c]
# The cases at their own sizes (`name@size`), measured after the sweep's.
own_sizes = [(name, int(n)) for name, _, n in (c.partition("@") for c in entries if "@" in c)]
for size in [int(v) for v in args.sizes.split(",") if v]:
    for pattern in [c for c in entries if "@" not in c]:
        if args.fuse and pattern not in ARRAY - {"random_uniform", "array_row_sums"}:
            continue
        if pattern in MATRIX or pattern in PARALLEL:
            try:
                rows.append(bench_matrix(pattern, size))
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"cupy {pattern} {size}: {e}", file=sys.stderr)
            continue
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

            t, launches = sampled(run)
            rows.append({"pattern": pattern, "dtype": args.dtype, "size": size,
                         "median_ms": float(np.median(t)), "min_ms": float(t[0]), "launches": launches})
            del sets, fns, base
            cp.get_default_memory_pool().free_all_blocks()
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"cupy {pattern} {size}: {e}", file=sys.stderr)
for pattern, size in own_sizes:
    if args.fuse or pattern not in MATRIX:
        continue
    try:
        rows.append(bench_matrix(pattern, size))
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"cupy {pattern} {size}: {e}", file=sys.stderr)
if "launch_overhead" in args.cases.split(",") and not args.fuse:
    try:
        rows.append(launch_row())
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"cupy launch_overhead: {e}", file=sys.stderr)
if "graph_launch" in args.cases.split(",") and not args.fuse:
    try:
        rows.append(graph_row())
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"cupy graph_launch: {e}", file=sys.stderr)
if "reduce_latency" in args.cases.split(",") and not args.fuse:
    try:
        rows.append(latency_row())
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"cupy reduce_latency: {e}", file=sys.stderr)
with open(args.json, "w") as f:
    json.dump({"peer": "cupy", "version": cp.__version__, "rows": rows}, f)
