#!/usr/bin/env bash
# On the H100: tests and conformance on every backend (CUDA, wgpu through the
# NVIDIA Vulkan driver, CPU).
set -u
. "$(dirname "$0")/vulkan.sh"
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
chmod +x gpu/kiln gpu/cargo-nextest
gpu/kiln devices 2>&1 | tee $OUT/devices.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a $OUT/devices.txt
# Of kiln-benches, only the CubeCL peer's tests (CI lints it without running
# them; the rest of the benches' tests run in CI).
timeout 330 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . --no-fail-fast \
  -E 'not package(kiln-benches) or test(/cubecl_peer::/)' \
  --test-threads 8 > $OUT/tests.txt 2>&1; echo "nextest exit $?"
grep -E "Summary|FAIL|TIMEOUT" $OUT/tests.txt | head -40
timeout 200 gpu/kiln conform --json $OUT/conform.json > $OUT/conform.txt 2>&1; echo "conform exit $?"
tail -25 $OUT/conform.txt
