#!/bin/bash
# Batched, transposed and padded products and the precision modes: the
# CUDA backend's cuBLAS tests, matmul conformance on CUDA and Vulkan,
# compute-sanitizer over kiln's own matmul kernels, and the matmul bench
# rows with their peers. Needs gpu/kiln (`cargo build --release -p
# kiln-cli`), gpu/tests.tar.zst and gpu/cargo-nextest (`cargo nextest
# archive --release -p kiln-cuda --archive-file gpu/tests.tar.zst`), and
# .gl/ for Vulkan (README.md here).
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln gpu/cargo-nextest 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
( time timeout 200 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . \
    -E 'test(/blas|matmul|gemm/)' --no-fail-fast ) > $R/cuda-tests-blas.txt 2>&1
echo "cuda tests: $(grep -E 'Summary|PASS|FAIL' $R/cuda-tests-blas.txt | tail -12)"
( time timeout 240 gpu/kiln conform --backend cuda --pattern matmul ) > $R/conform-cuda-matmul.txt 2>&1 &
( time timeout 240 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul ) > $R/san-memcheck-matmul.txt 2>&1 &
wait
( time timeout 200 $SAN --tool racecheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul/tiled ) > $R/san-racecheck-matmul-tiled.txt 2>&1 &
(
  source benches/h100/vulkan.sh
  time timeout 200 gpu/kiln conform --backend wgpu --pattern matmul
) > $R/conform-vulkan-matmul.txt 2>&1 &
wait
for f in conform-cuda-matmul san-memcheck-matmul san-racecheck-matmul-tiled conform-vulkan-matmul; do
  echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu|vulkan)[^ ]*:|passed|failed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
tar czf $OUT/out.tgz -C $OUT r
