#!/bin/bash
# The mma lab on the GPU machine, one command of about 3 minutes:
#   bash benches/lab/mmalab.sh
# Builds mmalab with kiln's tiles and mmalab_v with the lab's first ones for
# the 16-bit and TF32 kernels (BK 32/16, 4 stages) and a deeper f64 k-tile
# (BK 32, 3 stages), records the clocks before and after, and writes
# the build reports (-Xptxas -v) and the runs' output under $OUT.
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/mmalab_out}
mkdir -p "$OUT"
Q="nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv"
$Q | tee "$OUT/clocks.txt"
nvcc --version | tail -2 | tee "$OUT/nvcc.txt"
V="-DKILN_HM_BK=32 -DKILN_HM_STAGES=4 -DKILN_TM_BK=16 -DKILN_TM_STAGES=4 -DKILN_DM_BK=32 -DKILN_DM_STAGES=3"
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v $V -o /tmp/mmalab_v mmalab.cu -lcublas > "$OUT/build_v.txt" 2>&1 &
bv=$!
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o /tmp/mmalab mmalab.cu -lcublas > "$OUT/build.txt" 2>&1 ||
    { cat "$OUT/build.txt"; exit 1; }
grep -E "Compiling|registers|spill" "$OUT/build.txt"
/tmp/mmalab 2>&1 | tee "$OUT/mmalab.txt"
rc=$?
$Q,noheader | tee -a "$OUT/clocks.txt"
if wait $bv; then
    echo "== variant: $V"
    /tmp/mmalab_v big=8192 2>&1 | tee "$OUT/mmalab_v.txt"
    $Q,noheader | tee -a "$OUT/clocks.txt"
else
    cat "$OUT/build_v.txt"
fi
exit $rc
