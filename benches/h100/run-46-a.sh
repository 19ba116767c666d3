#!/bin/bash
# Issue 46 (FFT), about six minutes (`gpu/kiln.gz` from `cargo build
# --release -p kiln-cli`): the fft conformance on CUDA (cuFFT) and Vulkan
# (kiln's WGSL kernels, with subgroups and without), compute-sanitizer's
# memcheck over the CUDA conformance at the quick sizes, then `kiln bench
# --fft` on CUDA, wgpu and the CPU with cupy.fft, torch.fft, numpy.fft and
# scipy.fft in the same run, the clocks sampled throughout.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 150 gpu/kiln conform --backend cuda --pattern fft --json $R/conform-fft-cuda.json ) \
    > $R/conform-fft-cuda.txt 2>&1
grep -E "^cuda:|real|fail" $R/conform-fft-cuda.txt | head -20
conform_wgpu "X=default" fft
conform_wgpu "KILN_WGPU_HIDE=subgroups" fft
( time timeout 200 compute-sanitizer --tool memcheck --leak-check full gpu/kiln conform --backend cuda --pattern fft \
    --quick ) > $R/memcheck-fft.txt 2>&1
grep -E "ERROR SUMMARY|^cuda:|real" $R/memcheck-fft.txt
clocks_start $R/clocks-fft-bench.csv 200
( time timeout 280 gpu/kiln bench --fft --runs 20 --json $R/bench-fft.json ) > $R/bench-fft.txt 2>&1
clocks_stop
cat $R/bench-fft.txt | cut -c1-160
tar czf $OUT/out.tgz -C $OUT r
