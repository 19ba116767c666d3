"""The README's H100 table from `kiln bench` JSON reports.

Usage: python3 benches/h100/readme_table.py REPORT.json [REPORT.json ...]

Rows at 64 Mi elements (8192^2 for the 2D patterns), sgemm also at 4096^3,
and the reduce-latency row; columns: kiln on CUDA, its fraction of the copy
ceiling, its ratio to CuPy and PyCUDA, kiln on wgpu, wgpu over CUDA, and
kiln-wgpu's ratio to CubeCL (on the same wgpu device). Several reports
(groups of patterns run one after the other) are merged.
"""
import json
import sys

LABELS = {
    "copy_d2d": "copy_d2d (the ceiling)", "fill": "fill", "sequence": "sequence",
    "map_square": "map square", "vector_add": "vector add", "axpy": "axpy",
    "reduce_sum": "reduce sum", "dot": "dot",
    "scan_inclusive": "inclusive scan", "scan_exclusive": "exclusive scan",
    "compact": "compaction x > 0.5 (half kept)", "histogram_i32": "histogram 256 bins, uniform",
    "histogram_i32_skewed": "histogram 256 bins, one bin", "histogram_f32": "histogram 256 bins, uniform f32",
    "histogram_f32_skewed": "histogram 256 bins, one bin f32", "transpose": "transpose 8192²",
    "transpose_naive": "transpose 8192², naive", "grayscale": "RGB to gray 8192²",
    "blur3x3_f32": "3x3 blur 8192² f32", "sort_u32": "sort 64 Mi u32 keys",
}
SIZE = 1 << 26


def load(paths):
    rows, headers = [], []
    for p in paths:
        d = json.load(open(p))
        headers.append(d["header"])
        rows += d["rows"]
    return rows, headers


def find(rows, backend, pattern, size):
    for r in rows:
        if r["backend"] == backend and r["pattern"] == pattern and r["size"] == size:
            return r
    return None


def rate(r):
    if r is None or r.get("median_ms") is None:
        return "-"
    if r["pattern"] == "sort_u32":
        return f"{r['size'] / r['median_ms'] / 1e6:.1f} Gkeys/s"
    if r["pattern"] == "reduce_latency":
        return f"{r['median_ms'] * 1e3:.1f} us"
    if r.get("tflop_per_s"):
        return f"{r['tflop_per_s']:.1f} TFLOP/s"
    return f"{r['gb_per_s']:.0f} GB/s"


def peer(r, name):
    if r is None:
        return "-"
    c = r["peers"].get(name)
    if not c or c["status"] != "measured":
        return "-"
    return f"{c['ratio']:.2f}x"


def line(rows, pattern, size, label):
    c, w = find(rows, "cuda", pattern, size), find(rows, "wgpu", pattern, size)
    compute = c is not None and (c.get("tflop_per_s") or pattern in ("sort_u32", "reduce_latency"))
    frac = f"{c['ceiling_fraction'] * 100:.0f}%" if c and c.get("ceiling_fraction") and not compute else "-"
    ww = "-"
    if c and w and c.get("median_ms") and w.get("median_ms"):
        ww = f"{c['median_ms'] / w['median_ms']:.2f}"
    return f"| {label} | {rate(c)} | {frac} | {peer(c, 'cupy')} | {peer(c, 'pycuda')} | {rate(w)} | {ww} | {peer(w, 'cubecl')} |"


def main():
    rows, headers = load(sys.argv[1:])
    out = ["| pattern | cuda | % of copy | vs CuPy | vs PyCUDA | wgpu (Vulkan) | wgpu / cuda | wgpu vs CubeCL |",
           "|---|---|---|---|---|---|---|---|"]
    for pattern, label in LABELS.items():
        if find(rows, "cuda", pattern, SIZE) or find(rows, "wgpu", pattern, SIZE):
            out.append(line(rows, pattern, SIZE, label))
    for size, side in ((1 << 24, 4096), (1 << 26, 8192)):
        for pattern, what in (("sgemm", "kiln's kernel"), ("sgemm_cublas", "cuBLAS path")):
            if find(rows, "cuda", pattern, size):
                out.append(line(rows, pattern, size, f"sgemm {side}³ ({what})"))
    for r in rows:
        if r["pattern"] == "reduce_latency" and r["backend"] == "cuda":
            out.append(line(rows, "reduce_latency", r["size"], "reduce 1 Ki + read back (latency)"))
            break
    print("\n".join(out))
    print()
    for h in headers:
        print(f"- `{h['command']}` at {h['date']}, commit {h['git_commit']}; ceilings "
              + ", ".join(f"{k} {v:.0f} GB/s" for k, v in h["ceilings_gb_per_s"].items())
              + "; peers " + ", ".join(f"{k} {v}" for k, v in h["peers"].items()))


if __name__ == "__main__":
    main()
