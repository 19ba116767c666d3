#!/bin/bash
# Issue 47 on the H200's Vulkan driver (run with `.gl/` carried), after
# getrs moved to blocks of 64 unknowns, Cholesky's panel kernel to columns
# of 16 invocations (and a 32-wide block for small matrices), and the
# one-invocation-per-item kernels to workgroups of 32: the linalg
# conformance at every size on wgpu, then `kiln bench --linalg` of solve,
# lu, Cholesky and QR at 1024 and 4096 and the batch of 10^4 x 32 on CUDA
# and wgpu in the same run, with cupy.linalg and torch.linalg, the clocks
# sampled. About four minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 150 gpu/kiln conform --backend wgpu --pattern linalg --json $R/conform-linalg-wgpu.json ) \
    > $R/conform-linalg-wgpu.txt 2>&1
grep -E "^wgpu:|^linalg/|^FAIL|real" $R/conform-linalg-wgpu.txt | head -16
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 300 gpu/kiln bench --linalg --backend cuda --backend wgpu --size 1024 --size 4096 --size 32 \
    --pattern solve --pattern lu --pattern cholesky --pattern qr --runs 5 --json $R/bench-linalg-wgpu.json ) \
    > $R/bench-linalg-wgpu.txt 2>&1
clocks_stop
grep -E "cuda|wgpu|lu_|real|absent" $R/bench-linalg-wgpu.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
