#!/bin/bash
# Issue 47 (linear algebra): the linalg conformance on CUDA (cuSOLVER) and
# memcheck over it at the quick sizes, then `kiln bench --linalg` on CUDA
# with cupy.linalg and torch.linalg in the same run, the clocks sampled
# throughout. About eight minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 200 gpu/kiln conform --backend cuda --pattern linalg --json $R/conform-linalg-cuda.json ) \
    > $R/conform-linalg-cuda.txt 2>&1
grep -E "^cuda:|FAIL|contract|panicked|real" $R/conform-linalg-cuda.txt | head -30
( time timeout 150 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern linalg --quick ) \
    > $R/memcheck-linalg.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-linalg.txt
clocks_start $R/clocks-linalg-bench.csv 250
( time timeout 300 gpu/kiln bench --linalg --backend cuda --runs 5 --json $R/bench-linalg-cuda.json ) \
    > $R/bench-linalg-cuda.txt 2>&1
clocks_stop
cut -c1-150 $R/bench-linalg-cuda.txt
