#!/usr/bin/env bash
# On the GPU machine: one group of the full sweep (1 Ki to 256 Mi, CUDA and
# wgpu with CuPy, PyCUDA where its wheels are in gpu/wheels, and CubeCL),
# as the README's table is made: `bash gpu/run-full.sh a1|a2|b`.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln
case "$1" in
  a1) P="--pattern copy --pattern fill --pattern sequence --pattern map --pattern vector_add --pattern axpy" ;;
  a2) P="--pattern reduce --pattern dot --pattern scan --pattern compact --pattern histogram" ;;
  b) P="--pattern transpose --pattern sgemm --pattern grayscale --pattern blur --pattern sort" ;;
esac
if [ -d gpu/wheels ]; then
  python3 -m pip install -q --no-index --find-links gpu/wheels --no-build-isolation pycuda > $OUT/pycuda-install.log 2>&1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu-$1.txt 2>&1
mkdir -p /tmp/charts-$1
timeout 570 gpu/kiln bench --backend cuda --backend wgpu $P --json $OUT/full-$1.json --charts /tmp/charts-$1 \
  > $OUT/full-$1.txt 2>&1; echo "bench $1 exit $?"
grep -E "64Mi|4Ki " $OUT/full-$1.txt | cut -c1-200 | head -60
tar czf $OUT/charts-$1.tgz -C /tmp charts-$1
