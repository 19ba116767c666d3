"""What kiln's Python peers share, written beside each of them by `kiln bench`
(benches/src/peers.rs): the arguments kiln passes every peer, and kiln's way
of sampling back-to-back calls."""
import argparse, math, time

# The most calls one sample window holds.
MAX_LAUNCHES = 1000


def peer_args(*extra):
    """The parsed arguments kiln passes every peer; each of `extra` is a
    (flag, keyword arguments) pair a peer adds."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", required=True)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup-ms", type=float, default=100.0)
    ap.add_argument("--sample-ms", type=float, default=2.0)
    ap.add_argument("--json", required=True)
    for flag, kwargs in extra:
        ap.add_argument(flag, **kwargs)
    return ap.parse_args()


def sample_windows(window, args):
    """kiln's sampling method over `window(k)`, which times k calls back to
    back and returns ms per call: 3 untimed calls, then windows for
    --warmup-ms (each sized to about --sample-ms), then --runs windows.
    Returns the sorted ms per call and the calls per window."""
    def count(ms):
        return max(1, min(MAX_LAUNCHES, math.ceil(args.sample_ms / ms))) if ms > 0 else MAX_LAUNCHES

    for _ in range(3):
        window(1)
    launches = count(window(1))
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e3 < args.warmup_ms:
        launches = count(window(launches))
    return sorted(window(launches) for _ in range(max(args.runs, 1))), launches


def time_on_events(f, start, stop, elapsed, args):
    """kiln's sampling of f() between two CUDA events (`elapsed(start, stop)`
    in ms): the sorted ms per call and the calls per window."""
    def window(k):
        start.record()
        for _ in range(k):
            f()
        stop.record()
        stop.synchronize()
        return elapsed(start, stop) / k
    return sample_windows(window, args)


def record(out, peer, case, times, k):
    """Append a peer's median and fastest ms of `case` to `out`."""
    out.append({"peer": peer, "case": case["name"], "ms": times[len(times) // 2], "min_ms": times[0], "calls": k})


def time_on_host(f, runs):
    """f() once untimed, then `runs` calls on the host clock: the sorted ms."""
    f()
    times = []
    for _ in range(max(runs, 1)):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)
