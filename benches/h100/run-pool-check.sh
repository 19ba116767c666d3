#!/usr/bin/env bash
# On the GPU machine: kiln-wgpu's tests on NVIDIA's Vulkan (the buffer pool
# among them), the quick conformance of every pattern on CUDA and Vulkan,
# and the 64 Mi bench rows of the patterns, user kernels and arrays on both.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> $OUT/r/clocks.txt
timeout 200 gpu/wgpu-tests --test-threads 1 > $OUT/r/wgpu-tests.txt 2>&1; echo "wgpu tests exit $? :: $(grep 'test result' $OUT/r/wgpu-tests.txt)"
grep -E "FAILED|panicked" $OUT/r/wgpu-tests.txt | head -5
for b in cuda wgpu; do
  timeout 200 gpu/kiln conform --backend $b --quick > $OUT/r/conform-$b-quick.txt 2>&1; echo "$b quick exit $? :: $(tail -1 $OUT/r/conform-$b-quick.txt)"
done
grep -h -A6 "^FAIL" $OUT/r/conform-*-quick.txt | head -20
timeout 240 gpu/kiln bench --backend cuda --backend wgpu --size 64Mi --runs 30 --no-system --pattern copy --pattern fill \
  --pattern axpy --pattern reduce_sum --pattern dot --pattern user --pattern array --pattern random_uniform \
  --json $OUT/r/bench.json > $OUT/r/bench.txt 2>&1; echo "bench exit $?"
grep -E "^(cuda|wgpu) " $OUT/r/bench.txt | cut -c1-200
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/r/clocks.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
