#!/usr/bin/env bash
# On the H100, after a change to the library's shape: the quick bench on
# CUDA with its system cases (launch overhead of the typed and run-time
# tiers against bare cudarc) and CuPy, then the conformance matrix on CUDA
# and Vulkan, the GPU backends' tests, and initcheck over a short stress run.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln gpu/cargo-nextest
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $OUT/clocks.txt

timeout 300 gpu/kiln bench --quick --backend cuda --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench exit $?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/clocks.txt
grep -E "launch|sgemm|cublas" $OUT/bench.txt | cut -c1-220

timeout 200 gpu/kiln conform --backend cuda > $OUT/conform-cuda.txt 2>&1; echo "conform cuda exit $?" &
timeout 200 gpu/kiln conform --backend wgpu > $OUT/conform-wgpu.txt 2>&1; echo "conform wgpu exit $?" &
wait
tail -3 $OUT/conform-cuda.txt; tail -3 $OUT/conform-wgpu.txt

timeout 200 $SAN --tool initcheck gpu/kiln stress --backend cuda --duration 40s --threads 2 --streams 2 --timeout 300 \
  --max-alloc 64MiB --seed 0x5eed > $OUT/san-initcheck-stress.txt 2>&1 &
timeout 150 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . --no-fail-fast \
  --test-threads 4 > $OUT/tests.txt 2>&1; echo "nextest exit $?"
wait
grep -E "ERROR SUMMARY|PASS|FAIL" $OUT/san-initcheck-stress.txt | tail -3
grep -E "Summary|FAIL|TIMEOUT" $OUT/tests.txt | head -20
