#!/bin/bash
# Issue 45 (wgpu round two), user scans with tiles loaded and stored
# through workgroup memory, about 2 minutes (`gpu/kiln.gz` from
# `cargo build --release -p kiln-cli`): the user-kernel conformance on
# Vulkan, then user scans from 1 Mi to 256 Mi on CUDA and wgpu, each row's
# SM clock recorded.
set -u
source benches/h100/gpu-prelude.sh
timeout 150 gpu/kiln conform --backend wgpu --pattern user --json $R/conform-user.json > $R/conform-user.txt 2>&1
echo "user: $(grep -E '^wgpu:' $R/conform-user.txt)"
( time timeout 150 gpu/kiln bench --backend cuda --backend wgpu --pattern user_scan --size 1Mi --size 16Mi \
    --size 64Mi --size 256Mi --no-system --json $R/bench-user-scan.json ) > $R/bench-user-scan.txt 2>&1
grep -E "^(cuda|wgpu) |real" $R/bench-user-scan.txt | cut -c1-140
tar czf $OUT/out.tgz -C $OUT r
