#!/usr/bin/env bash
# On the GPU machine: conformance of the array sort along axes, the split
# row reductions and the WGSL integer min/max (with the known divergences
# lifted); the one-array reductions at three sizes beside dot, the few-long-
# rows case, ncu durations of their kernels; last, the f64 user expressions
# on Vulkan that stalled before (under a timeout).
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r/clocks.txt
for b in cuda wgpu; do
  for p in array/sort-axis array/sort user/reduce-mean user/reduce-int array/reduce array/fused user/nested-min-max; do
    timeout 150 gpu/kiln conform --backend $b --pattern $p --no-divergences > $OUT/r/$b-${p//\//-}.txt 2>&1
    echo "$b $p exit $? :: $(tail -1 $OUT/r/$b-${p//\//-}.txt)"
  done
  timeout 200 gpu/kiln conform --backend $b --pattern array --quick > $OUT/r/$b-array-quick.txt 2>&1
  echo "$b array --quick exit $? :: $(tail -1 $OUT/r/$b-array-quick.txt)"
done
grep -h -A3 "FAIL\|fail" $OUT/r/wgpu-*.txt | head -20
timeout 200 gpu/kiln bench --backend cuda --backend wgpu --size 16Mi --size 64Mi --size 256Mi --no-system \
  --pattern reduce_sum --pattern dot --pattern user_sum_squares --pattern array_row_sums \
  --json $OUT/r/bench-reduce.json > $OUT/r/bench-reduce.txt 2>&1
echo "bench exit $?"; grep -E "^(cuda|wgpu) " $OUT/r/bench-reduce.txt | cut -c1-200
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ]; then
  timeout 150 $NCU --launch-count 300 --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size \
    gpu/kiln bench --backend cuda --size 64Mi --no-system --runs 3 --warmup-ms 0 --sample-ms 0 \
    --pattern reduce_sum --pattern dot --pattern user_sum_squares --pattern array_row_sums > $OUT/r/ncu.txt 2>&1
  echo "ncu exit $?"
  grep -E "^  [a-zA-Z_]|gpu__time_duration|launch__grid_size" $OUT/r/ncu.txt | awk 'NR<=400' | sort | uniq -c | sort -rn | head -40
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/r/clocks.txt
(KILN_CONFORMANCE_TRACE=1 timeout 90 gpu/kiln conform --backend wgpu --pattern user/random-float --no-divergences \
  > $OUT/r/wgpu-random-float.txt 2>&1; echo "wgpu user/random-float exit $? :: $(grep passed $OUT/r/wgpu-random-float.txt | tail -1)")
tail -3 $OUT/r/wgpu-random-float.txt | cut -c1-300
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
