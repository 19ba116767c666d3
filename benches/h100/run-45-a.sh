#!/bin/bash
# Issue 45 (wgpu round two), second call, about 6 minutes (`gpu/kiln` and
# `gpu/wgpu_large` from `cargo build --release -p kiln-cli -p kiln-benches
# --features kiln-cli/cubecl,kiln-benches/cubecl --bin kiln --example
# wgpu_large`, `.gl/`):
#   the probe of large buffers, tiny launches and round trips
#   (benches/examples/wgpu_large.rs);
#   random fills on Vulkan in conformance with 64-bit multiplies and
#   without (KILN_WGPU_HIDE=int64), then timed beside CUDA both ways;
#   graph replay, launch overhead and small-reduce latency beside CUDA;
#   the graph tests on Vulkan. Clocks sampled throughout.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks.csv 500
( time timeout 150 gpu/wgpu_large ) > $R/probe.txt 2>&1
( time timeout 100 gpu/kiln conform --backend wgpu --pattern random ) > $R/conform-vulkan-random.txt 2>&1
( time KILN_WGPU_HIDE=int64 timeout 100 gpu/kiln conform --backend wgpu --pattern random --quick ) \
  > $R/conform-vulkan-random-no-int64.txt 2>&1
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_uniform --pattern random_normal \
    --pattern launch_overhead --pattern graph_launch --pattern reduce_latency \
    --size 1Mi --size 64Mi --size 256Mi --no-system --json $R/bench.json ) > $R/bench.txt 2>&1
( time KILN_WGPU_HIDE=int64 timeout 100 gpu/kiln bench --backend wgpu --pattern random_uniform \
    --pattern random_normal --size 64Mi --no-system --json $R/bench-no-int64.json ) > $R/bench-no-int64.txt 2>&1
clocks_stop
grep -E "passed|real" $R/conform-vulkan-random*.txt
grep -E "^(cuda|wgpu) " $R/bench.txt $R/bench-no-int64.txt | cut -c1-200
cat $R/probe.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
