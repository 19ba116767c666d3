#!/bin/sh
# Builds and runs mma_emu.cpp (the host emulation of kiln's mma.cu; no GPU
# needed): [EMU_FLAGS='-DKILN_HM_BK=64 ...'] ./mma_emu.sh [f16|bf16|tf32|f64 ...]
set -e
cd "$(dirname "$0")"
out=${TMPDIR:-/tmp}/kiln_mma_emu
mkdir -p "$out"
python3 - "$out/mma_kernels_emu.inc" <<'PY'
import sys
s = open("../../kernels/src/matmul/mma.cu").read()
a = s.index("// ---------------------------------------------------------------- helpers")
b = s.index("// Block number -> (tile row")
s = s[:a] + s[b:]
s = s.replace("extern __shared__ __align__(16) unsigned char kiln_mma_smem[];", "")
open(sys.argv[1], "w").write(s + open("mma_entries.cuh").read())
PY
g++ $EMU_FLAGS -std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wno-unknown-pragmas \
    -I"$out" -o "$out/mma_emu" mma_emu.cpp -lpthread
"$out/mma_emu" "$@"
