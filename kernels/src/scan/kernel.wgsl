// Scan, last pass (WGSL): each workgroup scans tile t (1024 elements: 256
// invocations x 4) and adds carries[t], the sum of every earlier tile (the
// raw exclusive scan of the first pass's tile sums; 0 for a single tile).
// SCAN_MODE 0: inclusive; 1: exclusive (0 at a segment start); 2: raw
// exclusive (the sum before each element, segment starts included: the
// carries of the level above). flag_at(i) comes with the bindings (0 when
// not segmented). In place, `src` is defined to `dst`. After tiles.wgsl.
const MODE: u32 = SCAN_MODE;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    let tiles = params.n / 1024u + select(0u, 1u, (params.n & 1023u) != 0u);
    for (var t = wg.x; t < tiles; t += groups.x) {
        let first = t * 1024u + lid * 4u;
        var xs: array<T, 4>;
        var fs: array<u32, 4>;
        var v = T(0);
        var f = 0u;
        for (var k = 0u; k < 4u; k += 1u) {
            let i = first + k;
            xs[k] = T(0);
            fs[k] = 0u;
            if (i < params.n) {
                xs[k] = src[i];
                fs[k] = flag_at(i);
            }
            v = join(v, xs[k], fs[k]);
            f = f | fs[k];
        }
        part_v[lid] = v;
        part_f[lid] = f;
        workgroupBarrier();
        // Hillis-Steele inclusive scan of the 256 invocation totals.
        for (var o = 1u; o < 256u; o <<= 1u) {
            var nv = part_v[lid];
            var nf = part_f[lid];
            if (lid >= o) {
                nv = join(part_v[lid - o], nv, nf);
                nf = nf | part_f[lid - o];
            }
            workgroupBarrier();
            part_v[lid] = nv;
            part_f[lid] = nf;
            workgroupBarrier();
        }
        var acc = carries[t];
        if (lid > 0u) {
            acc = join(acc, part_v[lid - 1u], part_f[lid - 1u]);
        }
        for (var k = 0u; k < 4u; k += 1u) {
            let i = first + k;
            let before = acc;
            acc = join(acc, xs[k], fs[k]);
            if (i < params.n) {
                if (MODE == 0u) {
                    dst[i] = acc;
                } else if (MODE == 1u) {
                    dst[i] = select(before, T(0), fs[k] != 0u);
                } else {
                    dst[i] = before;
                }
            }
        }
        workgroupBarrier();
    }
}
