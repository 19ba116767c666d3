#!/bin/bash
# Issue 45 (wgpu round two), scan and compaction carried (reduce-then-scan)
# against looked back, about 5 minutes: Vulkan conformance of scan and
# copy_if with every long input carried (KILN_SCAN_CARRIED_FROM=0), with
# the default threshold, and carried without subgroups; then scan and
# compaction from 1 Mi to 256 Mi on CUDA and wgpu, carried from 0 and
# never, each row's SM clock recorded, clocks sampled beside. It ran on a
# measurement build whose threshold KILN_SCAN_CARRIED_FROM set (elements;
# 0: always carried); the library now carries from 1 Mi on
# (kernels/src/scan/fallback.rs, CARRIED_FROM) and reads no variable, so
# on today's tree all three configurations run the default.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "KILN_SCAN_CARRIED_FROM=0" scan copy_if
conform_wgpu "X=default" scan copy_if
conform_wgpu "KILN_SCAN_CARRIED_FROM=0 KILN_WGPU_HIDE=subgroups" scan copy_if
clocks_start $R/clocks.csv 250
sizes="--size 1Mi --size 4Mi --size 16Mi --size 64Mi --size 256Mi"
( time KILN_SCAN_CARRIED_FROM=0 timeout 240 gpu/kiln bench --backend cuda --backend wgpu --pattern scan_inclusive \
    --pattern scan_exclusive --pattern compact $sizes --no-system --json $R/bench-carried.json ) \
  > $R/bench-carried.txt 2>&1
( time KILN_SCAN_CARRIED_FROM=1000000000000 timeout 200 gpu/kiln bench --backend wgpu --pattern scan_inclusive \
    --pattern scan_exclusive --pattern compact $sizes --no-system --json $R/bench-lookback.json ) \
  > $R/bench-lookback.txt 2>&1
clocks_stop
for f in carried lookback; do echo "== $f"; grep -E "^(cuda|wgpu) |real" $R/bench-$f.txt | cut -c1-160; done
tar czf $OUT/out.tgz -C $OUT r
