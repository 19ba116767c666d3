#!/bin/bash
# Issue 44's third GPU step, one call of about 4 minutes (`gpu/kiln` from
# `cargo build --release -p kiln-cli`, `.gl/` for Vulkan):
#   the scaled 8-bit products (cuBLASLt) in conformance, under memcheck, and
#   in the bench beside torch._scaled_mm at 1024^3, 4096^3 and 8192^3;
#   the Vulkan f16 products on cooperative matrices at 1024^3;
#   the f64 kernel's tile depth and stages in the mma lab at 8192^3.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
( cd benches/lab
  for v in "base:" "bk32:-DKILN_DM_BK=32 -DKILN_DM_STAGES=3" "st4:-DKILN_DM_STAGES=4" "st5:-DKILN_DM_STAGES=5"; do
    nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v ${v#*:} -o /tmp/mmalab_${v%%:*} mmalab.cu -lcublas \
      > $R/lab-build-${v%%:*}.txt 2>&1 &
  done
  wait ) &
lab=$!
source benches/h100/vulkan.sh
CUBLASLT_LOG_LEVEL=2 timeout 60 gpu/kiln conform --backend cuda --quick --pattern matmul/scaled/f8e4m3xf8e4m3 \
  > $R/cublaslt-log.txt 2>&1
( time timeout 120 gpu/kiln conform --backend cuda --pattern matmul/scaled ) > $R/conform-cuda-scaled.txt 2>&1
( time timeout 150 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul/scaled ) \
  > $R/san-memcheck-scaled.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
( time timeout 150 gpu/kiln bench --backend cuda --pattern matmul_f8e4m3 --pattern matmul_bf16 --no-system \
    --json $R/bench-fp8.json ) > $R/bench-fp8.txt 2>&1
( time timeout 100 gpu/kiln bench --backend wgpu --pattern matmul_f16_own --pattern matmul_f16_f16 --size 1Mi \
    --no-system --json $R/bench-vulkan.json ) > $R/bench-vulkan.txt 2>&1
kill $smi
wait $lab
for v in base bk32 st4 st5; do
  echo "== f64 lab $v" >> $R/lab.txt
  timeout 60 /tmp/mmalab_$v f64 nocheck big=8192 >> $R/lab.txt 2>&1
done
grep -iE "error|not supported" $R/cublaslt-log.txt | sort | uniq -c | head -5
for f in $(cd $R && ls conform-*.txt san-*.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -10
grep -h "^unsup cuda matmul/scaled/f8e4m3xf8e4m3 " $R/conform-cuda-scaled.txt | head -3 | cut -c1-300
grep -E "^(cuda|wgpu) |^torch|real" $R/bench-fp8.txt $R/bench-vulkan.txt | cut -c1-250
grep -E "==|f64|TFLOP" $R/lab.txt | head -30
tar czf $OUT/out.tgz -C $OUT r
