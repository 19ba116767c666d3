#!/bin/bash
# Issue 45 (wgpu round two), first measurements, one call of about 3
# minutes (`gpu/kiln` from `cargo build --release -p kiln-cli`, `.gl/`):
#   the random fills on Vulkan in conformance, then timed beside CUDA at
#   1 Mi, 64 Mi and 256 Mi;
#   where the large sizes fall off: copy and reduce on both backends at
#   16, 64, 128, 192 and 256 Mi; clocks sampled beside the benches.
set -u
source benches/h100/gpu-prelude.sh
( time timeout 100 gpu/kiln conform --backend wgpu --pattern random ) > $R/conform-vulkan-random.txt 2>&1
clocks_start $R/bench-clocks.csv 500
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_uniform --pattern random_normal \
    --size 1Mi --size 64Mi --size 256Mi --no-system --json $R/bench-random.json ) > $R/bench-random.txt 2>&1
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern copy_d2d --pattern reduce_sum \
    --size 16Mi --size 64Mi --size 128Mi --size 192Mi --size 256Mi --no-system --json $R/bench-large.json ) \
  > $R/bench-large.txt 2>&1
clocks_stop
grep -E "passed|real" $R/conform-vulkan-random.txt
grep -E "^(cuda|wgpu) " $R/bench-random.txt $R/bench-large.txt | cut -c1-200
tar czf $OUT/out.tgz -C $OUT r
