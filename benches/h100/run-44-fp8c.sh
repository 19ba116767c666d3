#!/bin/bash
# The scaled 8-bit products once more after their algorithm cache, one call
# of about 2 minutes (`gpu/kiln` from `cargo build --release -p kiln-cli`):
# conformance, memcheck over the quick cases, and the bench beside
# torch._scaled_mm at 1024^3, 4096^3 and 8192^3, clocks sampled beside it.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
( time timeout 120 gpu/kiln conform --backend cuda --pattern matmul/scaled ) > $R/conform-cuda-scaled.txt 2>&1
( time timeout 150 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul/scaled ) \
  > $R/san-memcheck-scaled.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
( time timeout 150 gpu/kiln bench --backend cuda --pattern matmul_f8e4m3 --no-system --json $R/bench-fp8.json ) \
  > $R/bench-fp8.txt 2>&1
kill $smi
for f in conform-cuda-scaled san-memcheck-scaled; do
  echo "$f: $(grep -E 'ERROR SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^cuda[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -10
grep -E "^cuda |^torch|real" $R/bench-fp8.txt | cut -c1-220
tar czf $OUT/out.tgz -C $OUT r
