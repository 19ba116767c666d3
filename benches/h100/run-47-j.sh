#!/bin/bash
# Issue 47 on the H200's Vulkan driver (run with `.gl/` carried), after
# LU of matrices of 32 or less moved whole into workgroup memory: the
# linalg conformance at every size on wgpu, then `kiln bench --linalg` of
# the batches of 10^4 x 32 (solve, lu, Cholesky, eigh) on CUDA and wgpu in
# the same run, with cupy.linalg and torch.linalg, the clocks sampled.
# About three minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 150 gpu/kiln conform --backend wgpu --pattern linalg --json $R/conform-linalg-wgpu.json ) \
    > $R/conform-linalg-wgpu.txt 2>&1
grep -E "^wgpu:|^linalg/|^FAIL|real" $R/conform-linalg-wgpu.txt | head -16
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 200 gpu/kiln bench --linalg --backend cuda --backend wgpu --size 32 \
    --pattern solve --pattern lu --pattern cholesky --pattern eigh --runs 10 --json $R/bench-linalg-wgpu.json ) \
    > $R/bench-linalg-wgpu.txt 2>&1
clocks_stop
grep -E "cuda|wgpu|real|absent" $R/bench-linalg-wgpu.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
