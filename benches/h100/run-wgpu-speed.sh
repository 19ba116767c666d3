#!/usr/bin/env bash
# On the H100: the wgpu speed measurements. Conformance of the changed wgpu
# kernels on NVIDIA's Vulkan driver, the CUDA and wgpu memory reports, the
# quick sweep of every pattern on CUDA and wgpu with the peers while
# nvidia-smi samples the SM clock every 100 ms, and two cases alone (a case
# in the sweep must match itself alone within 5%).
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
for p in sequence fill memory reduce histogram image user/reduce-int user/reduce-mean array/reduce scan; do
  timeout 120 gpu/kiln conform --backend wgpu --pattern $p 2>&1 | tail -1 | sed "s|^|$p: |"
done > $OUT/conform-wgpu.txt
cat $OUT/conform-wgpu.txt
for t in gpu/cuda-tests; do
  [ -x "$t" ] && timeout 120 "$t" memory --test-threads 1 > $OUT/cuda-memory-tests.txt 2>&1; echo "cuda memory tests exit $?"
  grep -E "^test |test result" $OUT/cuda-memory-tests.txt | head -20
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi.csv 2>&1 &
SMI=$!
timeout 420 gpu/kiln bench --quick --no-system --backend cuda --backend wgpu --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench exit $?"
kill $SMI
timeout 60 gpu/kiln bench --backend wgpu --size 64Mi --pattern map_square --pattern vector_add --json $OUT/alone.json \
  > $OUT/alone.txt 2>&1; echo "alone exit $?"
cut -c1-230 $OUT/bench.txt | grep -E "64Mi|launch|latency|ceiling|SM " | head -120
grep -E "64Mi" $OUT/alone.txt | cut -c1-200
awk -F, 'NR>1 {print $2}' $OUT/smi.csv | sort | uniq -c | sort -rn | head -8
