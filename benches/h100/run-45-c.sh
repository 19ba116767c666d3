#!/bin/bash
# Issue 45 (wgpu round two), fourth call, about 8 minutes (the bundle of
# run-45-b.sh, rebuilt with staged transfers):
#   the probe (uploads and read-backs through kept staging buffers,
#   spinning waits, graph replay, large buffers);
#   conformance of fills, copies and random numbers on Vulkan;
#   a sweep of copy, map, reduce, scan, compaction, sort, histogram, blur
#   and random fills at 1, 64 and 256 Mi on CUDA and wgpu with the peers
#   (CuPy, PyCUDA, CubeCL), warm-ups waiting for the SM clock; the latency
#   rows. Clocks sampled throughout.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks.csv 500
( time timeout 40 gpu/wgpu_large ) > $R/probe.txt 2>&1
for p in fill memory random; do
  timeout 60 gpu/kiln conform --backend wgpu --pattern $p 2>&1 | tail -1 | sed "s|^|$p: |"
done > $R/conform-vulkan.txt
P="--pattern copy_d2d --pattern map_square --pattern reduce_sum --pattern scan_inclusive --pattern compact"
P="$P --pattern sort_u32 --pattern histogram_i32 --pattern blur3x3 --pattern random_"
( time timeout 200 gpu/kiln bench --backend cuda --backend wgpu $P --size 1Mi --size 64Mi --no-system \
    --json $R/bench-sweep.json ) > $R/bench-sweep.txt 2>&1
( time timeout 200 gpu/kiln bench --backend cuda --backend wgpu $P --size 256Mi --no-system \
    --json $R/bench-256mi.json ) > $R/bench-256mi.txt 2>&1
( time timeout 60 gpu/kiln bench --backend cuda --backend wgpu --pattern launch_overhead --pattern graph_launch \
    --pattern reduce_latency --no-system --json $R/bench-latency.json ) > $R/bench-latency.txt 2>&1
clocks_stop
cat $R/conform-vulkan.txt
grep -E "^(cuda|wgpu) |real" $R/bench-sweep.txt $R/bench-256mi.txt $R/bench-latency.txt | cut -c1-210
cut -c1-150 $R/probe.txt | head -24
tar czf $OUT/out.tgz -C $OUT r
