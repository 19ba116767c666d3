#!/usr/bin/env bash
# On the GPU machine: the WGSL kernels written for the hardware (histogram,
# tiled transpose and convolution, one-pass scan and compaction with
# decoupled fallback, one-dispatch fills and copies). Their conformance on
# NVIDIA's Vulkan driver at every size, then the 64 Mi rows on CUDA and
# wgpu in the same run, and the scan at several sizes.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
for p in histogram transpose image scan copy_if memory fill; do
  timeout 150 gpu/kiln conform --backend wgpu --pattern $p > $OUT/conform-$(echo $p | tr / -).txt 2>&1
  echo "$p: exit $? $(tail -1 $OUT/conform-$(echo $p | tr / -).txt)"
  grep -m3 FAIL $OUT/conform-$(echo $p | tr / -).txt
done
timeout 150 gpu/kiln conform --backend wgpu --quick > $OUT/conform-wgpu-quick.txt 2>&1
echo "quick: exit $? $(tail -1 $OUT/conform-wgpu-quick.txt)"
ROWS="--pattern copy_d2d --pattern fill --pattern transpose --pattern blur3x3 --pattern scan_inclusive --pattern compact --pattern histogram"
timeout 240 gpu/kiln bench --backend cuda --backend wgpu --size 64Mi --runs 30 --no-system $ROWS \
  --json $OUT/rows.json > $OUT/rows.txt 2>&1; echo "rows exit $?"
cut -c1-200 $OUT/rows.txt | grep -E "64Mi" | head -40
timeout 120 gpu/kiln bench --backend cuda --backend wgpu --size 1Mi --size 16Mi --size 256Mi --runs 20 --no-system \
  --pattern scan_inclusive --pattern compact --json $OUT/scan-sizes.json > $OUT/scan-sizes.txt 2>&1; echo "sizes exit $?"
cut -c1-200 $OUT/scan-sizes.txt | grep -E "Mi " | head -20
cd $OUT && tar czf r.tgz *.txt *.json && cd - > /dev/null
