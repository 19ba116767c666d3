// The workgroup's look-back (lookback.wgsl), for adapters without
// subgroup operations.
//
// Earlier tiles whose states one look-back step reads at once: one per
// invocation. (32 at a time, read one by one, capped a 64 Mi f32 scan at
// 794 GB/s on an H100: every tile walks back over all those in flight.)
const WINDOW: u32 = 256u;

var<workgroup> wg_stop: atomic<u32>;
var<workgroup> wg_stop_state: u32;
var<workgroup> wg_stop_tile: u32;

// The sum of every tile before t (t > 0), as a Part. A window of the
// WINDOW (= 256, one per invocation) nearest tiles not yet summed is read
// at once, each invocation reading its tile up to SPIN times until it has
// a state. The nearest tile that ends the walk (an inclusive prefix, a
// segment start, tile 0, or no state yet) is found with an atomic max, the
// tiles from it on are summed in order by scan_parts, and then: done, or
// on to the window before, or, where that tile had no state, the whole
// workgroup reduces it from the input and goes on behind it. Every
// invocation computes the same sum; the steps are steered by what
// invocation 0 decides, broadcast by uniform loads.
fn look_back(t: u32, lid: u32) -> Part {
    var v = C(0);
    var f = 0u;
    // Tiles [0, p) are still to be summed.
    var p = t;
    loop {
        if (lid == 0u) {
            atomicStore(&wg_stop, 0u);
        }
        workgroupBarrier();
        // Invocation lid reads tile p - WINDOW + lid, if there is one.
        let valid = lid + p >= WINDOW;
        let q = p + lid - WINDOW;
        var st = State(NOT_READY, C(0));
        if (valid) {
            for (var spin = 0u; spin < SPIN && st.s == NOT_READY; spin += 1u) {
                st = read_state(q);
            }
            if ((st.s & 3u) != AGGREGATE || (st.s & 4u) != 0u || q == 0u) {
                atomicMax(&wg_stop, lid + 1u);
            }
        }
        workgroupBarrier();
        // 1 + the invocation of the nearest tile that ends the walk, or 0.
        let stop = atomicLoad(&wg_stop);
        var mine = Part(C(0), 0u);
        if (valid && (lid + 1u > stop || (lid + 1u == stop && (st.s & 3u) != NOT_READY))) {
            mine = Part(st.v, (st.s >> 2u) & 1u);
        }
        if (lid + 1u == stop) {
            wg_stop_state = st.s & 3u;
            wg_stop_tile = q;
        }
        // scan_parts begins with a barrier: the stop's state is seen after it.
        let w = scan_parts(lid, mine);
        v = join(w, Part(v, f)).v;
        f |= w.f;
        if (lid == 0u) {
            // 0: done; 1: go on before the window; 2: reduce tile wg_next.
            var action = 1u;
            var next = p - min(p, WINDOW);
            if (stop != 0u) {
                action = select(0u, 2u, wg_stop_state == NOT_READY);
                next = wg_stop_tile;
            }
            if (f != 0u) {
                action = 0u;
            }
            wg_action = action;
            wg_next = next;
        }
        let action = workgroupUniformLoad(&wg_action);
        let next = workgroupUniformLoad(&wg_next);
        if (action == 0u) {
            break;
        }
        if (action == 2u) {
            let agg = reduce_tile(next, lid);
            v = join(agg, Part(v, f)).v;
            f |= agg.f;
            if (lid == 0u) {
                wg_action = select(1u, 0u, f != 0u || next == 0u);
            }
            if (workgroupUniformLoad(&wg_action) == 0u) {
                break;
            }
        }
        p = next;
    }
    return Part(v, f);
}

