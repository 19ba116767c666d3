#!/usr/bin/env bash
# On the H100: the soundness checks. `kiln stress` for STRESS_TIME (default
# 5m) on CUDA and on Vulkan at once (two processes on one GPU), while
# compute-sanitizer's four tools run over `kiln conform --backend cuda`
# (racecheck and synccheck at the quick sizes) and memcheck and initcheck
# over a short stress run; then the GPU backends' tests. Logs and their
# summaries go to $OUT (the sanitizers' logs as one archive).
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln gpu/cargo-nextest
T=${STRESS_TIME:-5m}
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
gpu/kiln devices > $OUT/devices.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/devices.txt

gpu/kiln stress --backend cuda --duration $T --threads 4 --streams 3 --seed 0x5eed > $OUT/stress-cuda.txt 2>&1 &
P1=$!
gpu/kiln stress --backend wgpu --duration $T --threads 4 --streams 3 --max-alloc 64MiB --seed 0x5eed > $OUT/stress-wgpu.txt 2>&1 &
P2=$!

# The sanitizers beside the stress runs: memcheck and initcheck over the
# full conformance sizes (bounded: a run cut short says so in its log),
# racecheck and synccheck over the quick sizes, and memcheck and initcheck
# over a short stress run.
mkdir -p /tmp/san
san() { # tool, log, time limit, args...
  local tool=$1 log=$2 limit=$3; shift 3
  timeout $limit $SAN --tool $tool "$@" > /tmp/san/$log 2>&1; echo "$tool $log exit $?" >> /tmp/san/exits.txt
}
SAN_LIMIT=${SAN_LIMIT:-420}
san memcheck san-memcheck-conform.txt $SAN_LIMIT --leak-check full gpu/kiln conform --backend cuda &
san initcheck san-initcheck-conform.txt $SAN_LIMIT gpu/kiln conform --backend cuda &
san racecheck san-racecheck-conform.txt $SAN_LIMIT gpu/kiln conform --backend cuda --quick &
san synccheck san-synccheck-conform.txt $SAN_LIMIT gpu/kiln conform --backend cuda --quick &
for tool in memcheck initcheck; do
  san $tool san-$tool-stress.txt 200 gpu/kiln stress --backend cuda --duration 40s --threads 2 --streams 2 --timeout 300 \
    --max-alloc 64MiB --seed 0x5eed &
done

wait $P1; echo "stress cuda exit $?"
wait $P2; echo "stress wgpu exit $?"
tail -25 $OUT/stress-cuda.txt | cut -c1-200
tail -25 $OUT/stress-wgpu.txt | cut -c1-200

timeout 150 gpu/cargo-nextest nextest run --archive-file gpu/tests.tar.zst --workspace-remap . --no-fail-fast \
  --test-threads 4 > $OUT/tests.txt 2>&1; echo "nextest exit $?"
wait
{
  cat /tmp/san/exits.txt
  for f in /tmp/san/san-*.txt; do echo "== $(basename $f)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|passed|failed|PASS|FAIL" "$f" | tail -4; done
} | tee $OUT/sanitizer-summary.txt
tar czf $OUT/sanitizer-logs.tgz -C /tmp san
grep -E "Summary|FAIL|TIMEOUT" $OUT/tests.txt | head -40
