#!/bin/bash
# Issue 46 (FFT): the fft conformance with fft/real_n_d (real transforms of
# 2-D and 3-D shapes, one rank-2 or rank-3 cuFFT call where the axes are
# every axis) on CUDA and Vulkan, and memcheck over the CUDA one at the
# quick sizes. About a minute.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 100 gpu/kiln conform --backend cuda --pattern fft --json $R/conform-fft-cuda.json ) \
    > $R/conform-fft-cuda.txt 2>&1
grep -E "^cuda:|FAIL|real" $R/conform-fft-cuda.txt | head -12
conform_wgpu "X=default" fft
( time timeout 100 compute-sanitizer --tool memcheck gpu/kiln conform --backend cuda --pattern fft --quick ) \
    > $R/memcheck-fft.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-fft.txt
