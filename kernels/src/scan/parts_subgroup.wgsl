// scan_parts for tile.wgsl with subgroup operations, for kernels without
// segments (every flag 0), on adapters whose subgroups are at least 4 wide
// and divide the workgroup of 256. Subgroup scans follow lane order, which
// Vulkan does not tie to the local index, so invocation i takes the part
// of rank sg_id * sg_size + sg_lane: consecutive lanes, consecutive parts.
var<workgroup> sg_totals: array<C, 64>;

fn rank(local: u32) -> u32 {
    return sg_id * sg_size + sg_lane;
}

// The inclusive scan of the 256 parts into part_v (by rank); returns the
// tile's total. Three barriers where the tree takes 18: each subgroup
// scans its lanes' parts, and each invocation adds the totals of the
// subgroups before its own. Begins with a barrier, so earlier readers of
// part_v are done; every invocation must call it.
fn scan_parts(lid: u32, mine: Part) -> Part {
    let inc = subgroupInclusiveAdd(mine.v);
    workgroupBarrier();
    if (sg_lane + 1u == sg_size) {
        sg_totals[sg_id] = inc;
    }
    workgroupBarrier();
    var before = C(0);
    for (var s = 0u; s < sg_id; s += 1u) {
        before += sg_totals[s];
    }
    part_v[lid] = before + inc;
    part_f[lid] = 0u;
    workgroupBarrier();
    return Part(part_v[255], 0u);
}
