#!/usr/bin/env bash
# On the H100, after a change to user kernels: their bench rows beside the
# patterns they stand against (axpy, dot, scan_inclusive) and CuPy, on CUDA
# and Vulkan at 64 Mi f32, with the SM clock sampled during the run.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/bench-user-clocks.csv &
SMI=$!
P="--pattern axpy --pattern dot --pattern sum_squares --pattern scan"
timeout 200 gpu/kiln bench --backend cuda --size 64Mi --size 1Mi $P --runs 50 --json $OUT/bench-user-cuda.json > $OUT/bench-user-cuda.txt 2>&1
echo "bench cuda exit $?"
timeout 150 gpu/kiln bench --backend wgpu --size 64Mi $P --runs 30 --no-system --json $OUT/bench-user-wgpu.json > $OUT/bench-user-wgpu.txt 2>&1
echo "bench wgpu exit $?"
kill $SMI
grep -E "axpy|dot|sum_squares|scan" $OUT/bench-user-cuda.txt | head -24
grep -E "axpy|dot|sum_squares|scan" $OUT/bench-user-wgpu.txt | head -12
