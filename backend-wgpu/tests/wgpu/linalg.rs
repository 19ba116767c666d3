//! kiln's own factorisation kernels (WGSL) where their blocking shows:
//! orders that span several panels of 64 columns with a partial last one,
//! a zero pivot and a leading minor that is not positive definite found in
//! a later panel (named exactly, inputs untouched), a batch of many small
//! systems, tall Householder QR, and Jacobi's eigenpairs with its order
//! limit refused by name. References are plain Rust in f64 on seeded
//! random inputs; outputs are poisoned first.

use kiln_core::{Device, Error, Stream};
use kiln_kernels::linalg::{cholesky, eigh, qr, solve, MatrixShape, QrMode};
use kiln_wgpu::Wgpu;
use rand::Rng;

use crate::common::{device, rng};

const POISON: f32 = -7777.25;

fn stream(device: &Device<Wgpu>) -> Stream<Wgpu> {
    device.stream()
}

fn random(seed: u64, len: usize) -> Vec<f64> {
    let mut r = rng(seed);
    (0..len).map(|_| r.random_range(-1.0..1.0)).collect()
}

/// `a b` for row-major `a` (`m` x `k`) and `b` (`k` x `n`), in f64.
fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|ij| (0..k).map(|t| a[ij / n * k + t] * b[t * n + ij % n]).sum()).collect()
}

fn narrow(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

fn wide(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// `max |got - want| <= tol max |want|`, naming the worst element.
#[track_caller]
fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = max_abs(want).max(1.0);
    let (i, err) = got.iter().zip(want).map(|(g, w)| (g - w).abs()).enumerate().fold((0, 0.0), |m, (i, e)| {
        if e > m.1 || e.is_nan() {
            (i, e)
        } else {
            m
        }
    });
    assert!(
        err <= tol * scale,
        "{what}: element {i} is {} (want {}), error {err:e} over {tol:e} x {scale}",
        got[i],
        want[i]
    );
}

#[test]
fn solves_across_panels_match_the_residual_bound() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    // 150 = two full panels and a partial one; 64 exactly one; 65 one and a column.
    for (n, nrhs, seed) in [(150, 3, 1), (64, 1, 2), (65, 2, 3)] {
        let mut a = random(seed, n * n);
        for i in 0..n {
            a[i * n + i] += 0.5; // well away from singular
        }
        let x_true = random(seed + 100, n * nrhs);
        let b = matmul(&a, &x_true, n, n, nrhs);
        let (da, db) = (s.upload(&narrow(&a)).unwrap(), s.upload(&narrow(&b)).unwrap());
        let mut dx = s.upload(&vec![POISON; n * nrhs]).unwrap();
        solve(&s, &da, &db, &mut dx, MatrixShape::square(1, n), nrhs).unwrap();
        let x = wide(&dx.to_vec().unwrap());
        // The residual of the computed x, relative to |A| |x| n eps.
        let r: Vec<f64> = matmul(&a, &x, n, n, nrhs).iter().zip(&b).map(|(ax, b)| ax - b).collect();
        let bound = 16.0 * n as f64 * f64::from(f32::EPSILON) * max_abs(&a) * n as f64 * max_abs(&x);
        assert!(max_abs(&r) <= bound, "solve {n}x{n}, {nrhs} rhs: residual {:e} over {bound:e}", max_abs(&r));
        assert_eq!(wide(&da.to_vec().unwrap()), wide(&narrow(&a)), "a is untouched");
    }
}

#[test]
fn a_zero_pivot_in_a_later_panel_is_named_by_column() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    let n = 150;
    let mut a = random(7, n * n);
    for i in 0..n {
        a[i * n + 100] = 0.0; // column 100 is zero: its pivot is exactly 0
    }
    let da = s.upload(&narrow(&a)).unwrap();
    let db = s.upload(&narrow(&random(8, n))).unwrap();
    let mut dx = s.upload(&vec![POISON; n]).unwrap();
    match solve(&s, &da, &db, &mut dx, MatrixShape::square(1, n), 1) {
        Err(Error::LinAlg { matrix: 0, reason, .. }) => {
            assert!(reason.contains("column 100"), "the reason names column 100: {reason}")
        }
        other => panic!("solve of a singular matrix returned {other:?}"),
    }
    assert_eq!(da.to_vec().unwrap(), narrow(&a), "a is untouched");
}

#[test]
fn cholesky_across_panels_and_its_failing_minor() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    let n = 140;
    // A = M M^T + n I, symmetric positive definite.
    let m = random(11, n * n);
    let mt: Vec<f64> = (0..n * n).map(|ij| m[(ij % n) * n + ij / n]).collect();
    let mut a = matmul(&m, &mt, n, n, n);
    for i in 0..n {
        a[i * n + i] += n as f64;
    }
    let da = s.upload(&narrow(&a)).unwrap();
    let mut dl = s.upload(&vec![POISON; n * n]).unwrap();
    cholesky(&s, &da, &mut dl, MatrixShape::square(1, n)).unwrap();
    let l = wide(&dl.to_vec().unwrap());
    assert!((0..n).all(|i| (i + 1..n).all(|j| l[i * n + j] == 0.0)), "zeros above the diagonal");
    let lt: Vec<f64> = (0..n * n).map(|ij| l[(ij % n) * n + ij / n]).collect();
    assert_close("L L^T against A", &matmul(&l, &lt, n, n, n), &a, 64.0 * n as f64 * f64::from(f32::EPSILON));

    // Diagonal but for entry 129, which is negative: minor 130 fails.
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        d[i * n + i] = if i == 129 { -1.0 } else { 2.0 };
    }
    let dd = s.upload(&narrow(&d)).unwrap();
    match cholesky(&s, &dd, &mut dl, MatrixShape::square(1, n)) {
        Err(Error::LinAlg { matrix: 0, reason, .. }) => {
            assert!(reason.contains("order 130"), "names minor 130: {reason}")
        }
        other => panic!("cholesky of an indefinite matrix returned {other:?}"),
    }
}

#[test]
fn many_small_systems_in_one_batch() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    let (batch, n) = (1000, 4);
    let mut a = random(21, batch * n * n);
    for b in 0..batch {
        for i in 0..n {
            a[b * n * n + i * n + i] += 3.0;
        }
    }
    let rhs = random(22, batch * n);
    let (da, db) = (s.upload(&narrow(&a)).unwrap(), s.upload(&narrow(&rhs)).unwrap());
    let mut dx = s.upload(&vec![POISON; batch * n]).unwrap();
    solve(&s, &da, &db, &mut dx, MatrixShape::square(batch, n), 1).unwrap();
    let x = wide(&dx.to_vec().unwrap());
    for b in 0..batch {
        let ax = matmul(&a[b * n * n..(b + 1) * n * n], &x[b * n..(b + 1) * n], n, n, 1);
        assert_close(&format!("matrix {b}: A x against b"), &ax, &rhs[b * n..(b + 1) * n], 1e-5);
    }
}

#[test]
fn tall_qr_in_both_modes_is_orthonormal_and_reproduces_a() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    // 300 x 200 is past one workgroup's walk: one launch per reflector.
    let (m, n) = (300, 200);
    let a = random(31, m * n);
    let da = s.upload(&narrow(&a)).unwrap();
    let shape = MatrixShape::new(1, m, n);
    let mut dq = s.upload(&vec![POISON; m * n]).unwrap();
    let mut dr = s.upload(&vec![POISON; n * n]).unwrap();
    qr(&s, &da, &mut dq, &mut dr, shape, QrMode::Reduced).unwrap();
    let (q, r) = (wide(&dq.to_vec().unwrap()), wide(&dr.to_vec().unwrap()));
    assert!((0..n).all(|i| (0..i).all(|j| r[i * n + j] == 0.0)), "R is upper triangular");
    let tol = 16.0 * m as f64 * f64::from(f32::EPSILON);
    assert_close("Q R against A", &matmul(&q, &r, m, n, n), &a, tol);
    let qt: Vec<f64> = (0..n * m).map(|ji| q[(ji % m) * n + ji / m]).collect();
    let eye: Vec<f64> = (0..n * n).map(|ij| f64::from(u8::from(ij / n == ij % n))).collect();
    assert_close("Q^T Q against I", &matmul(&qt, &q, n, m, n), &eye, tol);

    // Complete: Q is m x m, its last m - n columns made from the identity's
    // (past one workgroup's walk too), R is m x n with zero rows below n.
    let mut dq = s.upload(&vec![POISON; m * m]).unwrap();
    let mut dr = s.upload(&vec![POISON; m * n]).unwrap();
    qr(&s, &da, &mut dq, &mut dr, shape, QrMode::Complete).unwrap();
    let (q, r) = (wide(&dq.to_vec().unwrap()), wide(&dr.to_vec().unwrap()));
    assert!(r[n * n..].iter().all(|&v| v == 0.0), "R's rows past n are zero");
    assert_close("complete Q R against A", &matmul(&q, &r, m, m, n), &a, tol);
    let qt: Vec<f64> = (0..m * m).map(|ji| q[(ji % m) * m + ji / m]).collect();
    let eye: Vec<f64> = (0..m * m).map(|ij| f64::from(u8::from(ij / m == ij % m))).collect();
    assert_close("complete Q^T Q against I", &matmul(&qt, &q, m, m, m), &eye, tol);
}

#[test]
fn jacobi_eigenpairs_and_the_order_limit() {
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    for (batch, n) in [(3, 192), (50, 5)] {
        let mut a = random(41 + n as u64, batch * n * n);
        for b in 0..batch {
            for i in 0..n {
                for j in 0..i {
                    a[b * n * n + j * n + i] = a[b * n * n + i * n + j];
                }
            }
        }
        let da = s.upload(&narrow(&a)).unwrap();
        let mut dw = s.upload(&vec![POISON; batch * n]).unwrap();
        let mut dv = s.upload(&vec![POISON; batch * n * n]).unwrap();
        eigh(&s, &da, &mut dw, &mut dv, MatrixShape::square(batch, n)).unwrap();
        let (w, v) = (wide(&dw.to_vec().unwrap()), wide(&dv.to_vec().unwrap()));
        for b in 0..batch {
            let (ab, vb, wb) = (&a[b * n * n..(b + 1) * n * n], &v[b * n * n..(b + 1) * n * n], &w[b * n..(b + 1) * n]);
            assert!(wb.windows(2).all(|p| p[0] <= p[1]), "matrix {b}: eigenvalues ascending");
            // A V against V diag(w), column by column.
            let av = matmul(ab, vb, n, n, n);
            let vw: Vec<f64> = (0..n * n).map(|ij| vb[ij] * wb[ij % n]).collect();
            let norm = max_abs(ab) * n as f64;
            let err = max_abs(&av.iter().zip(&vw).map(|(x, y)| x - y).collect::<Vec<_>>());
            let bound = 16.0 * n as f64 * f64::from(f32::EPSILON) * norm;
            assert!(err <= bound, "{batch} x {n}x{n}, matrix {b}: |A V - V W| = {err:e} over {bound:e}");
        }
    }
    let n = 193;
    let da = s.upload(&vec![1.0f32; n * n]).unwrap();
    let (mut dw, mut dv) = (s.alloc::<f32>(n).unwrap(), s.alloc::<f32>(n * n).unwrap());
    match eigh(&s, &da, &mut dw, &mut dv, MatrixShape::square(1, n)) {
        Err(Error::Unsupported { reason, .. }) => assert!(reason.contains("192"), "names the limit: {reason}"),
        other => panic!("eigh of order 193 on wgpu returned {other:?}"),
    }
}

#[test]
fn a_solve_of_an_order_whose_panels_narrow() {
    // At 3200 in workgroups of 256 an LU panel's workgroup walks 13 rows
    // per invocation and column, so the panels narrow to 32 columns by the
    // loop budget (100 panels and trailing products); the substitutions
    // take 50 blocks of 64 unknowns each way.
    let Some(dev) = device() else { return };
    let s = stream(&dev);
    let n = 3200;
    let mut a = random(51, n * n);
    for i in 0..n {
        a[i * n + i] += 2.0 * (n as f64).sqrt();
    }
    let x_true = random(52, n);
    let b = matmul(&a, &x_true, n, n, 1);
    let (da, db) = (s.upload(&narrow(&a)).unwrap(), s.upload(&narrow(&b)).unwrap());
    let mut dx = s.upload(&vec![POISON; n]).unwrap();
    solve(&s, &da, &db, &mut dx, MatrixShape::square(1, n), 1).unwrap();
    let x = wide(&dx.to_vec().unwrap());
    let r: Vec<f64> = matmul(&a, &x, n, n, 1).iter().zip(&b).map(|(ax, b)| ax - b).collect();
    let bound = 16.0 * n as f64 * f64::from(f32::EPSILON) * max_abs(&a) * n as f64 * max_abs(&x);
    assert!(max_abs(&r) <= bound, "solve {n}x{n}: residual {:e} over {bound:e}", max_abs(&r));
    assert_close("x against the x that made b", &x, &x_true, 1e-2);
}
