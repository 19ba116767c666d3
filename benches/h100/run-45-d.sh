#!/bin/bash
# Issue 45 (wgpu round two), fifth call, about 2 minutes (the bundle of
# run-45-b.sh, rebuilt with the warm-up that waits for 90% of the highest
# SM clock): copy, map, reduce and scan at 256 Mi on CUDA and wgpu, each
# row's SM clock recorded, clocks sampled beside.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks.csv 250
( time timeout 200 gpu/kiln bench --backend cuda --backend wgpu --pattern copy_d2d --pattern map_square \
    --pattern reduce_sum --pattern scan_inclusive --size 256Mi --no-system --json $R/bench-256mi.json ) \
  > $R/bench-256mi.txt 2>&1
clocks_stop
grep -E "^(cuda|wgpu) |real" $R/bench-256mi.txt | cut -c1-200
tar czf $OUT/out.tgz -C $OUT r
