#!/usr/bin/env bash
# On the GPU machine: the sort's conformance at every size on CUDA, on
# NVIDIA's Vulkan driver (onesweep with subgroups) and there again with
# subgroups hidden (the three-phase WGSL sort), then the quick conformance
# of every pattern on Vulkan.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
run() {
  local name=$1; shift
  timeout 200 "$@" > $OUT/$name.txt 2>&1
  echo "$name: exit $? $(tail -1 $OUT/$name.txt)"; grep -m3 -A3 FAIL $OUT/$name.txt
}
run conform-sort-cuda gpu/kiln conform --backend cuda --pattern sort
run conform-sort-wgpu gpu/kiln conform --backend wgpu --pattern sort
KILN_WGPU_HIDE=subgroups run conform-sort-wgpu-no-subgroups gpu/kiln conform --backend wgpu --pattern sort
run conform-wgpu-quick gpu/kiln conform --backend wgpu --quick
