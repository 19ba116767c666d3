#!/bin/bash
# The 16-bit floats computed, and kiln's tensor-core product lab: map,
# elementwise, reduce, scan, user-kernel and matmul conformance on CUDA and
# Vulkan at every size (f16 and bf16 beside the other types, the products
# rounded to their 16-bit type included), compute-sanitizer memcheck over
# the quick reduce, scan and user cases on CUDA, and benches/lab/mmalab.sh
# (mma.sync f16, bf16, tf32 and f64 kernels against cuBLAS). Needs gpu/kiln
# (`cargo build --release -p kiln-cli`) and .gl/ for Vulkan (README.md here).
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
PATTERNS="map elementwise reduce scan user matmul"
for p in $PATTERNS; do
  ( time timeout 150 gpu/kiln conform --backend cuda --pattern $p ) > $R/conform-cuda-$p.txt 2>&1
done
(
  source benches/h100/vulkan.sh
  gpu/kiln devices > $R/devices.txt 2>&1
  for p in $PATTERNS; do
    ( time timeout 150 gpu/kiln conform --backend wgpu --pattern $p ) > $R/conform-vulkan-$p.txt 2>&1
  done
) &
for p in reduce scan user; do
  ( time timeout 200 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern $p ) > $R/san-memcheck-$p.txt 2>&1
done
wait
( time timeout 240 bash benches/lab/mmalab.sh ) > $R/mmalab.txt 2>&1
for f in $(cd $R && ls conform-*.txt san-*.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -40
tail -40 $R/mmalab.txt
tar czf $OUT/out.tgz -C $OUT r
