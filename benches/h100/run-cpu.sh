#!/usr/bin/env bash
# On the GPU machine: the CPU rows with NumPy beside them, on its 16 cores
# (the CPU backend's products, sort and memory-bound patterns).
set -u
chmod +x gpu/kiln
nproc | tee $OUT/cpu.txt; lscpu | grep -E "Model name|^CPU\(s\)" | tee -a $OUT/cpu.txt
python3 -c "import numpy; print('numpy', numpy.__version__)" | tee -a $OUT/cpu.txt
timeout 560 gpu/kiln bench --backend cpu --size 1Mi --size 4Mi --size 64Mi --runs 10 --no-system \
  --json $OUT/cpu.json > $OUT/cpu-bench.txt 2>&1; echo "bench exit $?"
grep -E "^cpu " $OUT/cpu-bench.txt | cut -c1-150 | head -80
