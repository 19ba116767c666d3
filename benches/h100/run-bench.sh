#!/usr/bin/env bash
# On the H100: the benches (CUDA and wgpu) with CuPy and PyCUDA in the same run.
set -u
. "$(dirname "$0")/vulkan.sh"
chmod +x gpu/kiln
timeout 120 gpu/kiln conform --backend wgpu --pattern elementwise > $OUT/conform-wgpu-recheck.txt 2>&1; echo "conform elementwise exit $?"
timeout 120 gpu/kiln conform --backend wgpu --pattern reduce >> $OUT/conform-wgpu-recheck.txt 2>&1; echo "conform reduce exit $?"
grep -E "FAIL|passed" $OUT/conform-wgpu-recheck.txt | head
python3 -m pip install -q --no-index --find-links gpu/wheels --no-build-isolation pycuda > $OUT/pycuda-install.log 2>&1
echo "pycuda install exit $?"; python3 -c "import pycuda; print('pycuda', pycuda.VERSION_TEXT)"
mkdir -p /tmp/charts
timeout 420 gpu/kiln bench --quick --backend cuda --backend wgpu --json $OUT/bench.json --charts /tmp/charts \
  > $OUT/bench.txt 2>&1; echo "bench exit $?"
cat $OUT/bench.txt | cut -c1-200 | tail -90
tar czf $OUT/charts.tgz -C /tmp charts
