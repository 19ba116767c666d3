// scan_parts for tile.wgsl by the whole workgroup, with workgroup barriers
// only: any adapter, segmented or not. Invocation i takes the part of rank
// i, which is i itself.
fn rank(local: u32) -> u32 {
    return local;
}

// The inclusive scan of the 256 invocations' parts into part_v / part_f
// (Hillis-Steele, keeping the order); returns the tile's total. Begins
// with a barrier, so earlier readers of part_v are done; every invocation
// must call it.
fn scan_parts(lid: u32, mine: Part) -> Part {
    workgroupBarrier();
    part_v[lid] = mine.v;
    part_f[lid] = mine.f;
    workgroupBarrier();
    for (var o = 1u; o < 256u; o <<= 1u) {
        var p = Part(part_v[lid], part_f[lid]);
        if (lid >= o) {
            p = join(Part(part_v[lid - o], part_f[lid - o]), p);
        }
        workgroupBarrier();
        part_v[lid] = p.v;
        part_f[lid] = p.f;
        workgroupBarrier();
    }
    return Part(part_v[255], part_f[255]);
}
