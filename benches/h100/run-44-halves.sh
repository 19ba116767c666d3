#!/bin/bash
# The 16-bit floats computed: map, elementwise, reduce and scan
# conformance on CUDA and Vulkan at every size (f16 and bf16 beside the
# other number types), and compute-sanitizer memcheck over the quick
# reduce and scan cases on CUDA. Needs gpu/kiln (`cargo build --release
# -p kiln-cli`) and .gl/ for Vulkan (README.md here).
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
for p in map elementwise reduce scan; do
  ( time timeout 150 gpu/kiln conform --backend cuda --pattern $p ) > $R/conform-cuda-$p.txt 2>&1
done
( time timeout 200 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern reduce ) > $R/san-memcheck-reduce.txt 2>&1 &
(
  source benches/h100/vulkan.sh
  for p in map elementwise reduce scan; do
    ( time timeout 150 gpu/kiln conform --backend wgpu --pattern $p ) > $R/conform-vulkan-$p.txt 2>&1
  done
) &
wait
( time timeout 200 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern scan ) > $R/san-memcheck-scan.txt 2>&1
for f in $(cd $R && ls *.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/*.txt | head -40
tar czf $OUT/out.tgz -C $OUT r
