#!/bin/bash
# Issue 45 (wgpu round two), the Philox fills on kiln's own SPIR-V (each
# high word one OpUMulExtended), about three minutes (`gpu/kiln.gz` from
# `cargo build --release -p kiln-cli`, `gpu/wgpu_large.gz` from `cargo
# build --release -p kiln-benches --example wgpu_large`): random
# conformance on Vulkan with SPIR-V, without it, and without it and 64-bit
# integers; the Philox and blur labs (`wgpu_large --lab`); the fills beside
# CUDA at 1, 64 and 256 Mi, and wgpu's again with SPIR-V hidden.
set -u
source benches/h100/gpu-prelude.sh
gpu/kiln devices 2>&1 | grep -A2 Vulkan | head -4 > $R/devices.txt
conform_wgpu "X=default" random histogram
conform_wgpu "KILN_WGPU_HIDE=spirv" random histogram
conform_wgpu "KILN_WGPU_HIDE=spirv,int64" random
timeout 120 gpu/wgpu_large --lab > $R/wgpu-lab.txt 2>&1
clocks_start $R/clocks-bench.csv 200
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_ --size 1Mi --size 64Mi \
    --size 256Mi --no-system --json $R/bench-random.json ) > $R/bench-random.txt 2>&1
( time KILN_WGPU_HIDE=spirv timeout 100 gpu/kiln bench --backend wgpu --pattern random_ --size 1Mi --size 64Mi \
    --size 256Mi --no-system --json $R/bench-random-no-spirv.json ) > $R/bench-random-no-spirv.txt 2>&1
clocks_stop
cat $R/devices.txt $R/wgpu-lab.txt
grep -E "^(cuda|wgpu) |real" $R/bench-random.txt $R/bench-random-no-spirv.txt | cut -c1-200
tar czf $OUT/out.tgz -C $OUT r
