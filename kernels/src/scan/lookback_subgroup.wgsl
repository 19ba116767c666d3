// The subgroup's look-back (lookback.wgsl), for adapters with subgroup
// operations: subgroup 0 walks back alone, a
// subgroup's width of tiles per step, with no workgroup barrier between
// its steps; the workgroup joins it only to reduce a tile that has no state
// yet, and at the end. The kernel's entry point sets sg_lane, sg_size and
// sg_id from its builtins.

// The lowest lane set in a ballot, or sg_size where none is.
fn first_lane(b: vec4<u32>) -> u32 {
    for (var k = 0u; k < 4u; k += 1u) {
        if (b[k] != 0u) {
            return 32u * k + countTrailingZeros(b[k]);
        }
    }
    return sg_size;
}

// The sum of every tile before t (t > 0), as a Part. Lane j of subgroup 0
// reads tile p - 1 - j, again while it finds no state (at most SPIN
// times). The nearest tile that ends the walk (an inclusive
// prefix, a segment start, tile 0, or no state yet) comes from a ballot;
// the tiles nearer than it hold no segment start, so the tiles up to it
// are summed by one subgroup sum. Where that tile had no state, the whole
// workgroup reduces it from the input and the walk goes on behind it.
fn look_back(t: u32, lid: u32) -> Part {
    // The running sum, kept by subgroup 0.
    var v = C(0);
    var f = 0u;
    // Tiles [0, p) are still to be summed.
    var p = t;
    loop {
        if (sg_id == 0u) {
            // 0: done; 2: reduce tile `next`.
            var action = 0u;
            var next = 0u;
            loop {
                let valid = sg_lane < p;
                let q = p - 1u - sg_lane;
                var st = State(NOT_READY, C(0));
                for (var spin = 0u; spin < SPIN; spin += 1u) {
                    // Only the lanes still without a state read again.
                    if (valid && st.s == NOT_READY) {
                        st = read_state(q);
                    }
                    if (!subgroupAny(valid && st.s == NOT_READY)) {
                        break;
                    }
                }
                let ends = valid && ((st.s & 3u) != AGGREGATE || (st.s & 4u) != 0u || q == 0u);
                let stop = first_lane(subgroupBallot(ends));
                let take = valid && (sg_lane < stop || (sg_lane == stop && (st.s & 3u) != NOT_READY));
                let sum = subgroupAdd(select(C(0), st.v, take));
                let sf = subgroupOr(select(0u, (st.s >> 2u) & 1u, take));
                v = join(Part(sum, sf), Part(v, f)).v;
                f |= sf;
                if (stop == sg_size) {
                    // Aggregates only (and tile 0 is not among them).
                    p -= sg_size;
                    continue;
                }
                let stop_state = subgroupShuffle(st.s, stop) & 3u;
                next = p - 1u - stop;
                action = select(0u, 2u, stop_state == NOT_READY);
                break;
            }
            if (sg_lane == 0u) {
                wg_action = action;
                wg_next = next;
            }
        }
        let action = workgroupUniformLoad(&wg_action);
        let next = workgroupUniformLoad(&wg_next);
        if (action == 0u) {
            break;
        }
        let agg = reduce_tile(next, lid);
        if (sg_id == 0u) {
            v = join(agg, Part(v, f)).v;
            f |= agg.f;
            if (sg_lane == 0u) {
                wg_action = select(2u, 0u, f != 0u || next == 0u);
            }
        }
        p = next;
        if (workgroupUniformLoad(&wg_action) == 0u) {
            break;
        }
        // wg_action is written again by the next step.
        workgroupBarrier();
    }
    if (sg_id == 0u && sg_lane == 0u) {
        wg_v = v;
        wg_f = f;
    }
    let pf = workgroupUniformLoad(&wg_f);
    return Part(wg_v, pf);
}
