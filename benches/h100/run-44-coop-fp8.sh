#!/bin/bash
# Issue 44's second GPU step, one call of about 6 minutes (`gpu/kiln` from
# `cargo build --release -p kiln-cli`, `.gl/` for Vulkan):
#   the devices and their matrix units (Vulkan's cooperative matrices);
#   matmul conformance on CUDA (the scaled 8-bit products through cuBLASLt,
#   the f64 kernel's m16n8k8) and on Vulkan (f16 on cooperative matrices);
#   compute-sanitizer memcheck and racecheck over the quick matmul cases;
#   the 8-bit, f64 and Vulkan f16 product rows, clocks sampled beside them;
#   ncu of kiln's f64 kernel at 8192^3.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
source benches/h100/vulkan.sh
gpu/kiln devices > $R/devices.txt 2>&1
CUBLASLT_LOG_LEVEL=2 timeout 60 gpu/kiln conform --backend cuda --quick --pattern matmul/scaled/f8e4m3xf8e4m3 \
  > $R/cublaslt-log.txt 2>&1
( time timeout 120 gpu/kiln conform --backend cuda --pattern matmul ) > $R/conform-cuda-matmul.txt 2>&1
( time timeout 200 gpu/kiln conform --backend wgpu --pattern matmul ) > $R/conform-vulkan-matmul.txt 2>&1 &
for tool in memcheck racecheck; do
  ( time timeout 150 $SAN --tool $tool --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul ) \
    > $R/san-$tool-matmul.txt 2>&1
done
wait
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
( time timeout 150 gpu/kiln bench --backend cuda --pattern matmul_f8e4m3 --pattern dgemm --pattern matmul_f64 \
    --no-system --json $R/bench-cuda.json ) > $R/bench-cuda.txt 2>&1
( time timeout 120 gpu/kiln bench --backend wgpu --pattern matmul_f16_own --pattern matmul_f16_f16 --quick \
    --no-system --json $R/bench-vulkan.json ) > $R/bench-vulkan.txt 2>&1
kill $smi
M=sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active
timeout 100 ncu --section SpeedOfLight --metrics $M -k regex:kiln_matmul_mma --launch-count 1 gpu/kiln bench \
  --backend cuda --pattern dgemm --size 64Mi --runs 1 --warmup-ms 0 --sample-ms 0 --no-system > $R/ncu-own-f64.txt 2>&1
echo "ncu exit $?"
grep -E "features" $R/devices.txt
grep -iE "error|not supported|heuristic" $R/cublaslt-log.txt | head -8
for f in $(cd $R && ls conform-*.txt san-*.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -20
grep -h "unsup cuda matmul/scaled/f8e4m3xf8e4m3 " $R/conform-cuda-matmul.txt | head -3
grep -E "^(cuda|wgpu) |^torch|real" $R/bench-cuda.txt $R/bench-vulkan.txt | cut -c1-230
grep -E "Duration|Compute \(SM\)|dmma" $R/ncu-own-f64.txt
tar czf $OUT/out.tgz -C $OUT r
