#!/bin/bash
# Issue 43's last rows: every structured pattern at 256 Mi against CUB and
# cuRAND; the exclusive scan at the quick sizes; Nsight Compute over kiln's
# and CUB's kernels where kiln misses its goal at 64 Mi. Everything lands in
# one archive (out.tgz) besides the printed summary.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/clocks.txt
( time timeout 90 gpu/kiln bench --backend cuda --pattern scan --size 1Ki --size 1Mi --size 64Mi --no-system --json $R/bench-scan.json ) > $R/bench-scan.txt 2>&1
echo "scan exit $?"; grep -E "scan_exclusive|real" $R/bench-scan.txt | cut -c1-170
( time timeout 280 gpu/kiln bench --backend cuda --size 256Mi --no-system --pattern reduce_sum --pattern dot --pattern scan --pattern compact \
   --pattern histogram --pattern sort --pattern random --pattern user_sum --json $R/bench-256mi.json ) > $R/bench-256mi.txt 2>&1
echo "256 Mi exit $?"; grep -E "^cuda|real" $R/bench-256mi.txt | cut -c1-170
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $R/clocks.txt
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for p in reduce_sum scan_inclusive compact histogram_f32; do
  timeout 60 ncu $S -k regex:'kiln_(reduce|scan|copy_if|histogram)' --launch-count 3 gpu/kiln bench --backend cuda --pattern $p --size 64Mi --runs 1 --warmup-ms 0 --sample-ms 0 --no-system > $R/ncu-kiln-$p.txt 2>&1
  echo "ncu kiln $p exit $?"
done
nvcc -O3 -std=c++17 -arch=sm_90 -o gpu/cub_bench benches/peers/cub_bench.cu -lcurand 2> $R/nvcc.txt
timeout 120 ncu $S -k regex:'Reduce|Scan|Select|Histogram' --launch-count 12 gpu/cub_bench --cases reduce_sum,scan_inclusive,compact,histogram_f32 --sizes 67108864 --runs 1 --warmup-ms 0 --sample-ms 0 > $R/ncu-cub.txt 2>&1
echo "ncu cub exit $?"
tar czf $OUT/out.tgz -C $OUT r
