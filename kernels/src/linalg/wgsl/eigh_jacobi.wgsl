// syevd's results by cyclic Jacobi sweeps, one workgroup per symmetric
// matrix, one stage per launch (so that no invocation walks too far in
// one launch). Stage 0: the matrix (its upper triangle, or the lower with
// `lower`) copied whole into `work`, `a` set to the identity, the
// tolerance into `tol`, the status 1. Stage 1, launched once per sweep
// allowed: a matrix whose status is 0 is done; one whose largest
// off-diagonal element is within the tolerance gets status 0; the others
// take one sweep. Stage 2: the status from the tolerance once more, then
// the eigenpairs in order. Each sweep runs the n - 1 (n even) or n rounds of a round-robin tournament,
// each round n / 2 disjoint rotations at once (Golub and Van Loan's
// symmetric Schur rotation zeroing work[p, q]), applied to work's columns,
// then its rows, and to the eigenvectors' columns in `a`. Sweeps stop once
// no off-diagonal element exceeds eps times the matrix's Frobenius norm;
// a matrix still above it after `sweeps` sweeps has status 1. The
// eigenvalues (work's diagonal) are then written ascending into `w`, the
// eigenvectors' columns in the same order.
struct Params {
    n: u32,
    batch: u32,
    gx: u32,
    lower: u32,
    stage: u32,
    eps: T,
}

var<workgroup> done: u32;

var<workgroup> cs: array<T, 128>;
var<workgroup> sn: array<T, 128>;
var<workgroup> ev: array<T, 256>;

// The two players of pair k in round `round` of a tournament of m (even)
// players: player 0 stays, the others turn.
fn player(i: u32, round: u32, m: u32) -> u32 {
    if (i == 0u) {
        return 0u;
    }
    return (i - 1u + round) % (m - 1u) + 1u;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let n = params.n;
    let nn = n * n;
    let base = g * nn;
    if (params.stage == 0u) {
        // The symmetric matrix from its triangle, and V = I.
        var big = T(0.0);
        for (var t = lid; t < nn; t = t + block_x) {
            let i = t % n;
            let j = t / n;
            var at = t;
            if ((params.lower != 0u) != (i >= j)) {
                at = i * n + j;
            }
            let v = a[base + at];
            work[base + t] = v;
            big = max(big, abs(v));
        }
        let amax = wg_max(big, lid);
        var ss = T(0.0);
        if (amax > T(0.0)) {
            for (var t = lid; t < nn; t = t + block_x) {
                let v = work[base + t] / amax;
                ss = ss + v * v;
            }
        }
        let norm = amax * sqrt(wg_sum(ss, lid));
        wg_sync();
        for (var t = lid; t < nn; t = t + block_x) {
            a[base + t] = select(T(0.0), T(1.0), t % n == t / n);
        }
        if (lid == 0u) {
            tol[g] = params.eps * norm;
            info[g] = 1;
        }
        return;
    }
    if (lid == 0u) {
        done = u32(info[g] == 0);
    }
    let was_done = workgroupUniformLoad(&done) != 0u;
    if (was_done && params.stage == 1u) {
        return;
    }
    var off = T(0.0);
    for (var t = lid; t < nn; t = t + block_x) {
        if (t % n != t / n) {
            off = max(off, abs(work[base + t]));
        }
    }
    let worst = wg_max(off, lid);
    if (lid == 0u) {
        done = u32(worst <= tol[g]);
    }
    let converged = workgroupUniformLoad(&done) != 0u;
    if (params.stage == 1u) {
        if (converged) {
            if (lid == 0u) {
                info[g] = 0;
            }
            return;
        }
        let m = n + (n & 1u);
        let pairs = m / 2u;
        for (var round = 0u; round + 1u < m; round = round + 1u) {
                for (var k = lid; k < pairs; k = k + block_x) {
                    let p = player(k, round, m);
                    let q = player(m - 1u - k, round, m);
                    var c = T(1.0);
                    var s = T(0.0);
                    if (p < n && q < n) {
                        let apq = work[base + q * n + p];
                        if (apq != T(0.0)) {
                            let theta = (work[base + q * n + q] - work[base + p * n + p]) / (T(2.0) * apq);
                            let r = sqrt(T(1.0) + theta * theta);
                            let t = select(T(-1.0) / (r - theta), T(1.0) / (theta + r), theta >= T(0.0));
                            c = T(1.0) / sqrt(T(1.0) + t * t);
                            s = t * c;
                        }
                    }
                    cs[k] = c;
                    sn[k] = s;
                }
                wg_sync();
                // Columns p and q of work and of V: (x, y) -> (c x - s y, s x + c y).
                for (var t = lid; t < pairs * n; t = t + block_x) {
                    let k = t / n;
                    let r = t % n;
                    let p = player(k, round, m);
                    let q = player(m - 1u - k, round, m);
                    let s = sn[k];
                    if (s != T(0.0)) {
                        let c = cs[k];
                        let x = work[base + p * n + r];
                        let y = work[base + q * n + r];
                        work[base + p * n + r] = c * x - s * y;
                        work[base + q * n + r] = s * x + c * y;
                        let vx = a[base + p * n + r];
                        let vy = a[base + q * n + r];
                        a[base + p * n + r] = c * vx - s * vy;
                        a[base + q * n + r] = s * vx + c * vy;
                    }
                }
                wg_sync();
                // Rows p and q of work.
                for (var t = lid; t < pairs * n; t = t + block_x) {
                    let k = t / n;
                    let r = t % n;
                    let p = player(k, round, m);
                    let q = player(m - 1u - k, round, m);
                    let s = sn[k];
                    if (s != T(0.0)) {
                        let c = cs[k];
                        let x = work[base + r * n + p];
                        let y = work[base + r * n + q];
                        // The pair's own off-diagonal elements are zero by
                        // construction: set them so.
                        work[base + r * n + p] = select(c * x - s * y, T(0.0), r == q);
                        work[base + r * n + q] = select(s * x + c * y, T(0.0), r == p);
                    }
                }
                wg_sync();
            }
        return;
    }
    // Ascending order: each eigenvalue's rank among them (ties by index),
    // its column of V moved there through work.
    for (var i = lid; i < n; i = i + block_x) {
        ev[i] = work[base + i * n + i];
    }
    wg_sync();
    for (var t = lid; t < nn; t = t + block_x) {
        work[base + t] = a[base + t];
    }
    wg_sync();
    for (var i = lid; i < n; i = i + block_x) {
        let e = ev[i];
        var rank = 0u;
        for (var j = 0u; j < n; j = j + 1u) {
            let f = ev[j];
            if (f < e || (f == e && j < i)) {
                rank = rank + 1u;
            }
        }
        w[g * n + rank] = e;
        for (var r = 0u; r < n; r = r + 1u) {
            a[base + rank * n + r] = work[base + i * n + r];
        }
    }
    if (lid == 0u) {
        info[g] = select(1, 0, converged || was_done);
    }
}
