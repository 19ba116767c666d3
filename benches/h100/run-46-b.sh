#!/bin/bash
# Issue 46 (FFT), part two, about four minutes: `kiln bench --fft` on
# CUDA, wgpu and the CPU with cupy.fft, torch.fft, numpy.fft and scipy.fft
# in the same run, the clocks sampled throughout.
set -u
source benches/h100/gpu-prelude.sh
clocks_start $R/clocks-fft-bench.csv 200
( time timeout 420 gpu/kiln bench --fft --runs 20 --json $R/bench-fft.json ) > $R/bench-fft.txt 2>&1
clocks_stop
cut -c1-170 $R/bench-fft.txt
tar czf $OUT/out.tgz -C $OUT r
