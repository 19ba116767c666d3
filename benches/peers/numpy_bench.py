"""NumPy on the same cases and sizes as `kiln bench`, the peer of its CPU rows.

Usage: python3 numpy_bench.py --cases vector_add,axpy --sizes 1024,67108864 --dtype f32 --runs 20 --json OUT
A plain case name runs at every --sizes size; `name@size` at that size alone
(kiln gives its matmul_* products so: they have sizes of their own; NumPy
measures matmul_f32 and matmul_f64, the products kiln's CPU rows compute).
Writes {"peer": "numpy", "version": ..., "rows": [{pattern, dtype, size, median_ms, min_ms, launches}]}.
Timed on the host clock as kiln's CPU rows are (their events are the
monotonic clock): 3 untimed calls, calls for --warmup-ms of busy time, then
--runs samples of `launches` calls each, `launches` chosen so a sample
covers --sample-ms; the median and the fastest sample's time per call.
Every case writes into arrays made before timing where NumPy takes out=;
where it cannot (arange, boolean indexing, sort, argsort and gather,
array expressions, integer random numbers), the new array is part of
the time, as it is of NumPy's users'. Exits with status 3 and a one-line
reason on stderr when NumPy cannot run here.
"""
import json, math, sys, time

from peer_common import peer_args, sample_windows

try:
    import numpy as np
except Exception as e:  # noqa: BLE001 - any failure means the peer is absent
    print(f"numpy unavailable: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
    sys.exit(3)

CACHE_BYTES = 64 << 20
# Products past this many flops are skipped, as kiln's CPU rows skip them
# (benches/src/matrix.rs, CPU_FLOPS): up to 2048^3.
SLOW_FLOPS = 1 << 35
args = peer_args()
dt = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32}[args.dtype]
rng = np.random.default_rng(0x6B696C6E)


def sampled(run):
    """Sorted ms per call over --runs samples, and the calls per sample."""
    def window(k):
        t0 = time.perf_counter()
        for _ in range(k):
            run()
        return (time.perf_counter() - t0) * 1e3 / k

    return sample_windows(window, args)


def bench_input(shape, dtype):
    """kiln's inputs: floats uniform in [0.5, 2), integers in [1, 1000)."""
    if np.dtype(dtype).kind == "f":
        return (rng.random(shape) * 1.5 + 0.5).astype(dtype)
    return rng.integers(1, 1000, shape).astype(dtype)


def case(pattern, size):
    """(dtype label, bytes of one set, a function making one set's timed call), or None."""
    item = np.dtype(dt).itemsize
    alpha = dt(1.25)
    threshold = dt(1.25) if np.dtype(dt).kind == "f" else dt(500)
    side = math.isqrt(size)
    unary = {"map_square": np.square, "map_abs": np.abs, "map_negate": np.negative, "map_sqrt": np.sqrt}
    if pattern == "copy_d2d":
        def make():
            x, y = bench_input(size, dt), np.empty(size, dt)
            return lambda: np.copyto(y, x)
        return args.dtype, 2 * size * item, make
    if pattern == "fill":
        def make():
            y = np.empty(size, dt)
            return lambda: y.fill(alpha)
        return args.dtype, size * item, make
    if pattern == "sequence":
        return args.dtype, size * item, lambda: (lambda: np.arange(0, size, dtype=dt))
    if pattern in unary:
        if pattern == "map_sqrt" and np.dtype(dt).kind != "f":
            return None
        f = unary[pattern]

        def make():
            x, y = bench_input(size, dt), np.empty(size, dt)
            return lambda: f(x, out=y)
        return args.dtype, 2 * size * item, make
    if pattern == "vector_add":
        def make():
            x, y, z = bench_input(size, dt), bench_input(size, dt), np.empty(size, dt)
            return lambda: np.add(x, y, out=z)
        return args.dtype, 3 * size * item, make
    if pattern == "array_axpy":
        # The array expression as a NumPy user writes it: a new array each
        # time, as kiln's row makes one.
        def make():
            x, y = bench_input(size, dt), bench_input(size, dt)
            return lambda: alpha * x + y
        return args.dtype, 3 * size * item, make
    if pattern in ("array_fused_sum", "array_row_sums") and np.dtype(dt).kind != "f":
        return None  # kiln's array rows are of floats
    if pattern == "array_fused_sum":
        # sqrt(2x + y) summed, as a NumPy user writes it (its temporaries
        # are part of the time).
        def make():
            x, y, two = bench_input(size, dt), bench_input(size, dt), dt(2)
            return lambda: np.sqrt(x * two + y).sum()
        return args.dtype, 2 * size * item, make
    if pattern == "array_row_sums":
        def make():
            x, rows = bench_input(size, dt), size // ROWS
            return lambda: x[:ROWS * rows].reshape(ROWS, rows).sum(axis=1)
        return args.dtype, size * item, make
    if pattern in ("random_uniform", "random_normal"):
        if np.dtype(dt).kind != "f" and pattern == "random_normal":
            return None

        def make():
            # Philox, as kiln's (NumPy's is the 4x64 variant of kiln's 4x32).
            gen, y = np.random.Generator(np.random.Philox(0x6B696C6E)), np.empty(size, dt)
            if pattern == "random_normal":
                return lambda: gen.standard_normal(size, dtype=dt, out=y)
            if np.dtype(dt).kind == "f":
                return lambda: gen.random(size, dtype=dt, out=y)
            # Generator.integers takes no out=: a new array each call.
            return lambda: gen.integers(0, 1 << 32, size, dtype=dt)
        return args.dtype, size * item, make
    if pattern in ("axpy", "user_axpy"):
        # NumPy evaluates a * x + y as two passes through a temporary; with
        # out= it is the best a NumPy user writes.
        def make():
            x, y, z = bench_input(size, dt), bench_input(size, dt), np.empty(size, dt)

            def run():
                np.multiply(alpha, x, out=z)
                np.add(z, y, out=z)
            return run
        return args.dtype, 3 * size * item, make
    if pattern in ("reduce_sum", "user_sum_squares"):
        def make():
            x = bench_input(size, dt)
            if pattern == "reduce_sum":
                return lambda: x.sum()
            return lambda: np.dot(x, x) if np.dtype(dt).kind == "f" else (x * x).sum()
        return args.dtype, size * item, make
    if pattern == "dot":
        def make():
            x, y = bench_input(size, dt), bench_input(size, dt)
            return lambda: np.dot(x, y)
        return args.dtype, 2 * size * item, make
    if pattern in ("scan_inclusive", "user_scan"):
        def make():
            x, y = bench_input(size, dt), np.empty(size, dt)
            return lambda: np.cumsum(x, out=y)
        return args.dtype, 2 * size * item, make
    # scan_exclusive has no NumPy row: NumPy has no exclusive cumsum, and
    # cumsum minus x (two passes, and rounding of its own) would be no peer of one.
    if pattern == "compact":
        def make():
            x = bench_input(size, dt)
            return lambda: x[x > threshold]
        return args.dtype, (size + size // 2) * item, make
    if pattern in ("histogram_i32", "histogram_i32_skewed"):
        def make():
            if pattern == "histogram_i32":
                x = rng.integers(0, 1024, size).astype(np.int32)
            else:
                x = np.full(size, 7, np.int32)
            # 256 bins of width 4 over [0, 1024): bincount of x >> 2, NumPy's fast path.
            return lambda: np.bincount(x >> 2, minlength=256)
        return "i32", 4 * size, make
    if pattern in ("histogram_f32", "histogram_f32_skewed"):
        def make():
            if pattern == "histogram_f32":
                # An exact grid of step 2^-14 in [0, 1024): no value rounds up to 1024.
                x = rng.integers(0, 1 << 24, size).astype(np.float32) * np.float32(2.0 ** -14)
            else:
                x = np.full(size, 7, np.float32)
            # Floats have no bincount fast path: np.histogram with the range.
            return lambda: np.histogram(x, bins=256, range=(0, 1024))
        return "f32", 4 * size, make
    if pattern == "transpose":
        def make():
            m, out = bench_input((side, side), dt), np.empty((side, side), dt)
            return lambda: np.copyto(out, m.T)
        return args.dtype, 2 * side * side * item, make
    if pattern in GEMMS:
        if 2 * side ** 3 > SLOW_FLOPS:
            return None  # kiln's CPU rows skip these too
        label, mdt = GEMMS[pattern]

        def make():
            a, b = bench_input((side, side), mdt), bench_input((side, side), mdt)
            c = np.empty((side, side), mdt)
            return lambda: np.matmul(a, b, out=c)
        return label, 3 * side * side * np.dtype(mdt).itemsize, make
    if pattern == "grayscale":
        def make():
            rgb = rng.integers(0, 256, (side, side, 3)).astype(np.uint8)
            g = np.empty((side, side), np.uint8)
            w = np.array([0.299, 0.587, 0.114], np.float32)
            return lambda: np.copyto(g, rgb @ w, casting="unsafe")
        return "u8", 4 * side * side, make
    if pattern == "blur3x3_f32":
        def make():
            img, out = bench_input((side, side), np.float32), np.empty((side, side), np.float32)
            pad = np.empty((side + 2, side + 2), np.float32)

            def run():
                # Edges clamped, as kiln's: the image padded with its border, then nine shifted sums.
                pad[1:-1, 1:-1] = img
                pad[0, 1:-1], pad[-1, 1:-1] = img[0], img[-1]
                pad[:, 0], pad[:, -1] = pad[:, 1], pad[:, -2]
                np.copyto(out, pad[:-2, :-2])
                for dy in range(3):
                    for dx in range(3):
                        if dy or dx:
                            np.add(out, pad[dy:dy + side, dx:dx + side], out=out)
                np.multiply(out, np.float32(1.0 / 9.0), out=out)
            return run
        return "f32", 2 * side * side * 4, make
    if pattern in SORTS:
        label, kdt, pairs = SORTS[pattern]

        def make():
            k = sort_keys(size, kdt)
            if not pairs:
                return lambda: np.sort(k)
            v = rng.integers(0, 2 ** 32, size, dtype=np.uint64).astype(np.uint32)

            def run():
                # NumPy's sort of pairs: a stable argsort, then both gathered.
                order = np.argsort(k, kind="stable")
                return k[order], v[order]
            return run
        return label, (4 if pairs else 2) * size * 4, make
    return None


# The rows array_row_sums folds its elements into (benches/src/array.rs, ROWS).
ROWS = 8
# kiln's products: name -> (dtype label, dtype).
GEMMS = {"sgemm": ("f32", np.float32), "sgemm_cublas": ("f32", np.float32), "dgemm": ("f64", np.float64),
         "matmul_f32": ("f32", np.float32), "matmul_f64": ("f64", np.float64)}
# kiln's sorts: name -> (key dtype label, key dtype, whether u32 values ride along).
SORTS = {"sort_u32": ("u32", np.uint32, False), "sort_i32": ("i32", np.int32, False),
         "sort_f32": ("f32", np.float32, False), "sort_pairs_u32": ("u32", np.uint32, True)}


def sort_keys(size, kdt):
    """kiln's sort keys: integers over their whole range, floats uniform in [-1e6, 1e6)."""
    if np.dtype(kdt).kind == "f":
        return (rng.random(size) * 2e6 - 1e6).astype(kdt)
    info = np.iinfo(kdt)
    return rng.integers(info.min, info.max + 1, size, dtype=np.int64).astype(kdt)


def bench(pattern, size):
    made = case(pattern, size)
    if made is None:
        return None
    label, nbytes, make = made
    # Sets enough to exceed the caches, as kiln's rows rotate buffers.
    sets_n = max(1, min(8, -(-2 * CACHE_BYTES // max(nbytes, 1))))
    fns = [make() for _ in range(sets_n)]
    counter = [0]

    def run():
        fns[counter[0] % sets_n]()
        counter[0] += 1

    t, calls = sampled(run)
    return {"pattern": pattern, "dtype": label, "size": size, "median_ms": float(np.median(t)), "min_ms": float(t[0]),
            "launches": calls}


rows = []
entries = [c for c in args.cases.split(",") if c]
work = [(c, size) for size in [int(v) for v in args.sizes.split(",") if v] for c in entries if "@" not in c]
work += [(name, int(n)) for name, _, n in (c.partition("@") for c in entries if "@" in c)]
for pattern, size in work:
    try:
        row = bench(pattern, size)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"numpy {pattern} {size}: {e}", file=sys.stderr)
        continue
    if row is not None:
        rows.append(row)
with open(args.json, "w") as f:
    json.dump({"peer": "numpy", "version": np.__version__, "rows": rows}, f)
