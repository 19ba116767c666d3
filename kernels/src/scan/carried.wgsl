// Tiles that wait on no other (after tile.wgsl): the last pass of a
// reduce-then-scan, where the sum of the tiles before tile t is
// carries[t], the exclusive scan of the tile totals that totals.wgsl
// wrote (two reads and one write per element where the look-back takes
// one and one, but no workgroup reads another's state), or a single tile,
// with nothing before it. CARRY_AT, from the host, says which:
// carries[at], or C(0).

// Tile t's carry, read before its elements: its latency hides under
// theirs.
var<private> carry: C;

// The grid-stride tile `at`, loaded (take_tile), its carry with it.
fn claim_tile(lid: u32, at: u32) -> u32 {
    if (at < tile_count()) {
        carry = CARRY_AT;
    }
    return take_tile(at, lid);
}

fn tile_prefix(t: u32, lid: u32, total: Part) -> Part {
    return Part(carry, 0u);
}
