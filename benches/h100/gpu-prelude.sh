# Sourced first by the run-45 scripts, on the GPU machine: CUDA's tools on
# PATH; the carried binaries unpacked (gpu/*.gz, gzipped to fit the carry)
# and made executable; $R (under $OUT) made, with the GPU's name, driver
# and clocks in $R/gpu.txt; the Vulkan loader (vulkan.sh). Then
# `clocks_start FILE MS` samples the clocks into FILE every MS ms until
# `clocks_stop`; `conform_wgpu "VAR=VALUE ..." PATTERN...` runs each
# pattern's conformance on Vulkan with those variables set, into
# $R/conform-PATTERN-TAG.{json,txt}, and prints its summary.
export PATH=/usr/local/cuda/bin:$PATH
for f in gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x gpu/* 2>/dev/null
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$R/gpu.txt" 2>&1
source benches/h100/vulkan.sh
clocks_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,clocks_event_reasons.active \
    --format=csv -lms "$2" > "$1" 2>&1 &
  SMI=$!
}
clocks_stop() { kill "$SMI"; }
conform_wgpu() {
  local cfg=$1 tag p
  shift
  tag=$(echo "$cfg" | tr ' =' '__')
  for p in "$@"; do
    env $cfg timeout 120 gpu/kiln conform --backend wgpu --pattern "$p" --json "$R/conform-$p-$tag.json" \
      > "$R/conform-$p-$tag.txt" 2>&1
    echo "$cfg $p: $(grep -E '^wgpu:' "$R/conform-$p-$tag.txt")"
  done
}
