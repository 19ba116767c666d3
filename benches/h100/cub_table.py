"""kiln on CUDA against CUB and cuRAND, from `kiln bench` JSON reports: the
table that hides nothing.

Usage: python3 benches/h100/cub_table.py [--readme] REPORT.json [REPORT.json ...]

For every pattern with CUDA rows in the reports: rows at 1 Mi, 64 Mi and
256 Mi elements ("-" where the reports have no row at that size; patterns
of a fixed size at their own size), with kiln's rate (GB/s, Gkeys/s for
sorts, TFLOP/s for GEMMs, us for latencies), the `cub` peer's rate from the
same report and kiln's ratio to it (its time over kiln's: above 1, kiln is
faster), the peer's name and what it calls, and the state of the issue's
goal for the pattern. Then every row of the reports, on any backend and at
any size, where kiln loses to any measured peer; then the CUDA system rows
(launch, allocation, transfer) each report carries.

Every figure is read from a report. What a peer calls comes from its row in
the report; where the report has none (an older report, or the peer absent),
the `calls` list at the top of benches/peers/cub_bench.cu is shown instead,
marked "(description only)": it never stands for a number. A peer figure
missing from a report reads "-" with the reason the report gives.

Several reports are merged in the order given; a row measured again in a
later report replaces the earlier one, and each row names its report
([1], [2], ...). The output depends only on the reports.

With --readme: the README's shorter form, one row per pattern with a goal
(kiln / peer at 1 Mi, 64 Mi and 256 Mi, each with its report, a missed goal
marked) and the rows where kiln loses.
"""
import json
import re
import sys
from pathlib import Path

MI = 1 << 20
SIZES = (MI, 64 * MI, 256 * MI)
PEER = "cub"
CUB_SOURCE = Path(__file__).resolve().parent.parent / "peers" / "cub_bench.cu"

# The goals: kiln's ratio to CUB (cuRAND for the random rows) at
# least this, for each of the patterns named. Other patterns have no goal.
GOAL_GROUPS = [
    ("reduce and dot", 1.0, ["reduce_sum", "dot"]),
    ("scans", 1.0, ["scan_inclusive", "scan_exclusive"]),
    ("compaction", 1.0, ["compact"]),
    ("histogram, uniform and one bin, i32 and f32", 1.0,
     ["histogram_i32", "histogram_i32_skewed", "histogram_f32", "histogram_f32_skewed"]),
    ("sort keys and pairs", 1.0, ["sort_u32", "sort_i32", "sort_f32", "sort_pairs_u32"]),
    ("random uniform and normal (cuRAND)", 1.0, ["random_uniform", "random_normal"]),
]
GOALS = {p: goal for _, goal, patterns in GOAL_GROUPS for p in patterns}

# The report order of `kiln bench` (Pattern::ALL); patterns it does not
# know yet follow, by name.
ORDER = [
    "copy_d2d", "fill", "sequence", "map_square", "map_abs", "map_negate", "map_sqrt", "vector_add", "axpy",
    "transpose", "transpose_naive", "sgemm", "sgemm_cublas", "dgemm", "grayscale", "blur3x3_f32",
    "sort_u32", "sort_i32", "sort_f32", "sort_pairs_u32",
    "reduce_sum", "dot", "scan_inclusive", "scan_exclusive", "compact",
    "histogram_i32", "histogram_i32_skewed", "histogram_f32", "histogram_f32_skewed",
    "user_axpy", "user_sum_squares", "user_scan", "array_axpy", "array_fused_sum", "array_row_sums",
    "random_uniform", "random_normal", "reduce_latency", "launch_overhead", "graph_launch",
]


def expand(names):
    """`sort_{u32,i32}` and `histogram_i32[_skewed]` as the names they stand for.

    >>> expand("histogram_{i32,f32}[_skewed]")
    ['histogram_i32', 'histogram_i32_skewed', 'histogram_f32', 'histogram_f32_skewed']
    """
    m = re.search(r"\{([^}]*)\}", names)
    if m:
        return [n for alt in m.group(1).split(",") for n in expand(names[:m.start()] + alt + names[m.end():])]
    m = re.search(r"\[([^\]]*)\]", names)
    if m:
        return expand(names[:m.start()] + names[m.end():]) + expand(names[:m.start()] + m.group(1) + names[m.end():])
    return [names]


def described_calls(source=CUB_SOURCE):
    """The CUB program's own list of what each case calls (its header comment)."""
    calls, inside = {}, False
    try:
        lines = source.read_text().splitlines()
    except OSError:
        return calls
    for line in lines:
        if "names in `calls` what it times" in line:
            inside = True
            continue
        m = re.match(r"//   (\S+)\s+(.*)", line) if inside else None
        if not m:
            if inside and calls:
                break
            continue
        what = m.group(2)
        for name in expand(m.group(1)):
            calls[name] = what
        also = re.search(r"\((\w+): the same\)", what)
        if also:
            calls[also.group(1)] = what
    return calls


def load(paths):
    """The reports' headers and CUDA system sections, and their rows by
    (backend, pattern, dtype, size), each with the number of its report."""
    reports, rows = [], {}
    for i, p in enumerate(paths, 1):
        with open(p) as f:
            d = json.load(f)
        reports.append((i, p, d))
        for r in d["rows"]:
            rows[(r["backend"], r["pattern"], r["dtype"], r["size"])] = (i, r)
    return reports, rows


def order_key(pattern):
    return (ORDER.index(pattern), "") if pattern in ORDER else (len(ORDER), pattern)


def size_label(n):
    for unit, s in ((1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {s}"
    return str(n)


def rate(r, ms):
    """A row's rate in its own unit, had it taken `ms`."""
    p = r["pattern"]
    if ms is None or ms <= 0:
        return "-"
    if p.startswith("sort_"):
        return f"{r['size'] / ms / 1e6:.2f} Gkeys/s"
    if p in ("reduce_latency", "launch_overhead", "graph_launch"):
        return f"{ms * 1e3:.2f} us"
    if p.startswith("sgemm") or p == "dgemm":
        return f"{r['flops'] / ms / 1e9:.2f} TFLOP/s"
    return f"{r['bytes'] / ms / 1e6:.0f} GB/s"


def peer_name(calls):
    return "cuRAND" if calls and calls.startswith("curand") else "CUB"


def who_calls(calls, pattern, described):
    """The table cell naming the peer and what it calls: from its row's
    `calls` when measured, else the CUB program's description, marked."""
    if not calls and pattern in described:
        calls = f"{described[pattern]} (description only)"
    return f"{peer_name(calls)}: {calls}" if calls else "-"


def cell_text(cell):
    """Why a peer cell has no figure."""
    if cell is None:
        return "no such peer in this report"
    if cell["status"] == "absent":
        return f"absent: {cell.get('reason', 'no reason given')}"
    if cell["status"] == "no-case":
        return "the peer has no such case"
    return cell["status"]


def goal_state(pattern, ratio):
    goal = GOALS.get(pattern)
    if goal is None:
        return "no goal"
    if ratio is None:
        return f">= {goal:.1f}x: not measured"
    return f"{'met' if ratio >= goal else 'missed'} ({ratio:.2f}x, goal >= {goal:.1f}x)"


def main_table(rows, described):
    out = ["| pattern | size | kiln | CUB/cuRAND | kiln / peer | goal | peer: what it calls | report |",
           "|---|---|---|---|---|---|---|---|"]
    cases = sorted({(k[1], k[2]) for k in rows if k[0] == "cuda"}, key=lambda c: (order_key(c[0]), c[1]))
    for pattern, dtype in cases:
        have = sorted(k[3] for k in rows if k[:3] == ("cuda", pattern, dtype))
        sizes = SIZES if any(s in SIZES for s in have) else have
        for size in sizes:
            found = rows.get(("cuda", pattern, dtype, size))
            label = f"{pattern} {dtype}"
            if found is None:
                goal = f">= {GOALS[pattern]:.1f}x: no row" if pattern in GOALS else "no goal"
                out.append(f"| {label} | {size_label(size)} | - | - | - | {goal} | - | - |")
                continue
            i, r = found
            cell = r.get("peers", {}).get(PEER)
            measured = cell is not None and cell["status"] == "measured"
            ratio = cell["ratio"] if measured else None
            who = who_calls(cell.get("calls") if measured else None, pattern, described)
            peer = rate(r, cell["median_ms"]) if measured else f"- ({cell_text(cell)})"
            ours = rate(r, r.get("median_ms")) if r.get("median_ms") else f"- ({r.get('note') or 'no time'})"
            ratio_text = f"{ratio:.2f}x" if ratio is not None else "-"
            out.append(f"| {label} | {size_label(size)} | {ours} | {peer} | {ratio_text} | "
                       f"{goal_state(pattern, ratio)} | {who} | [{i}] |")
    return out


def compact_table(rows, described):
    """The README's table: one row per pattern with a goal, kiln / peer at
    each size of the table (with its report), and what the peer calls."""
    out = ["| pattern | " + " | ".join(size_label(n) for n in SIZES) + " | goal | peer: what it calls |",
           "|---|" + "---|" * len(SIZES) + "---|---|"]
    cases = sorted({(k[1], k[2]) for k in rows if k[0] == "cuda" and k[1] in GOALS},
                   key=lambda c: (order_key(c[0]), c[1]))
    for pattern, dtype in cases:
        cells, calls = [], None
        for size in SIZES:
            found = rows.get(("cuda", pattern, dtype, size))
            cell = found[1].get("peers", {}).get(PEER) if found else None
            if cell is None or cell["status"] != "measured":
                cells.append("-")
                continue
            ratio = cell["ratio"]
            mark = "" if ratio >= GOALS[pattern] else " **missed**"
            cells.append(f"{ratio:.2f}x{mark} [{found[0]}]")
            calls = cell.get("calls") or calls
        who = who_calls(calls, pattern, described)
        out.append(f"| {pattern} {dtype} | " + " | ".join(cells) + f" | >= {GOALS[pattern]:.1f}x | {who} |")
    return out


def goal_summary(rows):
    """Each goal's state at each size of the table: met where every pattern
    named meets it, missed where one misses, with the numbers."""
    out = []
    for what, goal, patterns in GOAL_GROUPS:
        parts = []
        for size in SIZES:
            found = {p: r for (b, p, _, n), (_, r) in sorted(rows.items()) if b == "cuda" and n == size and p in patterns}
            if not found:
                parts.append(f"{size_label(size)}: no rows")
                continue
            ratios = []
            for p in patterns:
                c = found[p].get("peers", {}).get(PEER) if p in found else None
                ratios.append((p, c["ratio"] if c and c["status"] == "measured" else None))
            if any(v is not None and v < goal for _, v in ratios):
                state = "missed"
            elif all(v is not None for _, v in ratios):
                state = "met"
            else:
                state = "not all measured"
            nums = ", ".join(f"{p} {v:.2f}x" if v is not None else f"{p} -" for p, v in ratios)
            parts.append(f"{size_label(size)}: {state} ({nums})")
        out.append(f"- {what} >= {goal:.1f}x: " + "; ".join(parts))
    return out


def losses(rows):
    """Every row, any backend and size, slower than a measured peer."""
    out = []
    keys = sorted(rows, key=lambda k: (k[0], order_key(k[1]), k[2], k[3]))
    for key in keys:
        i, r = rows[key]
        for name in sorted(r.get("peers", {})):
            c = r["peers"][name]
            if c["status"] == "measured" and c["ratio"] < 1.0:
                calls = f"; {c['calls']}" if c.get("calls") else ""
                out.append(f"- {r['backend']} {r['pattern']} {r['dtype']} {size_label(r['size'])}: {name} "
                           f"{c['ratio']:.2f}x (kiln {rate(r, r['median_ms'])}, {name} {rate(r, c['median_ms'])}"
                           f"{calls}) [{i}]")
    return out or ["- none"]


def system_rows(reports):
    out = []
    for i, path, d in reports:
        s = d.get("cuda_system")
        if not s:
            out.append(f"- [{i}] no CUDA system rows in this report")
            continue
        out += [f"[{i}] {s['device']}, {s['driver']}, NVRTC {s['nvrtc']}, {s['arch']}, commit {s['commit']}:", "",
                "| case | median | min | ratio | goal | state |", "|---|---|---|---|---|---|"]
        for r in s["rows"]:
            ratio = f"{r['ratio']:.2f} of {r['baseline']}" if r.get("ratio") is not None else "-"
            state = {True: "met", False: "missed", None: "-"}[r.get("met")]
            out.append(f"| {r['case']} | {r['median']:.3g} {r['unit']} | {r['min']:.3g} {r['unit']} | {ratio} | "
                       f"{r['goal']} | {state} |")
        out.append("")
    return out


def main(paths):
    if not paths:
        print(next(line for line in __doc__.splitlines() if line.startswith("Usage")), file=sys.stderr)
        return 2
    readme = paths[0] == "--readme"
    if readme:
        paths = paths[1:]
    reports, rows = load(paths)
    out = ["Reports:", ""]
    for i, path, d in reports:
        h = d["header"]
        out.append(f"- [{i}] {Path(path).name}: {', '.join(h.get('devices', []))}; `{h['command']}` at {h['date']}, "
                   f"commit {h['git_commit']}; {PEER}: {h.get('peers', {}).get(PEER, 'not in this report')}")
    out += ["", "kiln on CUDA against CUB and cuRAND (kiln / peer: the peer's time over kiln's):", ""]
    if readme:
        out += compact_table(rows, described_calls())
        out += ["", "Every row where kiln loses to a peer:", ""] + losses(rows)
        print("\n".join(out).rstrip())
        return 0
    out += main_table(rows, described_calls())
    out += ["", "Goals (kiln / peer at each size):", ""] + goal_summary(rows)
    out += ["", "Every row where kiln loses to a peer:", ""] + losses(rows)
    out += ["", "CUDA system rows:", ""] + system_rows(reports)
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
