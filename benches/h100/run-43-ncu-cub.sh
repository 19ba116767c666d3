#!/bin/bash
# Nsight Compute: kiln's exclusive scan beside its inclusive one, and CUB's
# kernels of the patterns where kiln misses its goal at 64 Mi.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
R=$OUT/r; mkdir -p $R
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
timeout 60 ncu $S -k regex:'kiln_scan' --launch-count 4 gpu/kiln bench --backend cuda --pattern scan_inclusive --pattern scan_exclusive --size 64Mi --runs 1 --warmup-ms 0 --sample-ms 0 --no-system > $R/ncu-kiln-scans.txt 2>&1
echo "ncu kiln scans exit $?"
nvcc -O3 -std=c++17 -arch=sm_90 -o gpu/cub_bench benches/peers/cub_bench.cu -lcurand 2> $R/nvcc.txt
timeout 150 ncu $S -k regex:'Reduce|Scan|Select|Histogram|Init' --launch-count 24 gpu/cub_bench --cases reduce_sum,scan_inclusive,scan_exclusive,compact,histogram_f32 --sizes 67108864 --runs 1 --warmup-ms 0 --sample-ms 0 --json $R/cub.json > $R/ncu-cub.txt 2>&1
echo "ncu cub exit $?"
grep -E '^  [A-Za-z_:<>]+.*\(|DRAM Throughput|Duration|Compute \(SM\) Throughput|No Eligible|Achieved Occupancy' $R/ncu-kiln-scans.txt $R/ncu-cub.txt | cut -c1-160 | head -120
tar czf $OUT/out.tgz -C $OUT r
