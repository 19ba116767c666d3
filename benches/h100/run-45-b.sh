#!/bin/bash
# Issue 45 (wgpu round two), third call, about 8 minutes (`gpu/kiln.gz` and
# `gpu/wgpu_large.gz`: `cargo build --release -p kiln-cli -p kiln-benches
# --features kiln-cli/cubecl,kiln-benches/cubecl --bin kiln --example
# wgpu_large`, stripped and gzipped to fit the carry; `.gl/`):
#   the probe again (spinning waits, graph replay, uploads);
#   every one-dimensional pattern at 256 Mi on CUDA and wgpu with the peers
#   (CuPy, PyCUDA, CubeCL), warm-ups waiting for the SM clock, and the
#   latency rows; clocks sampled throughout.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks.csv 500
( time timeout 150 gpu/wgpu_large ) > $R/probe.txt 2>&1
P="--pattern copy_d2d --pattern fill --pattern sequence --pattern map_ --pattern vector_add --pattern axpy"
P="$P --pattern reduce_sum --pattern dot --pattern scan_ --pattern compact --pattern histogram --pattern sort_"
P="$P --pattern random_ --pattern user_ --pattern array_axpy --pattern array_fused_sum"
( time timeout 420 gpu/kiln bench --backend cuda --backend wgpu $P --size 256Mi --no-system \
    --json $R/bench-256mi.json ) > $R/bench-256mi.txt 2>&1
( time timeout 60 gpu/kiln bench --backend cuda --backend wgpu --pattern launch_overhead --pattern graph_launch \
    --pattern reduce_latency --no-system --json $R/bench-latency.json ) > $R/bench-latency.txt 2>&1
clocks_stop
grep -E "^(cuda|wgpu) |real" $R/bench-256mi.txt $R/bench-latency.txt | cut -c1-210
cut -c1-150 $R/probe.txt
tar czf $OUT/out.tgz -C $OUT r
