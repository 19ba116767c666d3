#!/usr/bin/env bash
# On a two-GPU machine (nvidia-h200-x2): kiln-cuda's multi-device and NCCL
# tests and the data-parallel example on both GPUs, then the multi-GPU bench
# (examples/collectives.rs: every collective, 4 B to 1 GiB, in one process
# and in one process per GPU, results checked; peer copies both ways) and
# PyTorch's all-reduce and peer copies in the same run. NVLink multicast
# stays off. Needs gpu/bundle.tgz (kiln's test binaries and examples).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p gpu/b && tar -xzf gpu/bundle.tgz -C gpu/b && chmod +x gpu/b/*
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $OUT/gpus.txt
nvidia-smi topo -m > $OUT/topo.txt 2>&1; head -4 $OUT/topo.txt
for t in gpu/b/kiln_cuda-* gpu/b/cuda-*; do
  (cd backend-cuda && timeout 150 "$OLDPWD/$t" --test-threads 4) > "$OUT/two-$(basename "$t").txt" 2>&1
  echo "$(basename "$t") exit $?: $(grep -E '^test result' "$OUT/two-$(basename "$t").txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/two-$(basename "$t").txt" | head -10
done
timeout 60 gpu/b/data_parallel_sum 2>&1 | tee $OUT/data_parallel_sum.txt
timeout 200 gpu/b/collectives --json $OUT/kiln-one-process.json > $OUT/kiln-one-process.txt 2>&1
echo "collectives exit $?"; grep -E "^all_reduce|^peer|one process" $OUT/kiln-one-process.txt | tail -12
timeout 150 gpu/b/collectives --processes --json $OUT/kiln-processes.json > $OUT/kiln-processes.txt 2>&1
echo "collectives --processes exit $?"; grep -E "^all_reduce" $OUT/kiln-processes.txt | tail -4
timeout 150 python3 benches/peers/torch_nccl_bench.py --json $OUT/torch.json > $OUT/torch.txt 2>&1
echo "torch exit $?"; grep -E "^torch|all_reduce" $OUT/torch.txt | tail -5
