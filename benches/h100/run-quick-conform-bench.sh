#!/bin/bash
# The merged tree on the GPU: quick conformance on CUDA and Vulkan (at
# once), then the quick CUDA bench with the CUB/cuRAND and CuPy peers.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
source benches/h100/vulkan.sh > $OUT/vulkan-setup.txt 2>&1
git log -1 --format=%H > $OUT/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $OUT/clocks.txt
( time timeout 280 gpu/kiln conform --backend cuda --quick ) > $OUT/conform-cuda-quick.txt 2>&1 &
( time timeout 280 gpu/kiln conform --backend wgpu --quick ) > $OUT/conform-wgpu-quick.txt 2>&1 &
wait
tail -n 6 $OUT/conform-cuda-quick.txt $OUT/conform-wgpu-quick.txt
( time timeout 290 gpu/kiln bench --quick --backend cuda --json $OUT/bench-cuda-quick.json ) > $OUT/bench-cuda-quick.txt 2>&1
echo "bench exit $?"; tail -n 4 $OUT/bench-cuda-quick.txt
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/clocks.txt
