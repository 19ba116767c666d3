#!/bin/bash
# Issue 45 (wgpu round two), first measurements, one call of about 3
# minutes (`gpu/kiln` from `cargo build --release -p kiln-cli`, `.gl/`):
#   the random fills on Vulkan in conformance, then timed beside CUDA at
#   1 Mi, 64 Mi and 256 Mi;
#   where the large sizes fall off: copy and reduce on both backends at
#   16, 64, 128, 192 and 256 Mi; clocks sampled beside the benches.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln 2>/dev/null
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
source benches/h100/vulkan.sh
( time timeout 100 gpu/kiln conform --backend wgpu --pattern random ) > $R/conform-vulkan-random.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active --format=csv \
  -lms 500 > $R/bench-clocks.csv 2>&1 &
smi=$!
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_uniform --pattern random_normal \
    --size 1Mi --size 64Mi --size 256Mi --no-system --json $R/bench-random.json ) > $R/bench-random.txt 2>&1
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern copy_d2d --pattern reduce_sum \
    --size 16Mi --size 64Mi --size 128Mi --size 192Mi --size 256Mi --no-system --json $R/bench-large.json ) \
  > $R/bench-large.txt 2>&1
kill $smi
grep -E "passed|real" $R/conform-vulkan-random.txt
grep -E "^(cuda|wgpu) " $R/bench-random.txt $R/bench-large.txt | cut -c1-200
tar czf $OUT/out.tgz -C $OUT r
