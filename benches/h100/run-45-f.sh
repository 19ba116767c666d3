#!/bin/bash
# Issue 45 (wgpu round two), seventh call, about a minute (`gpu/kiln.gz`
# from `cargo build --release -p kiln-cli`, stripped and gzipped): the
# random fills with vec4 stores and the carry form of the high word, in
# conformance on Vulkan (with and without 64-bit integers) and beside CUDA
# at 1, 64 and 256 Mi.
set -u
source benches/h100/gpu-prelude.sh
( timeout 60 gpu/kiln conform --backend wgpu --pattern random; \
  KILN_WGPU_HIDE=int64 timeout 60 gpu/kiln conform --backend wgpu --pattern random ) 2>&1 | grep passed \
  > $R/conform-vulkan-random.txt
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern random_ --size 1Mi --size 64Mi \
    --size 256Mi --no-system --json $R/bench-random.json ) > $R/bench-random.txt 2>&1
cat $R/conform-vulkan-random.txt
grep -E "^(cuda|wgpu) |real" $R/bench-random.txt | cut -c1-200
tar czf $OUT/out.tgz -C $OUT r
