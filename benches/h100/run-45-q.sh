#!/bin/bash
# Issue 45 (wgpu round two), about four minutes: zero fills on wgpu as
# kiln's compute fill, inside the launches' compute pass, against wgpu's
# `clear_buffer` between passes. `gpu/kiln.gz` and
# `gpu/wgpu_histogram_lab.gz` are a measurement build (`cargo build
# --release -p kiln-cli -p kiln-benches --features
# kiln-cli/cubecl,kiln-benches/cubecl --bin kiln --example
# wgpu_histogram_lab`) in which KILN_WGPU_CLEAR set brings the clears back.
# Conformance of fills (every group that fills) on Vulkan, then the
# histogram lab and the patterns that zero buffers before their kernels,
# at 1 and 64 Mi, each way.
# The histogram lab's `-f-` and `-g-` results came from it as of commit
# 705d494 (1.5 s of maps to warm the GPU, windows of 20 calls); it now
# times as the bench does (`time_runs`, windows of 2 ms).
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" fill histogram sort
clocks_start $R/clocks.csv 500
timeout 60 gpu/wgpu_histogram_lab > $R/histogram-lab-compute-fill.txt 2>&1
KILN_WGPU_CLEAR=1 timeout 60 gpu/wgpu_histogram_lab > $R/histogram-lab-clear.txt 2>&1
head -30 $R/histogram-lab-*.txt
P="--pattern histogram_i32 --pattern sort_u32 --pattern sort_pairs_u32 --pattern scan_inclusive --pattern compact"
P="$P --pattern user_scan --pattern fill"
timeout 200 gpu/kiln bench --backend cuda --backend wgpu $P --size 1Mi --size 64Mi --no-system \
  --json $R/bench-compute-fill.json > $R/bench-compute-fill.txt 2>&1
KILN_WGPU_CLEAR=1 timeout 100 gpu/kiln bench --backend wgpu $P --size 1Mi --size 64Mi --no-system \
  --json $R/bench-clear.json > $R/bench-clear.txt 2>&1
grep -E "^(cuda|wgpu)  " $R/bench-compute-fill.txt $R/bench-clear.txt | cut -c1-120
clocks_stop
tar czf $OUT/out.tgz -C $OUT r
