#!/bin/bash
# Issue 47 on the CPU (16 cores): `kiln bench --linalg --backend cpu` with
# numpy.linalg and scipy.linalg in the same run; and issue 46's FFT bench
# again after the basic cuFFT layout for packed real transforms. About
# eight minutes.
set -u
source benches/h100/gpu-prelude.sh
nproc > $R/nproc.txt
( time timeout 330 gpu/kiln bench --linalg --backend cpu --runs 3 --json $R/bench-linalg-cpu.json ) \
    > $R/bench-linalg-cpu.txt 2>&1
cut -c1-150 $R/bench-linalg-cpu.txt
clocks_start $R/clocks-fft-bench.csv 250
( time timeout 200 gpu/kiln bench --fft --backend cuda --runs 20 --json $R/bench-fft.json ) > $R/bench-fft.txt 2>&1
clocks_stop
cut -c1-170 $R/bench-fft.txt
