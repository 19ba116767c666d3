#!/bin/bash
# Issue 46 (FFT), the work area as a counted buffer: kiln-cuda's fft test
# (the work area in MemoryStats and held to the limit), the fft conformance
# on CUDA and memcheck over it; then which libcufft kiln and CuPy load, and
# cuFFT's time per plan layout (benches/lab/cufft_layout.py: advanced
# layout with explicit storage dimensions against the basic layout). About
# four minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 120 gpu/kiln-cuda-tests fft memory --test-threads 1 ) > $R/cuda-tests-fft.txt 2>&1
grep -E "test |test result|panicked" $R/cuda-tests-fft.txt | head -20
( time timeout 100 gpu/kiln conform --backend cuda --pattern fft --json $R/conform-fft-cuda.json ) \
    > $R/conform-fft-cuda.txt 2>&1
grep -E "^cuda:|FAIL" $R/conform-fft-cuda.txt | head -12
( time timeout 100 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern fft --quick ) \
    > $R/memcheck-fft.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:" $R/memcheck-fft.txt
LD_DEBUG=libs timeout 60 gpu/kiln conform --backend cuda --pattern fft --quick 2>&1 | grep -E "cufft" | grep -E "calling init|trying file" | head -8 > $R/kiln-libcufft.txt
cat $R/kiln-libcufft.txt
( time timeout 200 python3 benches/lab/cufft_layout.py --runs 30 ) > $R/cufft-layout.txt 2>&1
cat $R/cufft-layout.txt
