#!/bin/bash
# Issue 45 (wgpu round two), about a minute and a half: conformance on Vulkan of
# the changed kernels (image with the blur's 16-row tiles, random with
# SPIR-V and without, histogram), then the scan's and the onesweep sort's
# tile sizes on wgpu. `gpu/kiln.gz` is a measurement build: `cargo build
# --release -p kiln-cli --features cubecl` at commit 30a7885 with commit
# dd33571's change to kernels/src/scan/fallback.rs reversed (KILN_SCAN_ITEMS
# sets the scan's elements per invocation) and the same override for the
# onesweep pass in kernels/src/sort/plan.rs (KILN_SORT_ITEMS). Last, the
# sort lab (`gpu/wgpu_sort_lab.gz`, benches/examples/wgpu_sort_lab.rs) at
# each tile size. The `-c-` and `-d-` results came from the lab as of commit
# 705d494, which warmed the GPU with 1.5 s of maps and then timed 15 runs;
# it now samples as the bench does (a warm-up until the SM clock is up).
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" image random histogram
conform_wgpu "KILN_WGPU_HIDE=spirv" random
clocks_start $R/clocks.csv 500
# The scan's tile of 2048 and 1024 against the default 4096 (a measurement
# build's KILN_SCAN_ITEMS), carried at 64 and 256 Mi.
for items in 16 8 4; do
  KILN_SCAN_ITEMS=$items timeout 60 gpu/kiln bench --backend wgpu --pattern scan_inclusive --pattern compact \
    --size 64Mi --size 256Mi --no-system --json $R/bench-scan-items-$items.json > $R/bench-scan-items-$items.txt 2>&1
  grep -E "^wgpu " $R/bench-scan-items-$items.txt | cut -c1-110 | sed "s/^/items $items: /"
done
# The onesweep tile of 256 x 12 and 256 x 8 keys against 256 x 16.
for items in 16 12 8; do
  KILN_SORT_ITEMS=$items timeout 60 gpu/kiln bench --backend wgpu --pattern sort_u32 --pattern sort_pairs_u32 \
    --size 1Mi --size 64Mi --no-system --json $R/bench-sort-items-$items.json > $R/bench-sort-items-$items.txt 2>&1
  grep -E "^wgpu " $R/bench-sort-items-$items.txt | cut -c1-110 | sed "s/^/sort items $items: /"
done
for items in 16 12 8; do
  timeout 60 gpu/wgpu_sort_lab --items $items >> $R/sort-lab.txt 2>&1
done
cat $R/sort-lab.txt
clocks_stop
tar czf $OUT/out.tgz -C $OUT r
