// Tiles that wait on no other (after tile.wgsl): the last pass of a
// reduce-then-scan, where the sum of the tiles before tile t is
// carries[t], the exclusive scan of the tile totals that totals.wgsl
// wrote (two reads and one write per element where the look-back takes
// one and one, but no workgroup reads another's state), or a single tile,
// with nothing before it. tile_prefix(t, lid, total), which says which,
// comes from the host.

// The grid-stride tile `at`, loaded (take_tile).
fn claim_tile(lid: u32, at: u32) -> u32 {
    return take_tile(at, lid);
}
