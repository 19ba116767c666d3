#!/bin/bash
# Issue 47 on the H200's CUDA: the linalg conformance at every size, with
# compute-sanitizer's memcheck over it at the quick sizes, side by side;
# then `kiln bench --linalg` of solve, Cholesky and QR at 1024 and 4096 and
# the batch of 10^4 x 32, with cupy.linalg and torch.linalg, the clocks
# sampled. About four minutes. (run-47-g.sh has the wgpu half, with `.gl/`.)
set -u
source benches/h100/gpu-prelude.sh
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
( time timeout 280 gpu/kiln conform --backend cuda --pattern linalg --json $R/conform-linalg-cuda.json ) \
    > $R/conform-linalg-cuda.txt 2>&1 &
( time timeout 280 $SAN --tool memcheck gpu/kiln conform --backend cuda --pattern linalg --quick ) \
    > $R/memcheck-linalg.txt 2>&1 &
wait
for f in conform-linalg-cuda memcheck-linalg; do
  echo "== $f"; grep -E "^(cuda|wgpu):|^linalg/|ERROR SUMMARY|^FAIL|real" $R/$f.txt | head -16
done
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 200 gpu/kiln bench --linalg --backend cuda --size 1024 --size 4096 --size 32 \
    --pattern solve --pattern cholesky --pattern qr --runs 5 --json $R/bench-linalg-cuda.json ) > $R/bench-linalg-cuda.txt 2>&1
clocks_stop
cut -c1-150 $R/bench-linalg-cuda.txt
tar czf $OUT/out.tgz -C $OUT r
