"""The README's wgpu table from `kiln bench` JSON reports of CUDA and wgpu.

Usage: python3 benches/h100/wgpu_table.py REPORT.json [REPORT.json ...]

One row per pattern that both backends ran: wgpu's rate over CUDA's (CUDA's
time over wgpu's; above 1 wgpu is faster) at 1, 64 and 256 Mi, with the SM
clock where a wgpu row ran below 1900 MHz, wgpu's GB/s at 256 Mi, and
kiln-wgpu against CubeCL on the same device at each size it measured.
Several reports (sizes or groups run one after the other) are merged; a
later report's row replaces an earlier one's.
"""
import json
import sys

SIZES = [1 << 20, 1 << 26, 1 << 28]


def main(paths):
    rows, order = {}, []
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["rows"]:
                key = (r["backend"], r["pattern"], r["size"])
                rows[key] = r
                if r["pattern"] not in order:
                    order.append(r["pattern"])
    print("| pattern | wgpu/cuda 1 Mi | 64 Mi | 256 Mi | wgpu at 256 Mi | wgpu vs CubeCL (1, 64, 256 Mi) |")
    print("|---|---|---|---|---|---|")
    for pattern in order:
        cells, cubecl = [], []
        for size in SIZES:
            c, w = rows.get(("cuda", pattern, size)), rows.get(("wgpu", pattern, size))
            if not (c and w and c["median_ms"] and w["median_ms"]):
                cells.append("-")
                continue
            ratio = c["median_ms"] / w["median_ms"]
            clock = w.get("sm_clock_mhz")
            cell = f"{ratio:.2f}" if ratio >= 0.9 else f"**{ratio:.2f}**"
            if clock and clock < 1900:
                cell += f" ({clock} MHz)"
            cells.append(cell)
            peer = (w.get("peers") or {}).get("cubecl") or {}
            if peer.get("status") == "measured":
                cubecl.append(f"{peer['ratio']:.2f}x")
        if all(c == "-" for c in cells):
            continue
        big = rows.get(("wgpu", pattern, SIZES[2]))
        rate = "-"
        if big and big.get("gb_per_s"):
            rate = f"{big['gb_per_s']:.0f} GB/s"
        print(f"| {pattern} | {' | '.join(cells)} | {rate} | {', '.join(cubecl) or '-'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
