#!/usr/bin/env bash
# On the GPU machine: the user-kernel, array and random conformance groups
# at every size on CUDA and Vulkan (the two in parallel), the user_kernels
# and array examples on both, memcheck over the split row folds and the
# sort along axes; with `bench` as $1, the bench rows of #13 and #14
# (reductions, user kernels, arrays, scans, random) with CuPy beside them.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> $OUT/r/clocks.txt
if [ "${1:-}" = bench ]; then
  timeout 420 gpu/kiln bench --backend cuda --backend wgpu --size 64Mi --runs 30 --no-system --pattern copy --pattern fill \
    --pattern reduce_sum --pattern dot --pattern scan_inclusive --pattern user --pattern array --pattern random_uniform \
    --json $OUT/r/bench.json > $OUT/r/bench.txt 2>&1; echo "bench exit $?"
  grep -E "^(cuda|wgpu) " $OUT/r/bench.txt | cut -c1-200
else
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  conform() {
    for p in user array random; do
      timeout 280 gpu/kiln conform --backend $1 --pattern $p > $OUT/r/conform-$1-$p.txt 2>&1
      echo "$1 $p exit $? :: $(tail -1 $OUT/r/conform-$1-$p.txt)"
    done
  }
  conform cuda & conform wgpu & wait
  grep -h -B2 -A6 "FAIL\|fail:" $OUT/r/conform-*.txt | head -40
  for b in cuda wgpu; do
    for e in array user_kernels; do
      timeout 60 gpu/$e --backend $b > $OUT/r/example-$e-$b.txt 2>&1; echo "example $e $b exit $?: $(tail -1 $OUT/r/example-$e-$b.txt)"
    done
  done
  for p in array/sort-axis user/reduce-mean; do
    timeout 120 $SAN --tool memcheck gpu/kiln conform --backend cuda --pattern $p --quick > $OUT/r/memcheck-${p//\//-}.txt 2>&1
    echo "memcheck $p exit $?: $(grep -E 'ERROR SUMMARY' $OUT/r/memcheck-${p//\//-}.txt)"
  done
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/r/clocks.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
