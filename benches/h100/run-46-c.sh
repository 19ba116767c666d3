#!/bin/bash
# Issue 46 (FFT), after the fix for axes of one index: the fft conformance
# on CUDA, compute-sanitizer's memcheck over it at the quick sizes (errors
# only; with --leak-check full it reports cuFFT's plan memory of the
# plans a device still holds at exit), then `kiln bench --fft` on CUDA,
# wgpu and the CPU with cupy.fft, torch.fft, numpy.fft and scipy.fft in the
# same run, the clocks sampled throughout. About eight minutes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 100 gpu/kiln conform --backend cuda --pattern fft --json $R/conform-fft-cuda.json ) \
    > $R/conform-fft-cuda.txt 2>&1
grep -E "^cuda:|FAIL|real" $R/conform-fft-cuda.txt | head -12
( time timeout 100 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern fft --quick ) \
    > $R/memcheck-fft.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-fft.txt
clocks_start $R/clocks-fft-bench.csv 250
( time timeout 330 gpu/kiln bench --fft --runs 20 --json $R/bench-fft.json ) > $R/bench-fft.txt 2>&1
clocks_stop
cut -c1-170 $R/bench-fft.txt
tar czf $OUT/out.tgz -C $OUT r
