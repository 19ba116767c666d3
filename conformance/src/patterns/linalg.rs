//! linalg: the factorisations checked by residuals in f64 on the host, not
//! against another backend: `|a x - b|` for solves, `|l l^T - a|`,
//! `|q r - a|` and `|q^T q - i|`, `|a v - v diag(w)|` and `|v^T v - i|`,
//! each applied to random vectors (so a check costs `n^2`, not `n^3`) and
//! held to `C n eps` times the operands' norms; eigenvalues, determinants
//! and least-squares solutions against faer's f64 results. The matrices
//! are seeded random ones, ill-conditioned ones (condition numbers 1e2 to
//! 1e6, `H1 diag(s) H2` with Householder reflections `H`), diagonal,
//! triangular, symmetric positive definite, and singular, not positive
//! definite and rank-deficient ones that must be refused by name. Sizes:
//! one matrix of 1, 17, 64, 255, 257, 1024, 2048 and 4096 (with a smaller
//! cap in debug builds, where the host reference and faer are slow), and
//! batches of 10^4 matrices of 4 and of 32.

use faer::linalg::solvers::{DenseSolveCore, SolveLstsq};
use faer::{Mat, MatRef, Side};
use kiln_core::{Backend, DType, Device, Error};
use kiln_kernels::linalg::{
    LinalgFloat, MatrixShape, QrMode, cholesky, det, eigh, eigvalsh, inv, lstsq, lu_factor, qr, slogdet, solve,
};
use rand::Rng;

use crate::{Cases, Ctx, Failure};

/// The bound's constant: residuals within `C n eps` of the operands' norms.
const C: f64 = 16.0;

/// Dimensions past this are cut to it in debug builds.
const DEBUG_MAX_DIM: usize = 160;

/// Batches past this are cut to it in debug builds (the batched paths are
/// the same at 64 matrices as at 10^4).
const DEBUG_MAX_BATCH: usize = 64;

/// `(batch, n)` for a suite size.
fn dims(size: usize) -> (usize, usize) {
    let (batch, n) = match size {
        0 => (1, 0),
        1 => (1, 1),
        31 => (3, 17),
        32 => (1000, 2),
        33 => (333, 3),
        255 => (1, 255),
        256 => (4, 64),
        257 => (1, 257),
        1023 => (10_000, 4),
        1024 => (1, 1024),
        1025 => (10_000, 32),
        100_003 => (1, 2048),
        s if s > 100_003 => (1, 4096),
        s => (1, s.min(512)),
    };
    if cfg!(debug_assertions) { (batch.min(DEBUG_MAX_BATCH), n.min(DEBUG_MAX_DIM)) } else { (batch, n) }
}

/// The kinds of matrices a case draws from.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Random,
    IllConditioned,
    Diagonal,
    Triangular,
}

const KINDS: [Kind; 4] = [Kind::Random, Kind::IllConditioned, Kind::Diagonal, Kind::Triangular];

/// A Householder reflection `I - 2 u u^T` of a random unit `u`, applied to
/// the rows (`left`) or columns of row-major `m` (`n` x `n`).
fn reflect(ctx: &mut Ctx, m: &mut [f64], n: usize, left: bool) {
    let mut u: Vec<f64> = (0..n).map(|_| ctx.rng.random_range(-1.0..1.0)).collect();
    let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
    u.iter_mut().for_each(|v| *v /= norm);
    if left {
        for j in 0..n {
            let d: f64 = (0..n).map(|i| u[i] * m[i * n + j]).sum();
            (0..n).for_each(|i| m[i * n + j] -= 2.0 * u[i] * d);
        }
    } else {
        for i in 0..n {
            let d: f64 = (0..n).map(|j| m[i * n + j] * u[j]).sum();
            (0..n).for_each(|j| m[i * n + j] -= 2.0 * d * u[j]);
        }
    }
}

/// One `n` x `n` matrix of `kind`, row-major, in f64 (exactly representable
/// in `T`: rounded through it).
fn matrix<T: LinalgFloat>(ctx: &mut Ctx, n: usize, kind: Kind) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    match kind {
        Kind::Random => m.iter_mut().for_each(|v| *v = ctx.rng.random_range(-1.0..1.0)),
        Kind::IllConditioned => {
            let cond = 10f64.powf(ctx.rng.random_range(2.0..6.0));
            for i in 0..n {
                let t = if n > 1 { i as f64 / (n - 1) as f64 } else { 0.0 };
                m[i * n + i] = cond.powf(-t);
            }
            reflect(ctx, &mut m, n, true);
            reflect(ctx, &mut m, n, false);
        }
        Kind::Diagonal => (0..n).for_each(|i| {
            let v: f64 = ctx.rng.random_range(0.5..2.0);
            m[i * n + i] = if ctx.rng.random_bool(0.5) { v } else { -v }
        }),
        Kind::Triangular => {
            for i in 0..n {
                for j in 0..=i {
                    // Off-diagonal entries of at most 1/n: random triangular
                    // matrices are exponentially ill-conditioned in n.
                    m[i * n + j] = if i == j {
                        ctx.rng.random_range(1.0..2.0)
                    } else {
                        ctx.rng.random_range(-1.0..1.0) / n as f64
                    };
                }
            }
        }
    }
    m.iter().map(|&v| T::from_f64(v).to_f64()).collect()
}

/// A symmetric positive definite matrix `H D H` with a Householder
/// reflection `H` and `D` in [0.5, 2), rounded through `T` (made in `n^2`
/// time, so that the large sizes stay cheap on the host).
fn spd<T: LinalgFloat>(ctx: &mut Ctx, n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    (0..n).for_each(|i| m[i * n + i] = ctx.rng.random_range(0.5..2.0));
    let mut u: Vec<f64> = (0..n).map(|_| ctx.rng.random_range(-1.0..1.0)).collect();
    let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
    u.iter_mut().for_each(|v| *v /= norm);
    // H D H = D - 2 u (D u)^T - 2 (D u) u^T + 4 (u^T D u) u u^T.
    let du: Vec<f64> = (0..n).map(|i| m[i * n + i] * u[i]).collect();
    let udu: f64 = u.iter().zip(&du).map(|(a, b)| a * b).sum();
    for i in 0..n {
        for j in 0..=i {
            let v = m[i * n + j] - 2.0 * u[i] * du[j] - 2.0 * du[i] * u[j] + 4.0 * udu * u[i] * u[j];
            let v = T::from_f64(v).to_f64();
            m[i * n + j] = v;
            m[j * n + i] = v;
        }
    }
    m
}

fn narrow<T: LinalgFloat>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

fn wide<T: LinalgFloat>(v: &[T]) -> Vec<f64> {
    v.iter().map(|&x| x.to_f64()).collect()
}

/// `m v` for row-major `m` (`rows` x `cols`).
fn mul(m: &[f64], rows: usize, cols: usize, v: &[f64]) -> Vec<f64> {
    (0..rows).map(|i| (0..cols).map(|j| m[i * cols + j] * v[j]).sum()).collect()
}

/// `m^T v` for row-major `m` (`rows` x `cols`).
fn mul_t(m: &[f64], rows: usize, cols: usize, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; cols];
    for i in 0..rows {
        for j in 0..cols {
            out[j] += m[i * cols + j] * v[i];
        }
    }
    out
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}

/// The infinity norm of row-major `m` (`rows` x `cols`).
fn mat_norm(m: &[f64], rows: usize, cols: usize) -> f64 {
    (0..rows).map(|i| m[i * cols..(i + 1) * cols].iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max)
}

fn random_vec(ctx: &mut Ctx, n: usize) -> Vec<f64> {
    (0..n).map(|_| ctx.rng.random_range(-1.0..1.0)).collect()
}

/// `Err` unless `|got - want|_inf <= bound`.
fn close(what: &str, got: &[f64], want: &[f64], bound: f64) -> Result<(), Failure> {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, |a, e| if e.is_nan() { f64::NAN } else { a.max(e) });
    if err.is_nan() || err > bound {
        return Err(Failure::Contract(format!("{what}: residual {err:.3e} past the bound {bound:.3e}")));
    }
    Ok(())
}

/// `Err` unless `r` is an `Error::LinAlg` for matrix `matrix` whose reason holds `needle`.
fn refused(what: &str, r: kiln_core::Result<()>, matrix: usize, needle: &str) -> Result<(), Failure> {
    match r {
        Err(Error::LinAlg { matrix: m, reason, .. }) if m == matrix && reason.contains(needle) => Ok(()),
        other => Err(Failure::Contract(format!(
            "{what} returned {other:?}, not Error::LinAlg for matrix {matrix} saying \"{needle}\""
        ))),
    }
}

fn eps<T: LinalgFloat>() -> f64 {
    T::EPSILON
}

/// Solve on every kind; a zero column makes one matrix singular, refused naming its column.
fn solve_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let nrhs = if batch > 1 { 1 } else { ctx.rng.random_range(1..=3) };
    let s = device.stream();
    let kind = KINDS[ctx.rng.random_range(0..KINDS.len())];
    let mut a = Vec::with_capacity(batch * n * n);
    for _ in 0..batch {
        a.extend(matrix::<T>(ctx, n, kind));
    }
    let b: Vec<f64> = narrow::<T>(&random_vec(ctx, batch * n * nrhs)).iter().map(|v| v.to_f64()).collect();
    let da = device.upload(&narrow::<T>(&a))?;
    let db = device.upload(&narrow::<T>(&b))?;
    let mut dx = device.upload(&vec![T::from_f64(f64::NAN); batch * n * nrhs])?;
    solve(&s, &da, &db, &mut dx, MatrixShape::square(batch, n), nrhs)?;
    let x = wide(&dx.to_vec()?);
    for m in 0..batch {
        let am = &a[m * n * n..(m + 1) * n * n];
        for c in 0..nrhs {
            let col = |v: &[f64]| (0..n).map(|i| v[m * n * nrhs + i * nrhs + c]).collect::<Vec<f64>>();
            let (xc, bc) = (col(&x), col(&b));
            let bound = C * n as f64 * eps::<T>() * (mat_norm(am, n, n) * inf_norm(&xc) + inf_norm(&bc));
            close(
                &format!("solve {kind:?} {batch} x {n}x{n}: |a x - b| of matrix {m}, column {c}"),
                &mul(am, n, n, &xc),
                &bc,
                bound,
            )?;
        }
    }
    if n >= 2 {
        // One singular matrix of the batch: a zero column.
        let (m, j) = (ctx.rng.random_range(0..batch), ctx.rng.random_range(0..n));
        let mut bad = a.clone();
        (0..n).for_each(|i| bad[m * n * n + i * n + j] = 0.0);
        let bad = device.upload(&narrow::<T>(&bad))?;
        let r = solve(&s, &bad, &db, &mut dx, MatrixShape::square(batch, n), nrhs);
        refused(&format!("solve with column {j} of matrix {m} zero"), r, m, &format!("column {j}"))?;
    }
    Ok(())
}

/// inv: `|a (x v) - v|`; a singular matrix refused.
fn inv_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let s = device.stream();
    let kind = KINDS[ctx.rng.random_range(0..KINDS.len())];
    let mut a = Vec::with_capacity(batch * n * n);
    for _ in 0..batch {
        a.extend(matrix::<T>(ctx, n, kind));
    }
    let da = device.upload(&narrow::<T>(&a))?;
    let mut dx = device.upload(&vec![T::from_f64(f64::NAN); batch * n * n])?;
    inv(&s, &da, &mut dx, MatrixShape::square(batch, n))?;
    let x = wide(&dx.to_vec()?);
    for m in 0..batch.min(64) {
        let (am, xm) = (&a[m * n * n..(m + 1) * n * n], &x[m * n * n..(m + 1) * n * n]);
        let v = random_vec(ctx, n);
        let bound = C * n as f64 * eps::<T>() * mat_norm(am, n, n) * mat_norm(xm, n, n) * inf_norm(&v);
        close(
            &format!("inv {kind:?} {batch} x {n}x{n}: |a (x v) - v| of matrix {m}"),
            &mul(am, n, n, &mul(xm, n, n, &v)),
            &v,
            bound,
        )?;
    }
    if n >= 2 {
        let mut bad = a[..n * n].to_vec();
        let j = ctx.rng.random_range(0..n);
        (0..n).for_each(|i| bad[i * n + j] = 0.0);
        let bad = device.upload(&narrow::<T>(&bad))?;
        let mut out = device.alloc::<T>(n * n)?;
        refused(
            "inv of a singular matrix",
            inv(&s, &bad, &mut out, MatrixShape::square(1, n)),
            0,
            &format!("column {j}"),
        )?;
    }
    Ok(())
}

/// lu_factor: the swapped `a` is `l u` (checked on a random vector), the
/// multipliers at most 1; det and slogdet against faer's f64 LU.
fn lu_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let s = device.stream();
    let kind = if ctx.rng.random_bool(0.5) { Kind::Random } else { Kind::IllConditioned };
    let mut a = Vec::with_capacity(batch * n * n);
    for _ in 0..batch {
        a.extend(matrix::<T>(ctx, n, kind));
    }
    let shape = MatrixShape::square(batch, n);
    let da = device.upload(&narrow::<T>(&a))?;
    let mut dlu = device.upload(&vec![T::from_f64(f64::NAN); batch * n * n])?;
    let mut dpiv = device.upload(&vec![-7i32; batch * n])?;
    lu_factor(&s, &da, &mut dlu, &mut dpiv, shape)?;
    let (lu, piv) = (wide(&dlu.to_vec()?), dpiv.to_vec()?);
    let mut sign_d = device.upload(&vec![T::from_f64(f64::NAN); batch])?;
    let mut log_d = device.upload(&vec![T::from_f64(f64::NAN); batch])?;
    let mut det_d = device.upload(&vec![T::from_f64(f64::NAN); batch])?;
    slogdet(&s, &da, &mut sign_d, &mut log_d, shape)?;
    det(&s, &da, &mut det_d, shape)?;
    let (signs, logs, dets) = (wide(&sign_d.to_vec()?), wide(&log_d.to_vec()?), wide(&det_d.to_vec()?));
    for m in 0..batch.min(64) {
        let am = &a[m * n * n..(m + 1) * n * n];
        let lum = &lu[m * n * n..(m + 1) * n * n];
        let pm = &piv[m * n..(m + 1) * n];
        let what = format!("lu_factor {kind:?} {batch} x {n}x{n}, matrix {m}");
        if let Some((i, p)) = pm.iter().enumerate().find(|(i, p)| **p < *i as i32 || **p >= n as i32) {
            return Err(Failure::Contract(format!("{what}: pivot {i} is {p}, not in {i}..{n}")));
        }
        if let Some(v) = (0..n).flat_map(|i| (0..i).map(move |k| lum[i * n + k])).find(|v| v.abs() > 1.0 + 1e-6) {
            return Err(Failure::Contract(format!("{what}: a multiplier of {v}, past 1 (no partial pivoting)")));
        }
        let v = random_vec(ctx, n);
        let mut pav = mul(am, n, n, &v);
        for (i, &p) in pm.iter().enumerate() {
            pav.swap(i, p as usize);
        }
        let uv: Vec<f64> = (0..n).map(|i| (i..n).map(|j| lum[i * n + j] * v[j]).sum()).collect();
        let luv: Vec<f64> = (0..n).map(|i| uv[i] + (0..i).map(|k| lum[i * n + k] * uv[k]).sum::<f64>()).collect();
        close(
            &format!("{what}: |l u v - p a v|"),
            &luv,
            &pav,
            C * n as f64 * eps::<T>() * mat_norm(am, n, n) * inf_norm(&v) * 4.0,
        )?;
        // The determinant, against faer's in f64.
        let f = MatRef::from_row_major_slice(am, n, n).partial_piv_lu();
        let (mut sign, mut log) = (1.0f64, 0.0f64);
        for i in 0..n {
            let d = f.U()[(i, i)];
            sign *= d.signum();
            log += d.abs().ln();
        }
        let swaps = {
            let fwd = f.P().arrays().0;
            let mut seen = vec![false; n];
            let mut odd = false;
            for i in 0..n {
                let mut len = 0;
                let mut k = i;
                while !seen[k] {
                    seen[k] = true;
                    k = fwd[k];
                    len += 1;
                }
                odd ^= len > 0 && len % 2 == 0;
            }
            odd
        };
        if swaps {
            sign = -sign;
        }
        // The pivots' relative errors add up in the log: within C n eps
        // (1 + sqrt|log|) (times the condition number for the ill-conditioned).
        let grow = if matches!(kind, Kind::IllConditioned) { 1e6 } else { 1.0 };
        let tol = C * n as f64 * eps::<T>() * (1.0 + log.abs().sqrt()) * grow;
        if signs[m] != sign || (logs[m] - log).abs() > tol.max(1e-300) {
            return Err(Failure::Contract(format!(
                "{what}: slogdet ({}, {}), the f64 reference ({sign}, {log})",
                signs[m], logs[m]
            )));
        }
        // det itself where it lies well inside the f32 range.
        let want = sign * log.exp();
        if log.abs() < 60.0 && (dets[m] - want).abs() > tol * want.abs() + f64::MIN_POSITIVE {
            return Err(Failure::Contract(format!("{what}: det {}, the f64 reference {want}", dets[m])));
        }
    }
    if n >= 1 {
        // A singular matrix: sign 0, log -inf, det 0.
        let bad = device.upload(&vec![T::from_f64(0.0); n * n])?;
        let (mut sg, mut lg) = (device.alloc::<T>(1)?, device.alloc::<T>(1)?);
        slogdet(&s, &bad, &mut sg, &mut lg, MatrixShape::square(1, n))?;
        let (sg, lg) = (sg.to_vec()?[0].to_f64(), lg.to_vec()?[0].to_f64());
        if sg != 0.0 || lg != f64::NEG_INFINITY {
            return Err(Failure::Contract(format!("slogdet of a zero matrix: ({sg}, {lg}), not (0, -inf)")));
        }
    }
    Ok(())
}

/// cholesky: `|l (l^T v) - a v|`, zeros above the diagonal; a matrix with
/// a negative diagonal entry refused naming a minor no later than it.
fn cholesky_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let s = device.stream();
    let mut a = Vec::with_capacity(batch * n * n);
    for _ in 0..batch {
        a.extend(spd::<T>(ctx, n));
    }
    let da = device.upload(&narrow::<T>(&a))?;
    let mut dl = device.upload(&vec![T::from_f64(f64::NAN); batch * n * n])?;
    cholesky(&s, &da, &mut dl, MatrixShape::square(batch, n))?;
    let l = wide(&dl.to_vec()?);
    for m in 0..batch.min(64) {
        let (am, lm) = (&a[m * n * n..(m + 1) * n * n], &l[m * n * n..(m + 1) * n * n]);
        let what = format!("cholesky {batch} x {n}x{n}, matrix {m}");
        if let Some((i, j)) = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).find(|&(i, j)| lm[i * n + j] != 0.0)
        {
            return Err(Failure::Contract(format!("{what}: l[{i}][{j}] = {}, above the diagonal", lm[i * n + j])));
        }
        let v = random_vec(ctx, n);
        let bound = C * n as f64 * eps::<T>() * mat_norm(am, n, n) * inf_norm(&v);
        close(&format!("{what}: |l l^T v - a v|"), &mul(lm, n, n, &mul_t(lm, n, n, &v)), &mul(am, n, n, &v), bound)?;
    }
    if n >= 1 {
        let (m, k) = (ctx.rng.random_range(0..batch), ctx.rng.random_range(0..n));
        let mut bad = a.clone();
        bad[m * n * n + k * n + k] = -1.0;
        let bad = device.upload(&narrow::<T>(&bad))?;
        match cholesky(&s, &bad, &mut dl, MatrixShape::square(batch, n)) {
            Err(Error::LinAlg { matrix, reason, .. }) if matrix == m && reason.contains("not positive definite") => {
                let order: usize = reason
                    .split("order ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|o| o.parse().ok())
                    .unwrap_or(usize::MAX);
                if order == 0 || order > k + 1 {
                    return Err(Failure::Contract(format!(
                        "cholesky with a[{k}][{k}] = -1 named the minor {order}: {reason}"
                    )));
                }
            }
            other => {
                return Err(Failure::Contract(format!(
                    "cholesky with a[{k}][{k}] = -1 of matrix {m} returned {other:?}, not Error::LinAlg for it"
                )));
            }
        }
    }
    Ok(())
}

/// qr, reduced and complete, of tall, square and wide matrices: `|q r v - a v|`,
/// `|q^T q v - v|`, `r` upper triangular.
fn qr_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let rows = n;
    let cols = match ctx.rng.random_range(0..3) {
        0 => n,
        1 => (n / 2).max(1),
        _ => n + n / 3 + 1,
    }
    .min(n.max(1) * 2);
    let cols = if n == 0 { 0 } else { cols };
    let shape = MatrixShape::new(batch, rows, cols);
    let mode = if ctx.rng.random_bool(0.5) { QrMode::Reduced } else { QrMode::Complete };
    let (qs, rs) = mode.shapes(shape);
    let s = device.stream();
    let a: Vec<f64> = narrow::<T>(&random_vec(ctx, shape.len())).iter().map(|v| v.to_f64()).collect();
    let da = device.upload(&narrow::<T>(&a))?;
    let mut dq = device.upload(&vec![T::from_f64(f64::NAN); qs.len()])?;
    let mut dr = device.upload(&vec![T::from_f64(f64::NAN); rs.len()])?;
    qr(&s, &da, &mut dq, &mut dr, shape, mode)?;
    let (q, r) = (wide(&dq.to_vec()?), wide(&dr.to_vec()?));
    let (m, n) = (rows, cols);
    let k = qs.cols;
    for b in 0..batch.min(64) {
        let what = format!("qr ({mode:?}) {batch} x {m}x{n}, matrix {b}");
        let (am, qm, rm) =
            (&a[b * m * n..(b + 1) * m * n], &q[b * m * k..(b + 1) * m * k], &r[b * k * n..(b + 1) * k * n]);
        if let Some((i, j)) =
            (0..k).flat_map(|i| (0..n.min(i)).map(move |j| (i, j))).find(|&(i, j)| rm[i * n + j] != 0.0)
        {
            return Err(Failure::Contract(format!("{what}: r[{i}][{j}] = {}, below the diagonal", rm[i * n + j])));
        }
        let v = random_vec(ctx, n);
        let bound = C * m.max(n) as f64 * eps::<T>() * mat_norm(am, m, n) * inf_norm(&v);
        close(&format!("{what}: |q r v - a v|"), &mul(qm, m, k, &mul(rm, k, n, &v)), &mul(am, m, n, &v), bound)?;
        let u = random_vec(ctx, k);
        let bound = C * m.max(1) as f64 * eps::<T>() * inf_norm(&u) * k.max(1) as f64;
        close(&format!("{what}: |q^T q u - u|"), &mul_t(qm, m, k, &mul(qm, m, k, &u)), &u, bound)?;
    }
    Ok(())
}

/// eigh and eigvalsh of symmetric matrices (random, and spd): eigenvalues
/// ascending and within `C n eps |a|` of faer's f64 ones, `|a v u - v (w u)|`
/// and `|v^T v u - u|`.
fn eigh_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let n = if cfg!(debug_assertions) { n.min(64) } else { n };
    let s = device.stream();
    let mut a = Vec::with_capacity(batch * n * n);
    for _ in 0..batch {
        let mut m = matrix::<T>(ctx, n, Kind::Random);
        for i in 0..n {
            for j in 0..i {
                m[j * n + i] = m[i * n + j];
            }
        }
        a.extend(m);
    }
    let shape = MatrixShape::square(batch, n);
    let da = device.upload(&narrow::<T>(&a))?;
    let mut dw = device.upload(&vec![T::from_f64(f64::NAN); batch * n])?;
    let mut dv = device.upload(&vec![T::from_f64(f64::NAN); batch * n * n])?;
    eigh(&s, &da, &mut dw, &mut dv, shape)?;
    let (w, v) = (wide(&dw.to_vec()?), wide(&dv.to_vec()?));
    let mut dw2 = device.upload(&vec![T::from_f64(f64::NAN); batch * n])?;
    eigvalsh(&s, &da, &mut dw2, shape)?;
    let w2 = wide(&dw2.to_vec()?);
    for b in 0..batch.min(32) {
        let what = format!("eigh {batch} x {n}x{n}, matrix {b}");
        let (am, wm, vm, w2m) = (
            &a[b * n * n..(b + 1) * n * n],
            &w[b * n..(b + 1) * n],
            &v[b * n * n..(b + 1) * n * n],
            &w2[b * n..(b + 1) * n],
        );
        let norm = mat_norm(am, n, n);
        let want = MatRef::from_row_major_slice(am, n, n)
            .self_adjoint_eigenvalues(Side::Lower)
            .map_err(|e| Failure::Contract(format!("{what}: the f64 reference failed: {e:?}")))?;
        let bound = C * n as f64 * eps::<T>() * norm + f64::MIN_POSITIVE;
        close(&format!("{what}: eigenvalues against faer's f64"), wm, &want, bound)?;
        close(&format!("{what}: eigvalsh against faer's f64"), w2m, &want, bound)?;
        if wm.windows(2).any(|p| p[0] > p[1]) {
            return Err(Failure::Contract(format!("{what}: eigenvalues not ascending: {wm:?}")));
        }
        let u = random_vec(ctx, n);
        let vu = mul(vm, n, n, &u);
        let wu: Vec<f64> = u.iter().zip(wm).map(|(u, w)| u * w).collect();
        let bound = C * n as f64 * eps::<T>() * norm * inf_norm(&u) * (n as f64).sqrt();
        close(&format!("{what}: |a v u - v (w u)|"), &mul(am, n, n, &vu), &mul(vm, n, n, &wu), bound)?;
        close(
            &format!("{what}: |v^T v u - u|"),
            &mul_t(vm, n, n, &vu),
            &u,
            C * n as f64 * eps::<T>() * inf_norm(&u) * (n as f64).sqrt(),
        )?;
    }
    Ok(())
}

/// lstsq of tall, square and wide full-rank matrices against faer's f64
/// solution (least squares, and minimum norm where wide); a duplicated
/// column refused as rank deficient.
fn lstsq_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (batch, n) = dims(ctx.n);
    let m = n;
    let cols = match ctx.rng.random_range(0..3) {
        0 => n,
        1 => (n / 2).max(1),
        _ => n + n / 2 + 1,
    };
    let cols = if n == 0 { 0 } else { cols };
    let nrhs = if batch > 1 { 1 } else { ctx.rng.random_range(1..=2) };
    let shape = MatrixShape::new(batch, m, cols);
    let s = device.stream();
    let a: Vec<f64> = narrow::<T>(&random_vec(ctx, shape.len())).iter().map(|v| v.to_f64()).collect();
    let b: Vec<f64> = narrow::<T>(&random_vec(ctx, batch * m * nrhs)).iter().map(|v| v.to_f64()).collect();
    let (da, db) = (device.upload(&narrow::<T>(&a))?, device.upload(&narrow::<T>(&b))?);
    let mut dx = device.upload(&vec![T::from_f64(f64::NAN); batch * cols * nrhs])?;
    lstsq(&s, &da, &db, &mut dx, shape, nrhs)?;
    let x = wide(&dx.to_vec()?);
    let n = cols;
    for k in 0..batch.min(32) {
        let what = format!("lstsq {batch} x {m}x{n}, {nrhs} right-hand sides, matrix {k}");
        let am = MatRef::from_row_major_slice(&a[k * m * n..(k + 1) * m * n], m, n);
        let bm = MatRef::from_row_major_slice(&b[k * m * nrhs..(k + 1) * m * nrhs], m, nrhs);
        let want: Mat<f64> = if m >= n {
            am.qr().solve_lstsq(bm)
        } else {
            // The minimum-norm solution: a^T (a a^T)^-1 b.
            let aat = am * am.transpose();
            am.transpose() * aat.partial_piv_lu().inverse() * bm
        };
        let want: Vec<f64> = (0..n).flat_map(|i| (0..nrhs).map(move |c| (i, c))).map(|(i, c)| want[(i, c)]).collect();
        let xk = &x[k * n * nrhs..(k + 1) * n * nrhs];
        // Random rectangular matrices are well conditioned; a generous constant.
        let bound = 64.0 * C * m.max(n) as f64 * eps::<T>() * inf_norm(&want).max(1.0);
        close(&what, xk, &want, bound)?;
    }
    if n >= 2 && m >= n {
        let mut bad = a[..m * n].to_vec();
        (0..m).for_each(|i| bad[i * n + 1] = bad[i * n]);
        let bad = device.upload(&narrow::<T>(&bad))?;
        let mut out = device.alloc::<T>(n * nrhs)?;
        let r = lstsq(&s, &bad, &db.slice(..m * nrhs)?, &mut out, MatrixShape::new(1, m, n), nrhs);
        refused("lstsq with a repeated column", r, 0, "rank deficient")?;
    }
    Ok(())
}

/// Bad input is refused naming it, and leaves the outputs as they were.
fn refusals<B: Backend, T: LinalgFloat>(device: &Device<B>) -> Result<(), Failure> {
    let s = device.stream();
    let a = device.upload(&narrow::<T>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))?;
    let before = narrow::<T>(&[9.0; 6]);
    let mut out = device.upload(&before)?;
    let expect = |what: &str, r: kiln_core::Result<()>, needle: &str| match r {
        Err(e) if e.to_string().contains(needle) => Ok(()),
        other => Err(Failure::Contract(format!("{what} returned {other:?}, not an error saying \"{needle}\""))),
    };
    expect("inv of a 2x3 matrix", inv(&s, &a, &mut out, MatrixShape::new(1, 2, 3)), "square")?;
    expect("cholesky of a 2x3 matrix", cholesky(&s, &a, &mut out, MatrixShape::new(1, 2, 3)), "square")?;
    match solve(&s, &a, &a, &mut out, MatrixShape::square(1, 2), 1) {
        Err(Error::LengthMismatch { expected: 4, actual: 6, .. }) => {}
        other => return Err(Failure::Contract(format!("solve of a 2x2 on 6 elements returned {other:?}"))),
    }
    if out.to_vec()? != before {
        return Err(Failure::Contract("a refused call wrote its output".into()));
    }
    Ok(())
}

fn refusals_case<B: Backend, T: LinalgFloat>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    if ctx.n == 0 { refusals::<B, T>(device) } else { Ok(()) }
}

/// Add the linalg cases to `group`, each on f32 and f64.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    macro_rules! both {
        ($name:literal, $run:ident) => {
            c.one(group, $name, DType::F32, |d, ctx| $run::<B, f32>(d, ctx));
            c.one(group, $name, DType::F64, |d, ctx| $run::<B, f64>(d, ctx));
        };
    }
    both!("linalg/solve", solve_case);
    both!("linalg/inv", inv_case);
    both!("linalg/lu", lu_case);
    both!("linalg/cholesky", cholesky_case);
    both!("linalg/qr", qr_case);
    both!("linalg/eigh", eigh_case);
    both!("linalg/lstsq", lstsq_case);
    both!("linalg/refusals", refusals_case);
}
