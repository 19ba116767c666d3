#!/bin/bash
# The one-tile sort and the user reduction's grid: run-43-sort.sh (sort
# conformance, compute-sanitizer, the sorts against CUB), the small sizes
# against CUB; the wgpu user and Array rows; the histogram lab; Nsight
# Compute over the f32 histogram.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
source benches/h100/vulkan.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $OUT/clocks.txt
# Sort conformance at every size and the sanitizers over the sort (into $OUT/r).
bash benches/h100/run-43-sort.sh
( time timeout 150 gpu/kiln bench --backend cuda --pattern sort --pattern user_sum --pattern reduce_sum --pattern scan --size 1Ki --size 1Mi --no-system --json $OUT/bench-small.json ) > $OUT/bench-small.txt 2>&1
echo "small exit $?"; grep real $OUT/bench-small.txt
( time timeout 120 gpu/kiln bench --backend wgpu --quick --pattern user --pattern array --no-system --json $OUT/bench-wgpu-user-array.json ) > $OUT/bench-wgpu-user-array.txt 2>&1
echo "wgpu exit $?"; grep real $OUT/bench-wgpu-user-array.txt
# The histogram lab: variants of kiln's kernel against CUB, one process each.
( cd gpu/lab && for v in "f32:" "f32fadd:-DLAB_FADD=1" "f32u4:-DLAB_UNROLL=4" "f32fadd_u4:-DLAB_FADD=1 -DLAB_UNROLL=4" "i32:-DLAB_I32"; do
    name=${v%%:*}; flags=${v#*:}
    nvcc -O3 -std=c++17 -arch=sm_90 $flags -o histlab_$name histlab.cu > $OUT/histlab-build-$name.txt 2>&1 &
  done; wait
  for name in f32 f32fadd f32u4 f32fadd_u4 i32; do timeout 30 ./histlab_$name; done ) > $OUT/lab-histogram.txt 2>&1
cat $OUT/lab-histogram.txt
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis"
timeout 100 ncu $S -k regex:'kiln_histogram' --launch-count 2 gpu/kiln bench --backend cuda --pattern histogram_f32 --pattern histogram_i32 --size 64Mi --runs 1 --warmup-ms 0 --sample-ms 0 --no-system > $OUT/ncu-kiln-histogram.txt 2>&1
echo "ncu kiln exit $?"
nvcc -O3 -std=c++17 -arch=sm_90 -o gpu/cub_bench benches/peers/cub_bench.cu -lcurand 2> $OUT/nvcc.txt
timeout 100 ncu $S -k regex:'Histogram' --launch-count 4 gpu/cub_bench --cases histogram_f32,histogram_i32 --sizes 67108864 --runs 1 --warmup-ms 0 --sample-ms 0 > $OUT/ncu-cub-histogram.txt 2>&1
echo "ncu cub exit $?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/clocks.txt
