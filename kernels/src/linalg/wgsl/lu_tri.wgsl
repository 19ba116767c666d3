// What getrs's kernels share (lu_solve.wgsl, lu_solve_update.wgsl): their
// scalars, and the triangular matrix T that a substitution phase solves
// with, from getrf's factors of matrix g at `ab`: A x = b is P L U x = b
// (phase 0 the swaps, 1 L, 2 U) and A^T x = b is U^T L^T P^T x = b (3 U^T,
// 4 L^T, 5 the swaps backward). A substitution runs in blocks of at most
// 64 unknowns, j0 .. j0 + kb: forward (lower T) from the first block,
// backward (upper T) from the last.
struct Params {
    n: u32,
    nrhs: u32,
    total: u32,
    gx: u32,
    phase: u32,
    j0: u32,
    kb: u32,
}

// Element (i, j) of the phase's T: L's or U's (phases 1, 2) as stored,
// U^T's or L^T's (3, 4) read across.
fn coef(ab: u32, i: u32, j: u32) -> T {
    if (params.phase <= 2u) {
        return a[ab + j * params.n + i];
    }
    return a[ab + i * params.n + j];
}

// Whether T is lower (phases 1 and 3), so the phase runs forward.
fn forward() -> bool {
    return params.phase == 1u || params.phase == 3u;
}

// Whether T's diagonal is 1 (L's and L^T's, phases 1 and 4).
fn unit() -> bool {
    return params.phase == 1u || params.phase == 4u;
}
