#!/bin/bash
# Issue 47 after the batched routines (getrfBatched, getrsBatched,
# potrfBatched, syevjBatched) and the solves factoring a itself: the
# linalg conformance on CUDA, memcheck over each linalg pattern at the
# quick sizes, `kiln bench --linalg --backend cuda --size 32` (the batches
# of 10^4) with cupy.linalg and torch.linalg; then issue 46's FFT bench on
# CUDA after the basic cuFFT layout for packed real transforms. About
# seven minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 200 gpu/kiln conform --backend cuda --pattern linalg --json $R/conform-linalg-cuda.json ) \
    > $R/conform-linalg-cuda.txt 2>&1
grep -E "^cuda:|FAIL|contract|panicked|error:|real" $R/conform-linalg-cuda.txt | head -20
for p in solve inv lu cholesky qr eigh lstsq; do
  timeout 60 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern linalg/$p --quick \
      > $R/memcheck-linalg-$p.txt 2>&1
  echo "memcheck linalg/$p: $(grep -E 'ERROR SUMMARY' $R/memcheck-linalg-$p.txt) $(grep -E '^cuda:' $R/memcheck-linalg-$p.txt)"
done
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 120 gpu/kiln bench --linalg --backend cuda --size 32 --runs 10 --json $R/bench-linalg-cuda-32.json ) \
    > $R/bench-linalg-cuda-32.txt 2>&1
clocks_stop
cut -c1-150 $R/bench-linalg-cuda-32.txt
clocks_start $R/clocks-fft-bench.csv 250
( time timeout 150 gpu/kiln bench --fft --backend cuda --runs 20 --json $R/bench-fft.json ) > $R/bench-fft.txt 2>&1
clocks_stop
cut -c1-170 $R/bench-fft.txt
