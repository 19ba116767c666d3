"""Two `kiln bench` JSON reports of the same machine, row by row: for the
CUDA and wgpu rows both hold, the median over rows of new time / old time
at 1 Mi and at 64 Mi, and every row more than 2% away.

    python3 benches/h100/compare.py OLD.json NEW.json
"""
import json
import statistics
import sys

SIZES = [(1 << 20, "1 Mi"), (64 << 20, "64 Mi")]
GPU_BACKENDS = ("cuda", "wgpu")


def rows(path):
    """A report's GPU rows by (backend, pattern, dtype, size)."""
    with open(path) as f:
        report = json.load(f)
    return {(r["backend"], r["pattern"], r["dtype"], r["size"]): r
            for r in report["rows"] if r.get("backend") in GPU_BACKENDS and r.get("median_ms")}


def main(old_path, new_path):
    old, new = rows(old_path), rows(new_path)
    keys = [k for k in new if k in old]
    print(len(keys), "rows in both")
    for size, label in SIZES:
        at = [k for k in keys if k[3] == size]
        if not at:
            print(f"{label}: no rows in both")
            continue
        ratios = [new[k]["median_ms"] / old[k]["median_ms"] for k in at]
        print(f"{label}: {len(at)} rows, median new/old time {statistics.median(ratios):.4f}")
        for k, r in zip(at, ratios):
            if abs(r - 1) > 0.02:
                print(f"  beyond 2%: {k[0]} {k[1]} {k[2]} {label} old {old[k]['median_ms']:.4f} "
                      f"new {new[k]['median_ms']:.4f} ms ratio {r:.3f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
