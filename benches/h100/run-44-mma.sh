#!/bin/bash
# kiln's tensor-core matmul kernels (kernels/src/matmul/mma.cu) and the
# 16-bit WGSL rounding on the GPU, one call of about 8 minutes (`gpu/kiln`
# from `cargo build --release -p kiln-cli`, `.gl/` for Vulkan):
#   matmul conformance on CUDA (every strategy, batches of random layouts,
#   each precision mode: `tiled` runs the mma.sync kernels on sm_80+);
#   compute-sanitizer memcheck and racecheck over the quick matmul cases;
#   elementwise and user-kernel conformance on Vulkan (f16 and bf16 among
#   them), and with `user` as its argument user-kernel conformance on CUDA
#   too (4.5 minutes on a fresh machine, NVRTC compiling every program);
#   the quick product bench on CUDA with CuPy and torch (the `_own` rows are
#   kiln's kernels, the others cuBLAS), then every product at 8192^3,
#   nvidia-smi clocks sampled beside them.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
( time timeout 200 gpu/kiln conform --backend cuda --pattern matmul ) > $R/conform-cuda-matmul.txt 2>&1
(
  source benches/h100/vulkan.sh
  for p in elementwise user; do
    ( time timeout 200 gpu/kiln conform --backend wgpu --pattern $p ) > $R/conform-vulkan-$p.txt 2>&1
  done
) &
if [ "${1:-}" = user ]; then
  ( time timeout 280 gpu/kiln conform --backend cuda --pattern user ) > $R/conform-cuda-user.txt 2>&1 &
fi
for tool in memcheck racecheck; do
  ( time timeout 200 $SAN --tool $tool --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern matmul ) \
    > $R/san-$tool-matmul.txt 2>&1
done
wait
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
( time timeout 300 gpu/kiln bench --backend cuda --pattern gemm --pattern matmul --quick --no-system \
    --json $R/bench-matmul.json ) > $R/bench-matmul.txt 2>&1
( time timeout 240 gpu/kiln bench --backend cuda --pattern gemm --pattern matmul --size 64Mi --no-system \
    --json $R/bench-matmul-8192.json ) > $R/bench-matmul-8192.txt 2>&1
kill $smi
for f in $(cd $R && ls conform-*.txt san-*.txt | sed 's/\.txt$//'); do
  echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^(cuda|wgpu)[^ ]*: [0-9]+ passed' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
grep -h "^FAIL" -A2 $R/conform-*.txt | head -30
grep -E "^cuda  |real" $R/bench-matmul.txt $R/bench-matmul-8192.txt | cut -c1-230
tar czf $OUT/out.tgz -C $OUT r
