#!/bin/bash
# Issue 45 (wgpu round two), histograms of short inputs spread over more
# workgroups (one step of 2048 elements each below the cap), about a
# minute (`gpu/kiln.gz` from `cargo build --release -p kiln-cli`):
# histogram, scan and copy_if conformance on Vulkan, then the histograms
# at 1, 4 and 64 Mi on CUDA and wgpu, each row's SM clock recorded. It
# made no difference (the 1 Mi case is bound by the call's fixed costs) and
# was taken out again: build commit ecf4f7c to run it.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" histogram scan copy_if
( time timeout 100 gpu/kiln bench --backend cuda --backend wgpu --pattern histogram --size 1Mi --size 4Mi \
    --size 64Mi --no-system --runs 20 --json $R/bench-histogram.json ) > $R/bench-histogram.txt 2>&1
grep -E "^(cuda|wgpu) |real" $R/bench-histogram.txt | cut -c1-140
tar czf $OUT/out.tgz -C $OUT r
