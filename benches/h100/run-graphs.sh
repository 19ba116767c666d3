#!/usr/bin/env bash
# On the GPU machine: graphs on CUDA. The test binaries of kiln (graphs and
# the run-time tier) and kiln-cuda, unpacked from gpu/bundle.tgz (built with
# `cargo test --release --no-run`, each run from its package's folder), CUDA
# conformance, the graph_solver example (and under compute-sanitizer), then
# the launch and graph rows with CuPy's graphs beside them.
# Needs gpu/bundle.tgz (kiln, graph_solver and the test binaries).
set -u
mkdir -p gpu/b && tar -xzf gpu/bundle.tgz -C gpu/b && chmod +x gpu/b/*
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
for t in gpu/b/graphs-* gpu/b/runtime-* gpu/b/runtime_memory-*; do
  case "$(basename "$t")" in kiln_cuda-*|cuda-*) dir=backend-cuda ;; *) dir=. ;; esac
  (cd "$dir" && timeout 200 "$OLDPWD/$t" --test-threads 8) > "$OUT/$(basename "$t").txt" 2>&1
  echo "$(basename "$t") exit $?: $(grep -E '^test result' "$OUT/$(basename "$t").txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/$(basename "$t").txt" | head -10
done
timeout 150 gpu/b/kiln conform --backend cuda --quick > $OUT/conform.txt 2>&1; echo "conform exit $?"
tail -4 $OUT/conform.txt
timeout 60 gpu/b/graph_solver --backend cuda 2>&1 | tee $OUT/graph_solver.txt
timeout 120 compute-sanitizer --tool memcheck gpu/b/graph_solver --backend cuda > $OUT/sanitizer.txt 2>&1
echo "sanitizer exit $?"; tail -3 $OUT/sanitizer.txt
timeout 120 gpu/b/kiln bench --backend cuda --no-system --pattern launch_overhead --pattern graph_launch --runs 50 \
  --json $OUT/graphs.json 2>&1 | tee $OUT/graphs.txt | tail -16
