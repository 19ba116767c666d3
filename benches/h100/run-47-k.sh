#!/bin/bash
# Issue 47 on the H200's CUDA, after the QR of batches of small matrices
# moved to kiln's own kernels (qr.cu, orgqr.cu): the linalg conformance of
# QR and least squares (batches of 3 to 10^4 matrices of 2 to 64), the
# whole linalg group at the quick sizes under compute-sanitizer's memcheck
# and QR's under racecheck, then `kiln bench --linalg` of QR of 10^4 x 32
# with cupy.linalg and torch.linalg, the clocks sampled. About three
# minutes.
set -u
source benches/h100/gpu-prelude.sh
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for p in linalg/qr linalg/lstsq; do
  timeout 120 gpu/kiln conform --backend cuda --pattern $p > $R/conform-$(basename $p)-cuda.txt 2>&1
  echo "$p: $(grep -E '^cuda:' $R/conform-$(basename $p)-cuda.txt)"
  grep -A2 "^FAIL" $R/conform-$(basename $p)-cuda.txt | head -6
done
( time timeout 150 $SAN --tool memcheck gpu/kiln conform --backend cuda --pattern linalg --quick ) > $R/memcheck-linalg.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-linalg.txt
( time timeout 90 $SAN --tool racecheck gpu/kiln conform --backend cuda --pattern linalg/qr --quick ) > $R/racecheck-qr.txt 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^cuda:|real" $R/racecheck-qr.txt
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 120 gpu/kiln bench --linalg --backend cuda --size 32 --pattern qr --runs 10 --json $R/bench-linalg-qr.json ) \
    > $R/bench-linalg-qr.txt 2>&1
clocks_stop
grep -E "qr_|real|absent" $R/bench-linalg-qr.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
