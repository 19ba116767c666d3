#!/bin/bash
# Issue 47: kiln's WGSL factorisations on the H200's Vulkan driver: the
# linalg conformance at the quick sizes, the CUDA Cholesky cases after the
# exact-minor fix, then `kiln bench --linalg` of solve and Cholesky at
# 4096 and the batch of 10^4 x 32 on CUDA and wgpu in the same run (with
# cupy.linalg and torch.linalg), the clocks sampled. About two minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 45 gpu/kiln conform --backend wgpu --pattern linalg --quick --json $R/conform-linalg-wgpu.json ) \
    > $R/conform-linalg-wgpu.txt 2>&1
grep -E "^wgpu:|FAIL|contract|panicked|real" $R/conform-linalg-wgpu.txt | head -20
( time timeout 20 gpu/kiln conform --backend cuda --pattern linalg/cholesky ) > $R/conform-linalg-cholesky-cuda.txt 2>&1
grep -E "^cuda:|FAIL|real" $R/conform-linalg-cholesky-cuda.txt | head -6
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 70 gpu/kiln bench --linalg --backend cuda --backend wgpu --size 4096 --size 32 \
    --pattern solve --pattern cholesky --runs 3 --json $R/bench-linalg-wgpu.json ) > $R/bench-linalg-wgpu.txt 2>&1
clocks_stop
cut -c1-150 $R/bench-linalg-wgpu.txt
tar czf $OUT/out.tgz -C $OUT r
