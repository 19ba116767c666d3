#!/bin/bash
# Issue 45 (wgpu round two), the scan's tile pass by rows (rows.wgsl: no
# transpose through workgroup memory), about 3 minutes (`gpu/kiln.gz` from
# `cargo build --release -p kiln-cli`): scan, copy_if and user-kernel
# conformance on Vulkan (scan and copy_if with subgroups hidden too), then
# scans from 1 Mi to 256 Mi on CUDA and wgpu, each row's SM clock
# recorded. The tile pass by rows ran slower than the one it was to
# replace and was taken out again: build commit 20c3e10 to run it.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" scan copy_if user
conform_wgpu "KILN_WGPU_HIDE=subgroups" scan copy_if
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern scan_inclusive --pattern scan_exclusive \
    --pattern compact --size 1Mi --size 16Mi --size 64Mi --size 256Mi --no-system --json $R/bench-scans.json ) \
  > $R/bench-scans.txt 2>&1
grep -E "^(cuda|wgpu) |real" $R/bench-scans.txt | cut -c1-140
tar czf $OUT/out.tgz -C $OUT r
