#!/usr/bin/env bash
# On the GPU machine: `kiln stress` on one backend, alone on the GPU, for
# STRESS_TIME (default 300s), with its memory checks (pools read untrimmed,
# then a leak check after trim_memory(0)); then, where a tool is named, one
# compute-sanitizer tool over `kiln conform --backend cuda --quick`, bounded
# by SAN_LIMIT seconds (a run cut short says so in its log).
#   bash benches/h100/run-stress-alone.sh cuda racecheck
#   bash benches/h100/run-stress-alone.sh wgpu memcheck
set -u
. "$(dirname "$0")/vulkan.sh"
B=$1
TOOL=${2:-}
chmod +x gpu/kiln
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
gpu/kiln devices > "$OUT/devices.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv | tee "$OUT/stress-$B.txt"
gpu/kiln stress --backend "$B" --duration "${STRESS_TIME:-300s}" --threads 4 --streams 3 --max-alloc 64MiB \
  --seed 0x7e113 2>&1 | tee -a "$OUT/stress-$B.txt"
echo "exit status: ${PIPESTATUS[0]}" | tee -a "$OUT/stress-$B.txt"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv | tee -a "$OUT/stress-$B.txt"
if [ -n "$TOOL" ]; then
  extra=""
  [ "$TOOL" = memcheck ] && extra="--leak-check full"
  timeout "${SAN_LIMIT:-240}" $SAN --tool "$TOOL" $extra gpu/kiln conform --backend cuda --quick > "$OUT/san-$TOOL.txt" 2>&1
  echo "compute-sanitizer $TOOL exit $?" | tee -a "$OUT/san-$TOOL.txt"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|passed|failed" "$OUT/san-$TOOL.txt" | tail -5
fi
