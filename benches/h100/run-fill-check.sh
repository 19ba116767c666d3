#!/usr/bin/env bash
# On the GPU machine: the fill, array and random conformance on CUDA with
# memcheck over the fills, the user float expressions on Vulkan (where f64
# cases stalled before), and the fill, random and array bench rows.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r/clocks.txt
(KILN_CONFORMANCE_TRACE=1 timeout 150 gpu/kiln conform --backend wgpu --pattern user/random-float > $OUT/r/wgpu-random-float.txt 2>&1
 echo "wgpu user/random-float exit $? :: $(grep -E 'passed' $OUT/r/wgpu-random-float.txt | tail -1)") &
for p in fill array/create random; do
  timeout 120 gpu/kiln conform --backend cuda --pattern $p > $OUT/r/cuda-${p//\//-}.txt 2>&1
  echo "cuda $p exit $? :: $(tail -1 $OUT/r/cuda-${p//\//-}.txt)"
done
timeout 150 $SAN --tool memcheck gpu/kiln conform --backend cuda --pattern fill --quick > $OUT/r/memcheck-fill.txt 2>&1
echo "memcheck fill exit $?"; tail -2 $OUT/r/memcheck-fill.txt
wait
for d in f32 f64; do
  timeout 150 gpu/kiln bench --backend cuda --backend wgpu --size 64Mi --runs 50 --no-system --pattern copy --pattern fill \
    --pattern random --pattern array --dtype $d --json $OUT/r/bench-$d.json > $OUT/r/bench-$d.txt 2>&1
  echo "bench $d exit $?"; grep -E "^(cuda|wgpu) " $OUT/r/bench-$d.txt | cut -c1-200
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/r/clocks.txt
tail -5 $OUT/r/wgpu-random-float.txt | cut -c1-300
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
