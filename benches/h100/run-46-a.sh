#!/bin/bash
# Issue 46 (FFT), part one, about five minutes (`gpu/kiln.gz` from `cargo
# build --release -p kiln-cli`): the fft conformance on CUDA (cuFFT) and on
# Vulkan (kiln's WGSL kernels, with subgroups and without), then
# compute-sanitizer's memcheck over the CUDA conformance at the quick sizes.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 120 gpu/kiln conform --backend cuda --pattern fft --json $R/conform-fft-cuda.json ) \
    > $R/conform-fft-cuda.txt 2>&1
grep -E "^cuda:|^fft|real" $R/conform-fft-cuda.txt | head -20
conform_wgpu "X=default" fft
conform_wgpu "KILN_WGPU_HIDE=subgroups" fft
( time timeout 150 compute-sanitizer --tool memcheck --leak-check full gpu/kiln conform --backend cuda --pattern fft \
    --quick ) > $R/memcheck-fft.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-fft.txt
tar czf $OUT/out.tgz -C $OUT r
