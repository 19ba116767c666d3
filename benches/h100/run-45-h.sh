#!/bin/bash
# Issue 45 (wgpu round two), the carried scans and compaction with each
# tile's carry read before its elements and the compaction's kept values
# taken from workgroup memory, about 8 minutes (`gpu/kiln.gz` from
# `cargo build --release -p kiln-cli`): scan and copy_if conformance on
# Vulkan with subgroups and without; scans, compaction and user scans from
# 1 Mi to 256 Mi on CUDA and wgpu; then the quick sweep of both backends,
# each row's SM clock recorded, clocks sampled beside.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" scan copy_if
conform_wgpu "KILN_WGPU_HIDE=subgroups" scan copy_if
clocks_start $R/clocks.csv 250
( time timeout 200 gpu/kiln bench --backend cuda --backend wgpu --pattern scan_inclusive --pattern scan_exclusive \
    --pattern compact --pattern user_scan --size 1Mi --size 16Mi --size 64Mi --size 256Mi --no-system \
    --json $R/bench-scans.json ) > $R/bench-scans.txt 2>&1
grep -E "^(cuda|wgpu) |real" $R/bench-scans.txt | cut -c1-140
( time timeout 330 gpu/kiln bench --quick --backend cuda --backend wgpu --no-system --json $R/bench-quick.json ) \
  > $R/bench-quick.txt 2>&1
clocks_stop
grep -E "real" $R/bench-quick.txt
tar czf $OUT/out.tgz -C $OUT r
