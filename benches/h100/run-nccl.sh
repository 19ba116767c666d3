#!/usr/bin/env bash
# On the GPU machine: kiln-cuda's NCCL and page-locked pool tests (a
# one-rank communicator of each kind, every collective checked), the
# data_parallel_sum example, and the example under compute-sanitizer.
# Needs gpu/tests.tar.zst (cargo nextest archive --release -p kiln-cuda),
# gpu/cargo-nextest and gpu/data_parallel_sum.
set -u
chmod +x gpu/cargo-nextest gpu/data_parallel_sum
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
find / -name 'libnccl.so*' -not -path '/proc/*' 2>/dev/null | head -5 | tee $OUT/nccl-libs.txt
timeout 300 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . --no-fail-fast \
  -E 'test(/nccl|page_locked/)' --success-output immediate > $OUT/tests.txt 2>&1; echo "nextest exit $?"
grep -E "PASS|FAIL|NCCL [0-9]|skipped|panicked" $OUT/tests.txt | head -30
timeout 60 gpu/data_parallel_sum 2>&1 | tee $OUT/example.txt
timeout 60 gpu/data_parallel_sum 1000 2>&1 | tee -a $OUT/example.txt
timeout 200 compute-sanitizer --tool memcheck gpu/data_parallel_sum 100003 > $OUT/sanitizer.txt 2>&1
echo "sanitizer exit $?"; tail -3 $OUT/sanitizer.txt
