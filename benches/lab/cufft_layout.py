"""cuFFT's speed by the way a plan is made, for the layouts of `kiln bench
--fft`: the advanced layout with explicit storage dimensions (what kiln
passed), the basic layout (NULL `inembed`/`onembed`, what CuPy passes for
packed data), each with every libcufft found on the machine, and
`cupy.fft` itself. Times are device events around windows of back-to-back
executions (median of --runs windows), as `kiln bench` and the peers time.

    python3 benches/lab/cufft_layout.py [--runs 30]
"""
import argparse
import ctypes
import glob
import os

import cupy as cp

C2C, R2C = 0x29, 0x2A
CASES = [  # (name, kind, n, batch)
    ("c2c_1d_1024x16384", C2C, 1024, 16384),
    ("c2c_1d_1048576x64", C2C, 1 << 20, 64),
    ("r2c_1d_1024x16384", R2C, 1024, 16384),
    ("r2c_1d_1048576x64", R2C, 1 << 20, 64),
    ("r2c_1d_16777216x1", R2C, 1 << 24, 1),
]


def libraries():
    """The libcufft files CuPy loaded and those on the usual paths."""
    cp.fft.fft(cp.ones(8, cp.complex64))
    cp.cuda.Device().synchronize()
    loaded = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcufft.so" in path:
                loaded.add(os.path.realpath(path))
    found = set(loaded)
    for pattern in ["/usr/local/cuda/lib64/libcufft.so.*", "/usr/lib/x86_64-linux-gnu/libcufft.so.*"]:
        found.update(os.path.realpath(p) for p in glob.glob(pattern))
    import site
    for d in site.getsitepackages():
        found.update(os.path.realpath(p) for p in glob.glob(f"{d}/nvidia/cufft/lib/libcufft.so.*"))
    return sorted(found), loaded


def timed(run, runs):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        run()
    start.record()
    run()
    stop.record()
    stop.synchronize()
    k = max(1, min(200, int(10.0 / max(cp.cuda.get_elapsed_time(start, stop), 1e-3))))
    times = []
    for _ in range(runs):
        start.record()
        for _ in range(k):
            run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / k)
    return sorted(times)[len(times) // 2]


def plan(lib, kind, n, batch, basic):
    ll = ctypes.c_longlong
    h = ctypes.c_int()
    assert lib.cufftCreate(ctypes.byref(h)) == 0
    assert lib.cufftSetAutoAllocation(h, 0) == 0
    nn = (ll * 1)(n)
    out_n = n // 2 + 1 if kind == R2C else n
    inembed = None if basic else (ll * 1)(n)
    onembed = None if basic else (ll * 1)(out_n)
    work = ctypes.c_size_t()
    rc = lib.cufftMakePlanMany64(h, 1, nn, inembed, ll(1), ll(n), onembed, ll(1), ll(out_n), kind, ll(batch),
                                 ctypes.byref(work))
    assert rc == 0, f"cufftMakePlanMany64: {rc}"
    area = cp.empty(max(work.value, 1), cp.uint8)
    assert lib.cufftSetWorkArea(h, ctypes.c_void_p(area.data.ptr)) == 0
    assert lib.cufftSetStream(h, ctypes.c_void_p(cp.cuda.get_current_stream().ptr)) == 0
    return h, area, work.value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    found, loaded = libraries()
    print("libcufft found:", found)
    print("loaded by cupy:", sorted(loaded))
    print(f"{'case':22} {'library':40} {'layout':9} {'ms':>9} {'work MiB':>9}")
    for name, kind, n, batch in CASES:
        out_n = n // 2 + 1 if kind == R2C else n
        if kind == R2C:
            x = cp.random.standard_normal(n * batch, dtype=cp.float32)
        else:
            x = (cp.random.standard_normal(n * batch, dtype=cp.float32)
                 + 1j * cp.random.standard_normal(n * batch, dtype=cp.float32)).astype(cp.complex64)
        y = cp.empty(out_n * batch, cp.complex64)
        for path in found:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
            ver = ctypes.c_int()
            lib.cufftGetVersion(ctypes.byref(ver))
            for basic in (False, True):
                h, area, work = plan(lib, kind, n, batch, basic)
                if kind == R2C:
                    run = lambda: lib.cufftExecR2C(h, ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr))
                else:
                    run = lambda: lib.cufftExecC2C(h, ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), -1)
                ms = timed(run, args.runs)
                label = f"{os.path.basename(path)} ({ver.value})"
                print(f"{name:22} {label:40} {'basic' if basic else 'advanced':9} {ms:9.4f} {work / 2**20:9.1f}")
                lib.cufftDestroy(h)
                del area
        xs = x.reshape(batch, n)
        f = (lambda: cp.fft.rfft(xs, axis=-1)) if kind == R2C else (lambda: cp.fft.fft(xs, axis=-1))
        print(f"{name:22} {'cupy.fft':40} {'':9} {timed(f, args.runs):9.4f}")


if __name__ == "__main__":
    main()
