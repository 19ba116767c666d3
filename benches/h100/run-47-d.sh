#!/bin/bash
# Issue 47: the CUDA conformance of linalg/cholesky after the exact minor
# of a failed factorisation (and SPD inputs made in n^2), and the batches
# of 10^4 again after the solves stopped transposing a first. About two
# minutes.
set -u
source benches/h100/gpu-prelude.sh
timeout 40 gpu/kiln conform --backend cuda --pattern linalg/cholesky > $R/conform-linalg-cholesky-cuda.txt 2>&1
echo "linalg/cholesky: $(grep -E '^cuda:' $R/conform-linalg-cholesky-cuda.txt)"
grep -A1 FAIL $R/conform-linalg-cholesky-cuda.txt | head -4
( time timeout 90 gpu/kiln bench --linalg --backend cuda --size 32 --pattern solve --pattern cholesky --pattern eigh --runs 10 --json $R/bench-linalg-cuda-32.json ) \
    > $R/bench-linalg-cuda-32.txt 2>&1
grep -E "^(solve|cholesky|eigh)" $R/bench-linalg-cuda-32.txt | cut -c1-130
