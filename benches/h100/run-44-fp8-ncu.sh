#!/bin/bash
# The 8-bit scaled products (cuBLASLt) and Nsight Compute over kiln's own
# tensor-core kernels beside cuBLAS's at 8192^3, one call of about 7
# minutes (`gpu/kiln` from `cargo build --release -p kiln-cli`):
#   matmul conformance on CUDA (matmul/scaled among it);
#   compute-sanitizer memcheck and racecheck over the quick scaled cases;
#   the products bench at 4096^3 and 8192^3 with torch (torch._scaled_mm
#   for matmul_f8e4m3), nvidia-smi clocks sampled beside it;
#   ncu of one launch of each product at 8192^3: SpeedOfLight, compute and
#   memory workload sections and the tensor pipes' utilisation.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
( time timeout 120 gpu/kiln conform --backend cuda --pattern matmul ) > $R/conform-cuda-matmul.txt 2>&1
for tool in memcheck racecheck; do
  ( time timeout 150 $SAN --tool $tool --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul/scaled ) \
    > $R/san-$tool-scaled.txt 2>&1
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
P="--pattern matmul_f8e4m3 --pattern matmul_f16 --pattern matmul_bf16 --pattern matmul_f32_tf32 --pattern matmul_f16_own"
( time timeout 150 gpu/kiln bench --backend cuda $P --quick --no-system --json $R/bench-fp8.json ) > $R/bench-fp8.txt 2>&1
( time timeout 150 gpu/kiln bench --backend cuda $P --size 64Mi --no-system --json $R/bench-fp8-8192.json ) \
  > $R/bench-fp8-8192.txt 2>&1
kill $smi
# The tensor and FMA pipes' metrics this ncu knows on this chip.
ncu --query-metrics --chip gh100 > $R/ncu-metrics.txt 2>&1
M=$(grep -oE '^sm__pipe_(tensor_op_(hmma|gmma|dmma)|fma|fp64)_cycles_active' $R/ncu-metrics.txt | sort -u \
  | sed 's/$/.avg.pct_of_peak_sustained_active/' | paste -sd, -)
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy"
prof() { # name, kernel regex, bench pattern
  timeout 100 ncu $S ${M:+--metrics $M} -k regex:"$2" --launch-count 1 gpu/kiln bench --backend cuda --pattern $3 \
    --size 64Mi --runs 1 --warmup-ms 0 --sample-ms 0 --no-system > $R/ncu-$1.txt 2>&1
  echo "ncu $1 exit $?"
}
VENDOR='nvjet|gemm|xmma|cutlass|sm90|Kernel'
prof own-f16 kiln_matmul_mma matmul_f16_own
prof own-bf16 kiln_matmul_mma matmul_bf16_own
prof own-tf32 kiln_matmul_mma matmul_f32_tf32_own
prof own-f64 kiln_matmul_mma dgemm
prof own-sgemm kiln_matmul sgemm
prof cublas-f16 "$VENDOR" matmul_f16
prof cublas-tf32 "$VENDOR" matmul_f32_tf32
prof cublas-f64 "$VENDOR" matmul_f64
prof cublas-sgemm "$VENDOR" sgemm_cublas
prof cublaslt-fp8 "$VENDOR" matmul_f8e4m3
for f in $(cd $R && ls conform-*.txt san-*.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -20
grep -E "^cuda  |^torch|real" $R/bench-fp8.txt $R/bench-fp8-8192.txt | cut -c1-200
for f in $R/ncu-*.txt; do
  [ "$f" = $R/ncu-metrics.txt ] && continue
  echo "== $(basename $f)"
  grep -E '^  [A-Za-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|pipe_|Executed Ipc A|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|==ERROR|==WARNING' $f | cut -c1-150 | head -18
done
tar czf $OUT/out.tgz -C $OUT r
