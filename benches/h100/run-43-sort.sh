#!/bin/bash
# The sort kernels after kiln_add_starts/kiln_scatter and the one-tile
# kernel's direct stores: sort conformance at every size, compute-sanitizer,
# and the small sorts against CUB.
set -u
export PATH=/usr/local/cuda/bin:$PATH
chmod +x gpu/kiln
R=$OUT/r; mkdir -p $R
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
( time timeout 120 gpu/kiln conform --backend cuda --pattern sort ) > $R/conform-cuda-sort-full.txt 2>&1 &
( time timeout 120 $SAN --tool memcheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern sort ) > $R/san-memcheck-sort.txt 2>&1 &
( time timeout 120 $SAN --tool racecheck --print-limit 20 gpu/kiln conform --backend cuda --quick --pattern sort/tile_edges ) > $R/san-racecheck-sort-tile-edges.txt 2>&1 &
wait
for f in conform-cuda-sort-full san-memcheck-sort san-racecheck-sort-tile-edges; do
  echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$f.txt | tail -1) | $(grep -E '^cuda:' $R/$f.txt | tail -1) | $(grep real $R/$f.txt)"
done
( time timeout 100 gpu/kiln bench --backend cuda --pattern sort --size 1Ki --size 1Mi --size 64Mi --no-system --json $R/bench-sort.json ) > $R/bench-sort.txt 2>&1
echo "bench exit $?"; grep -E "^cuda  |real" $R/bench-sort.txt | cut -c1-150
tar czf $OUT/out.tgz -C $OUT r
