#!/bin/bash
# Issue 45 (wgpu round two), the sweep the README's wgpu column comes from,
# about seven minutes (`gpu/kiln.gz` from `cargo build --release -p kiln-cli
# --features cubecl` at commit 816701c, whose KILN_SCAN_ITEMS override the
# next commit took out again): conformance on Vulkan of the changed kernels (image
# with the blur's 16-row tiles, random with SPIR-V and without, histogram);
# copy, map, reduce, scan, compaction, sort, histograms, blur and random
# fills at 1, 64 and 256 Mi on CUDA and wgpu with the peers (CuPy, PyCUDA,
# CUB, cuRAND, CubeCL), warm-ups waiting for the SM clock. Clocks sampled
# throughout.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" image random histogram
conform_wgpu "KILN_WGPU_HIDE=spirv" random
clocks_start $R/clocks.csv 500
# The scan's tile of 2048 against the default 4096 (a measurement build's
# KILN_SCAN_ITEMS), carried at 64 and 256 Mi.
for items in 8; do
  KILN_SCAN_ITEMS=$items timeout 60 gpu/kiln bench --backend wgpu --pattern scan_inclusive --pattern compact \
    --size 64Mi --size 256Mi --no-system --json $R/bench-scan-items-$items.json > $R/bench-scan-items-$items.txt 2>&1
  grep -E "^wgpu " $R/bench-scan-items-$items.txt | cut -c1-110 | sed "s/^/items $items: /"
done
P="--pattern copy_d2d --pattern map_square --pattern reduce_sum --pattern scan_inclusive --pattern user_scan"
P="$P --pattern compact --pattern sort_u32 --pattern histogram_i32 --pattern blur3x3 --pattern random_"
( time timeout 220 gpu/kiln bench --backend cuda --backend wgpu $P --size 1Mi --size 64Mi --no-system \
    --json $R/bench-sweep.json ) > $R/bench-sweep.txt 2>&1
( time timeout 220 gpu/kiln bench --backend cuda --backend wgpu $P --size 256Mi --no-system \
    --json $R/bench-256mi.json ) > $R/bench-256mi.txt 2>&1
clocks_stop
grep -E "^(cuda|wgpu) |real" $R/bench-sweep.txt $R/bench-256mi.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
