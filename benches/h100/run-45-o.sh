#!/bin/bash
# Issue 45 (wgpu round two), the sweep the README's wgpu column comes from,
# about five minutes (`gpu/kiln.gz` from `cargo build --release -p kiln-cli
# --features cubecl` at commit 6949f05; the `-e-` results came from 705d494,
# before zero fills ran as launches): copy, map, reduce, scan, compaction, sort (keys and
# pairs), histograms, blur and random fills at 1, 64 and 256 Mi on CUDA and
# wgpu with the peers (CuPy, PyCUDA, CUB, cuRAND, CubeCL), warm-ups waiting
# for the SM clock. Clocks sampled throughout. `python3
# benches/h100/wgpu_table.py r/bench-sweep.json r/bench-256mi.json` makes
# the README's table from it.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks.csv 500
P="--pattern copy_d2d --pattern map_square --pattern reduce_sum --pattern scan_inclusive --pattern user_scan"
P="$P --pattern compact --pattern sort_u32 --pattern sort_pairs_u32 --pattern histogram_i32 --pattern blur3x3 --pattern random_"
( time timeout 220 gpu/kiln bench --backend cuda --backend wgpu $P --size 1Mi --size 64Mi --no-system \
    --json $R/bench-sweep.json ) > $R/bench-sweep.txt 2>&1
( time timeout 220 gpu/kiln bench --backend cuda --backend wgpu $P --size 256Mi --no-system \
    --json $R/bench-256mi.json ) > $R/bench-256mi.txt 2>&1
clocks_stop
grep -E "^(cuda|wgpu) |real" $R/bench-sweep.txt $R/bench-256mi.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
