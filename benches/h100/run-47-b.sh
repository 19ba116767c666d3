#!/bin/bash
# Issue 47: the CUDA linalg conformance of solve, inv and cholesky after
# the exact minor of a failed Cholesky and the solves' re-factorisation on
# failure; `kiln bench --linalg --backend cpu` on the 16 cores with
# numpy.linalg and scipy.linalg in the same run (every case up to 1024,
# solve and Cholesky at 4096, the batches of 10^4); then memcheck over
# linalg/qr, the pattern it did not finish in a minute. About seven minutes.
set -u
source benches/h100/gpu-prelude.sh
for p in solve inv cholesky; do
  timeout 60 gpu/kiln conform --backend cuda --pattern linalg/$p > $R/conform-linalg-$p-cuda.txt 2>&1
  echo "linalg/$p: $(grep -E '^cuda:' $R/conform-linalg-$p-cuda.txt)"
  grep -A1 FAIL $R/conform-linalg-$p-cuda.txt | head -4
done
nproc > $R/nproc.txt
python3 -c "import numpy; numpy.show_config()" > $R/numpy-config.txt 2>&1
( time timeout 280 gpu/kiln bench --linalg --backend cpu --size 1024 --size 4096 --size 32 --runs 3 \
    --json $R/bench-linalg-cpu.json ) > $R/bench-linalg-cpu.txt 2>&1
cut -c1-150 $R/bench-linalg-cpu.txt
timeout 110 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern linalg/qr --quick \
    > $R/memcheck-linalg-qr.txt 2>&1
echo "memcheck linalg/qr: $(grep -E 'ERROR SUMMARY' $R/memcheck-linalg-qr.txt) $(grep -E '^cuda:' $R/memcheck-linalg-qr.txt)"
