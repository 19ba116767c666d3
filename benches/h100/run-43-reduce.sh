#!/bin/bash
# The fold's first pass at six blocks an SM: reduce conformance on CUDA,
# and reduce_sum and dot against CUB at 1, 64 and 256 Mi.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/clocks.txt
( time timeout 100 gpu/kiln conform --backend cuda --quick --pattern reduce ) > $R/conform-cuda-reduce-quick.txt 2>&1
tail -n 4 $R/conform-cuda-reduce-quick.txt
( time timeout 150 gpu/kiln bench --backend cuda --pattern reduce_sum --pattern dot --size 1Mi --size 64Mi --size 256Mi --no-system --json $R/bench-reduce.json ) > $R/bench-reduce.txt 2>&1
echo "bench exit $?"; grep -E "^cuda  |real" $R/bench-reduce.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
