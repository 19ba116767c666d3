#!/usr/bin/env bash
# On the H100, after a change to user kernels: the conformance matrix on
# CUDA and Vulkan (the user group's random expressions among it), memcheck
# over the user group on CUDA, and the GPU backends' tests.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln gpu/cargo-nextest
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/clocks.txt

timeout 240 gpu/kiln conform --backend cuda > $OUT/conform-cuda.txt 2>&1; echo "conform cuda exit $?" &
timeout 240 gpu/kiln conform --backend wgpu > $OUT/conform-wgpu.txt 2>&1; echo "conform wgpu exit $?" &
wait
grep -E "^FAIL|user" $OUT/conform-cuda.txt | head -20; tail -2 $OUT/conform-cuda.txt
grep -E "^FAIL|user" $OUT/conform-wgpu.txt | head -20; tail -2 $OUT/conform-wgpu.txt

timeout 200 $SAN --tool memcheck --leak-check full gpu/kiln conform --backend cuda --pattern user \
  > $OUT/san-memcheck-user.txt 2>&1; echo "memcheck exit $?"
grep -E "ERROR SUMMARY|passed" $OUT/san-memcheck-user.txt | tail -3
timeout 200 $SAN --tool racecheck gpu/kiln conform --backend cuda --pattern user --quick \
  > $OUT/san-racecheck-user.txt 2>&1; echo "racecheck exit $?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" $OUT/san-racecheck-user.txt | tail -3
[ -f gpu/tests.tar.zst ] && timeout 150 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . --no-fail-fast \
  --test-threads 4 > $OUT/tests.txt 2>&1; echo "nextest exit $?"
grep -E "Summary|FAIL|TIMEOUT" $OUT/tests.txt | head -20
