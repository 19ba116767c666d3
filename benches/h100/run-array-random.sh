#!/usr/bin/env bash
# On the H100: the array and random conformance groups on CUDA and Vulkan
# (one process per pattern), the array example, memcheck over the Philox
# fills, and the array and random bench rows with CuPy beside them.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/clocks.txt
conform() {
  for p in random array/promote array/fused array/reduce array/views array/create array/dot-cumsum; do
    f=$OUT/conform-$1-${p//\//-}.txt
    timeout 150 gpu/kiln conform --backend $1 --pattern $p > $f 2>&1
    echo "$1 $p exit $? :: $(tail -1 $f)"
  done
}
conform cuda & conform wgpu & wait
grep -h -A3 "^FAIL" $OUT/conform-*.txt | head -40
for b in cuda wgpu; do
  timeout 60 gpu/array --backend $b > $OUT/example-array-$b.txt 2>&1; echo "example array $b exit $?"; tail -2 $OUT/example-array-$b.txt
done
timeout 120 $SAN --tool memcheck gpu/kiln conform --backend cuda --pattern random --quick > $OUT/memcheck-random.txt 2>&1
echo "memcheck exit $?"; tail -3 $OUT/memcheck-random.txt
timeout 240 gpu/kiln bench --backend cuda --backend wgpu --size 64Mi --runs 50 --no-system --pattern copy --pattern fill \
  --pattern random --pattern array --pattern reduce --pattern dot --pattern user --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench exit $?"
grep -E "random|array|copy|fill|reduce|dot|user" $OUT/bench.txt | cut -c1-230 | head -40
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/clocks.txt
