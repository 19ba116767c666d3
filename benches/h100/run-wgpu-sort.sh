#!/usr/bin/env bash
# On the GPU machine: the WGSL onesweep sort. Its conformance on NVIDIA's
# Vulkan driver at every size (and CUDA's, quick), then sort_u32 on CUDA
# and wgpu in the same run at 1 Mi to 256 Mi.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
timeout 200 gpu/kiln conform --backend wgpu --pattern sort > $OUT/conform-sort-wgpu.txt 2>&1
echo "wgpu sort: exit $? $(tail -1 $OUT/conform-sort-wgpu.txt)"; grep -m3 -A3 FAIL $OUT/conform-sort-wgpu.txt
timeout 100 gpu/kiln conform --backend cuda --pattern sort > $OUT/conform-sort-cuda.txt 2>&1
echo "cuda sort: exit $? $(tail -1 $OUT/conform-sort-cuda.txt)"; grep -m3 -A3 FAIL $OUT/conform-sort-cuda.txt
for items in ${SORT_ITEMS:-}; do
  KILN_SORT_ITEMS=$items timeout 60 gpu/kiln bench --backend wgpu --size 64Mi --runs 15 --no-system --pattern sort \
    > $OUT/sort-items-$items.txt 2>&1
  echo "items $items: $(grep -E '64Mi' $OUT/sort-items-$items.txt | head -1 | cut -c1-140)"
done
timeout 150 gpu/kiln bench --backend cuda --backend wgpu --size 1Mi --size 16Mi --size 64Mi --size 256Mi --runs 20 \
  --no-system --pattern sort --json $OUT/sort.json > $OUT/sort.txt 2>&1; echo "sort exit $?"
cut -c1-200 $OUT/sort.txt | grep -E "Mi " | head -20
