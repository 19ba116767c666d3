"""The FFT peers of `kiln bench --fft`: cupy.fft (cuFFT) and torch.fft on
the GPU, numpy.fft (pocketfft, one thread) and scipy.fft (one thread and
every core) on the CPU, each timed on the cases kiln times, in the same run.

GPU calls are timed between CUDA events around windows of back-to-back
calls (kiln's sampling: warm-up, then --runs windows, the median kept);
CPU calls on the host clock. Each call allocates its output, as the
libraries' own API does (CuPy's and PyTorch's from their pools).

Writes a JSON list of {"peer", "case", "ms", "calls"} to --json; a peer
that is not installed is reported as {"peer", "absent": reason}."""
import argparse, json

from peer_common import record, time_on_events, time_on_host

ap = argparse.ArgumentParser()
ap.add_argument("--cases", required=True, help="JSON list of {name, shape, axes, real}")
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--sample-ms", type=float, default=2.0)
ap.add_argument("--warmup-ms", type=float, default=100.0)
ap.add_argument("--json", required=True)
ap.add_argument("--cpu", action="store_true", help="time the CPU peers too")
ap.add_argument("--cpu-runs", type=int, default=3, help="timed calls of each CPU case (a large one takes a second)")
args = ap.parse_args()
cases = json.loads(args.cases)
out = []


def _with_workers(lib, workers, g):
    with lib.set_workers(workers):
        return g()


def call_of(lib, case, x):
    axes = tuple(case["axes"])
    if case["real"]:
        return lambda: lib.rfftn(x, axes=axes) if len(axes) > 1 else lib.rfft(x, axis=axes[0])
    return lambda: lib.fftn(x, axes=axes) if len(axes) > 1 else lib.fft(x, axis=axes[0])


try:
    import cupy as cp
    for case in cases:
        shape = tuple(case["shape"])
        x = cp.random.standard_normal(shape, dtype=cp.float32)
        if not case["real"]:
            x = (x + 1j * cp.random.standard_normal(shape, dtype=cp.float32)).astype(cp.complex64)
        f = call_of(cp.fft, case, x)
        times, k = time_on_events(f, cp.cuda.Event(), cp.cuda.Event(), cp.cuda.get_elapsed_time, args)
        record(out, "cupy.fft", case, times, k)
        del x
        cp.get_default_memory_pool().free_all_blocks()
except Exception as e:  # noqa: BLE001 (a peer that cannot run is reported, not fatal)
    out.append({"peer": "cupy.fft", "absent": f"{type(e).__name__}: {e}"})

try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    for case in cases:
        shape = tuple(case["shape"])
        dtype = torch.float32 if case["real"] else torch.complex64
        x = torch.randn(shape, dtype=dtype, device="cuda")
        axes = tuple(case["axes"])
        if case["real"]:
            f = (lambda x=x, axes=axes: torch.fft.rfftn(x, dim=axes))
        else:
            f = (lambda x=x, axes=axes: torch.fft.fftn(x, dim=axes))
        event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        times, k = time_on_events(f, event(), event(), lambda a, b: a.elapsed_time(b), args)
        record(out, "torch.fft", case, times, k)
        del x
        torch.cuda.empty_cache()
except Exception as e:  # noqa: BLE001
    out.append({"peer": "torch.fft", "absent": f"{type(e).__name__}: {e}"})

if args.cpu:
    import numpy as np
    cpu_libs = [("numpy.fft", np.fft, None)]
    try:
        import scipy.fft as sfft
        cpu_libs += [("scipy.fft", sfft, 1), ("scipy.fft (all cores)", sfft, -1)]
    except Exception as e:  # noqa: BLE001
        out.append({"peer": "scipy.fft", "absent": f"{type(e).__name__}: {e}"})
    rng = np.random.default_rng(1)
    for case in cases:
        shape = tuple(case["shape"])
        x = rng.standard_normal(shape, dtype=np.float32)
        if not case["real"]:
            x = (x + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(np.complex64)
        for name, lib, workers in cpu_libs:
            g = call_of(lib, case, x)
            f = g if workers is None else (lambda lib=lib, workers=workers, g=g: _with_workers(lib, workers, g))

            record(out, name, case, time_on_host(f, args.cpu_runs), 1)


with open(args.json, "w") as fh:
    json.dump(out, fh, indent=1)
