#!/bin/bash
# The matrix products per dtype and mode on the GPU (`gpu/kiln` built with
# `cargo build --release -p kiln-cli`): `bash gpu/run-44-matmul.sh quick|full`.
#   quick: sgemm, sgemm_cublas and dgemm at the quick sweep (1 Ki, 1 Mi,
#          64 Mi), the matmul_* products at 4096^3, the batches at 256 x 512^3;
#   full:  every product at 1024^3, 4096^3 and 8192^3, the batches at 256 x 512^3.
# Beside them CuPy (CUPY_TF32=1 for the TF32 rows, in a process of their own)
# and torch.matmul, each row with the device's peak for its arithmetic.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
R=$OUT/matmul-${1:-quick}; mkdir -p $R
case "${1:-quick}" in
  quick) S="--quick" ;;
  full) S="--size 1Mi --size 16Mi --size 64Mi" ;;
  *) echo "usage: run-44-matmul.sh quick|full"; exit 2 ;;
esac
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/clocks.txt
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" > $R/peers.txt 2>&1
python3 -c "import cupy; print('cupy', cupy.__version__)" >> $R/peers.txt 2>&1
( time timeout 540 gpu/kiln bench --backend cuda --pattern gemm --pattern matmul $S --no-system \
    --json $R/bench-matmul.json ) > $R/bench-matmul.txt 2>&1
echo "bench exit $?"; cat $R/peers.txt
grep -E "^cuda  |^peer|real" $R/bench-matmul.txt | cut -c1-260
