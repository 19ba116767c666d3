#!/bin/bash
# Issue 45 (wgpu round two), the Philox fills with round keys worked out
# once per invocation and the grid capped at 2048 workgroups (each
# invocation strides over several blocks, as CUDA's threads do), about
# three minutes (`gpu/kiln.gz` and `gpu/wgpu_large.gz` as run-45-l.sh):
# random conformance on Vulkan with SPIR-V and without; the labs (Philox
# variants; the blur's tile staged every row's loads first and tiles of 32,
# 16 and 8 rows); the fills beside CUDA at 1, 64 and 256 Mi.
set -u
source benches/h100/gpu-prelude.sh
conform_wgpu "X=default" random
conform_wgpu "KILN_WGPU_HIDE=spirv" random
timeout 120 gpu/wgpu_large --lab > $R/wgpu-lab.txt 2>&1
clocks_start $R/clocks-bench.csv 200
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_ --size 1Mi --size 64Mi \
    --size 256Mi --no-system --json $R/bench-random.json ) > $R/bench-random.txt 2>&1
clocks_stop
cat $R/wgpu-lab.txt
grep -E "^(cuda|wgpu) |real" $R/bench-random.txt | cut -c1-120
tar czf $OUT/out.tgz -C $OUT r
