"""The linear-algebra peers of `kiln bench --linalg`: cupy.linalg (cuSOLVER)
and torch.linalg on the GPU, numpy.linalg and scipy.linalg (LAPACK, on every
core their BLAS uses) on the CPU, each timed on the cases kiln times, in the
same run.

GPU calls are timed between CUDA events around windows of back-to-back
calls (kiln's sampling: warm-up, then --runs windows, the median kept);
CPU calls on the host clock. Inputs are the matrices kiln factors: random
(`solve`, `lu`, `qr`), symmetric positive definite (`cholesky`), symmetric
(`eigh`). `lu` is `lu_factor` (getrf): torch.linalg's, cupyx.scipy.linalg's
and scipy.linalg's, the last two for single matrices only; NumPy has none.

Writes a JSON list of {"peer", "case", "ms", "min_ms", "calls"} to --json;
a peer that is not installed is reported as {"peer", "absent": reason}."""
import argparse, json

from peer_common import record, time_on_events, time_on_host

ap = argparse.ArgumentParser()
ap.add_argument("--cases", required=True, help="JSON list of {name, op, batch, n, dtype, cpu}")
ap.add_argument("--runs", type=int, default=10)
ap.add_argument("--sample-ms", type=float, default=2.0)
ap.add_argument("--warmup-ms", type=float, default=100.0)
ap.add_argument("--json", required=True)
ap.add_argument("--cpu", action="store_true", help="time the CPU peers too")
ap.add_argument("--cpu-runs", type=int, default=3)
args = ap.parse_args()
cases = json.loads(args.cases)
out = []


def inputs(xp, case, rng_normal):
    """(a, b) for a case, `rng_normal(shape, dtype)` the library's generator."""
    b, n = case["batch"], case["n"]
    shape = (n, n) if b == 1 else (b, n, n)
    dtype = xp.float32 if case["dtype"] == "f32" else xp.float64
    a = rng_normal(shape, dtype)
    if case["op"] in ("cholesky", "eigh"):
        a = (a + xp.swapaxes(a, -1, -2)) / 2
    if case["op"] == "cholesky":
        a = a + n * xp.eye(n, dtype=dtype)
    rhs = rng_normal(shape[:-1], dtype)
    return a, rhs


def call_of(lib, case, a, rhs, lu=None):
    """The peer's call of `case` (`lu` its lu_factor, if it has one for a's
    rank), or None where it has none."""
    op = case["op"]
    if op == "lu":
        return None if lu is None else (lambda: lu(a))
    if op == "solve":
        return lambda: lib.solve(a, rhs[..., None] if a.ndim == 3 else rhs)
    if op == "cholesky":
        return lambda: lib.cholesky(a)
    if op == "qr":
        return lambda: lib.qr(a)
    if op == "eigh":
        return lambda: lib.eigh(a)
    raise ValueError(op)


try:
    import cupy as cp
    try:
        from cupyx.scipy.linalg import lu_factor as cupy_lu
    except Exception:  # noqa: BLE001 (cupyx.scipy needs SciPy's interfaces)
        cupy_lu = None
    for case in cases:
        a, rhs = inputs(cp, case, lambda s, d: cp.random.standard_normal(s, dtype=d))
        f = call_of(cp.linalg, case, a, rhs, cupy_lu if a.ndim == 2 else None)
        if f is not None:
            times, k = time_on_events(f, cp.cuda.Event(), cp.cuda.Event(), cp.cuda.get_elapsed_time, args)
            record(out, "cupy.linalg", case, times, k)
        del a, rhs
        cp.get_default_memory_pool().free_all_blocks()
except Exception as e:  # noqa: BLE001 (a peer that cannot run is reported, not fatal)
    out.append({"peer": "cupy.linalg", "absent": f"{type(e).__name__}: {e}"})

try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")

    class TorchNs:
        float32, float64 = torch.float32, torch.float64

        @staticmethod
        def swapaxes(x, i, j):
            return x.transpose(i, j)

        @staticmethod
        def eye(n, dtype):
            return torch.eye(n, dtype=dtype, device="cuda")

    for case in cases:
        a, rhs = inputs(TorchNs, case, lambda s, d: torch.randn(s, dtype=d, device="cuda"))
        f = call_of(torch.linalg, case, a, rhs, torch.linalg.lu_factor)
        event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        times, k = time_on_events(f, event(), event(), lambda x, y: x.elapsed_time(y), args)
        record(out, "torch.linalg", case, times, k)
        del a, rhs
        torch.cuda.empty_cache()
except Exception as e:  # noqa: BLE001
    out.append({"peer": "torch.linalg", "absent": f"{type(e).__name__}: {e}"})

if args.cpu:
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001
        out.append({"peer": "numpy.linalg", "absent": f"{type(e).__name__}: {e}"})
        args.cpu = False

if args.cpu:
    libs = [("numpy.linalg", np.linalg)]
    try:
        import scipy.linalg as sla

        class Scipy:
            solve = staticmethod(lambda a, b: sla.solve(a, b, check_finite=False) if a.ndim == 2 else np.linalg.solve(a, b))
            cholesky = staticmethod(lambda a: sla.cholesky(a, lower=True, check_finite=False) if a.ndim == 2 else np.linalg.cholesky(a))
            qr = staticmethod(lambda a: sla.qr(a, mode="economic", check_finite=False) if a.ndim == 2 else np.linalg.qr(a))
            eigh = staticmethod(lambda a: sla.eigh(a, check_finite=False, driver="evd") if a.ndim == 2 else np.linalg.eigh(a))
            lu_factor = staticmethod(lambda a: sla.lu_factor(a, check_finite=False))
        libs.append(("scipy.linalg", Scipy))
    except Exception as e:  # noqa: BLE001
        out.append({"peer": "scipy.linalg", "absent": f"{type(e).__name__}: {e}"})
    rng = np.random.default_rng(1)
    for case in cases:
        if not case["cpu"]:
            continue
        a, rhs = inputs(np, case, lambda s, d: rng.standard_normal(s, dtype=d))
        for name, lib in libs:
            lu = getattr(lib, "lu_factor", None) if a.ndim == 2 else None
            f = call_of(lib, case, a, rhs, lu)
            if f is not None:
                record(out, name, case, time_on_host(f, args.cpu_runs), 1)

with open(args.json, "w") as fh:
    json.dump(out, fh, indent=1)
