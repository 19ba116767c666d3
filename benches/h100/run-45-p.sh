#!/bin/bash
# Issue 45 (wgpu round two), about two minutes: conformance on Vulkan of
# the scans and compaction with carried tiles of 2048, with subgroups and
# without; then the histogram lab (`gpu/wgpu_histogram_lab.gz`,
# benches/examples/wgpu_histogram_lab.rs): the library's call beside its
# fills and its kernel alone, at 1 and 64 Mi.
# The histogram lab's `-f-` and `-g-` results came from it as of commit
# 705d494 (1.5 s of maps to warm the GPU, windows of 20 calls); it now
# times as the bench does (`time_runs`, windows of 2 ms).
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" scan copy_if
conform_wgpu "KILN_WGPU_HIDE=subgroups" scan copy_if
clocks_start $R/clocks.csv 500
timeout 60 gpu/wgpu_histogram_lab > $R/histogram-lab.txt 2>&1
cat $R/histogram-lab.txt
clocks_stop
tar czf $OUT/out.tgz -C $OUT r
