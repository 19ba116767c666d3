//! Linear algebra on the CPU backend against plain-Rust references in f64
//! (Gaussian elimination, the products of the factors), on seeded random
//! batches with poisoned outputs: solves with several right-hand sides,
//! inverses, determinants with their signs, Cholesky, QR in both modes of
//! tall and wide matrices, least squares, eigenpairs; singular and
//! indefinite matrices refused by name with the outputs' inputs untouched;
//! bad shapes; and the same through `Array`, with leading batch axes and
//! strided views.

use kiln_core::{Device, Error, Stream};
use kiln_cpu::Cpu;
use kiln_kernels::array::Array;
use kiln_kernels::linalg::{
    MatrixShape, QrMode, cholesky, det, eigh, eigvalsh, inv, lstsq, lu_factor, qr, slogdet, solve,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const POISON: f64 = -7777.25;

fn stream() -> Stream<Cpu> {
    Device::<Cpu>::open(0).unwrap().stream()
}

fn random(seed: u64, len: usize) -> Vec<f64> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| r.random_range(-1.0..1.0)).collect()
}

/// `a b` for row-major `a` (`m` x `k`) and `b` (`k` x `n`).
fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|ij| (0..k).map(|t| a[ij / n * k + t] * b[t * n + ij % n]).sum()).collect()
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|ji| a[(ji % m) * n + ji / m]).collect()
}

fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}: element {i} is {g}, want {w}");
    }
}

/// The determinant by Gaussian elimination with partial pivoting, in f64.
fn reference_det(a: &[f64], n: usize) -> f64 {
    let mut m = a.to_vec();
    let mut d = 1.0;
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i * n + c].abs().total_cmp(&m[j * n + c].abs())).unwrap();
        if m[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for j in 0..n {
                m.swap(c * n + j, p * n + j);
            }
            d = -d;
        }
        d *= m[c * n + c];
        for i in c + 1..n {
            let l = m[i * n + c] / m[c * n + c];
            for j in c..n {
                m[i * n + j] -= l * m[c * n + j];
            }
        }
    }
    d
}

#[test]
fn solve_inv_and_det_of_a_batch() {
    let s = stream();
    for (batch, n, nrhs) in [(1, 1, 1), (3, 5, 2), (40, 8, 1), (1, 70, 3)] {
        let a = random(n as u64, batch * n * n);
        let b = random(100 + n as u64, batch * n * nrhs);
        let shape = MatrixShape::square(batch, n);
        let (da, db) = (s.upload(&a).unwrap(), s.upload(&b).unwrap());
        let mut x = s.upload(&vec![POISON; batch * n * nrhs]).unwrap();
        solve(&s, &da, &db, &mut x, shape, nrhs).unwrap();
        let mut ai = s.upload(&vec![POISON; batch * n * n]).unwrap();
        inv(&s, &da, &mut ai, shape).unwrap();
        let mut d = s.upload(&vec![POISON; batch]).unwrap();
        det(&s, &da, &mut d, shape).unwrap();
        let (mut sg, mut lg) = (s.alloc::<f64>(batch).unwrap(), s.alloc::<f64>(batch).unwrap());
        slogdet(&s, &da, &mut sg, &mut lg, shape).unwrap();
        let (x, ai, d, sg, lg) = (
            x.to_vec().unwrap(),
            ai.to_vec().unwrap(),
            d.to_vec().unwrap(),
            sg.to_vec().unwrap(),
            lg.to_vec().unwrap(),
        );
        for m in 0..batch {
            let am = &a[m * n * n..(m + 1) * n * n];
            let what = format!("{batch} x {n}x{n}, matrix {m}");
            let ax = matmul(am, &x[m * n * nrhs..(m + 1) * n * nrhs], n, n, nrhs);
            assert_close(&format!("solve {what}"), &ax, &b[m * n * nrhs..(m + 1) * n * nrhs], 1e-9);
            let eye: Vec<f64> = (0..n * n).map(|ij| if ij / n == ij % n { 1.0 } else { 0.0 }).collect();
            assert_close(&format!("inv {what}"), &matmul(am, &ai[m * n * n..(m + 1) * n * n], n, n, n), &eye, 1e-9);
            let want = reference_det(am, n);
            assert!((d[m] - want).abs() <= 1e-10 * want.abs().max(1e-300), "det {what}: {} vs {want}", d[m]);
            assert_eq!(sg[m], want.signum(), "slogdet's sign {what}");
            assert!((lg[m] - want.abs().ln()).abs() <= 1e-10, "slogdet's log {what}");
        }
    }
}

#[test]
fn lu_factor_rebuilds_the_swapped_matrix() {
    let s = stream();
    let (batch, n) = (5, 9);
    let a = random(7, batch * n * n);
    let da = s.upload(&a).unwrap();
    let mut lu = s.upload(&vec![POISON; batch * n * n]).unwrap();
    let mut piv = s.upload(&vec![-1i32; batch * n]).unwrap();
    lu_factor(&s, &da, &mut lu, &mut piv, MatrixShape::square(batch, n)).unwrap();
    let (lu, piv) = (lu.to_vec().unwrap(), piv.to_vec().unwrap());
    for m in 0..batch {
        let f = &lu[m * n * n..(m + 1) * n * n];
        let l: Vec<f64> = (0..n * n)
            .map(|ij| match (ij / n, ij % n) {
                (i, j) if i == j => 1.0,
                (i, j) if i > j => f[ij],
                _ => 0.0,
            })
            .collect();
        let u: Vec<f64> = (0..n * n).map(|ij| if ij / n <= ij % n { f[ij] } else { 0.0 }).collect();
        let mut pa = a[m * n * n..(m + 1) * n * n].to_vec();
        for (i, &p) in piv[m * n..(m + 1) * n].iter().enumerate() {
            assert!(p as usize >= i && (p as usize) < n, "pivot {i} = {p}");
            for j in 0..n {
                pa.swap(i * n + j, p as usize * n + j);
            }
        }
        assert_close(&format!("P A = L U, matrix {m}"), &matmul(&l, &u, n, n, n), &pa, 1e-12);
    }
}

#[test]
fn singular_and_indefinite_matrices_are_refused_by_name() {
    let s = stream();
    let n = 4;
    // Matrix 1 of 3 has column 2 zero.
    let mut a = random(11, 3 * n * n);
    (0..n).for_each(|i| a[n * n + i * n + 2] = 0.0);
    let da = s.upload(&a).unwrap();
    let db = s.upload(&random(12, 3 * n)).unwrap();
    let mut x = s.upload(&vec![POISON; 3 * n]).unwrap();
    match solve(&s, &da, &db, &mut x, MatrixShape::square(3, n), 1) {
        Err(Error::LinAlg { matrix: 1, reason, .. }) => assert!(reason.contains("column 2"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(da.to_vec().unwrap(), a, "the input is untouched");
    let mut out = s.alloc::<f64>(3 * n * n).unwrap();
    assert!(matches!(inv(&s, &da, &mut out, MatrixShape::square(3, n)), Err(Error::LinAlg { matrix: 1, .. })));
    // Singular: det 0, slogdet (0, -inf), no error.
    let mut d = s.alloc::<f64>(3).unwrap();
    det(&s, &da, &mut d, MatrixShape::square(3, n)).unwrap();
    assert_eq!(d.to_vec().unwrap()[1], 0.0);
    // Not positive definite: a[1][1] = -1 fails the minor of order 2.
    let spd = [4.0, 1.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 2.0];
    let da = s.upload(&spd).unwrap();
    let mut l = s.alloc::<f64>(9).unwrap();
    match cholesky(&s, &da, &mut l, MatrixShape::square(1, 3)) {
        Err(Error::LinAlg { matrix: 0, reason, .. }) => assert!(reason.contains("order 2"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Rank deficient least squares: two equal columns.
    let a = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0];
    let (da, db) = (s.upload(&a).unwrap(), s.upload(&[1.0, 2.0, 3.0]).unwrap());
    let mut x = s.alloc::<f64>(2).unwrap();
    let e = lstsq(&s, &da, &db, &mut x, MatrixShape::new(1, 3, 2), 1).unwrap_err();
    assert!(e.to_string().contains("rank deficient"), "{e}");
}

#[test]
fn bad_shapes_are_refused_and_the_output_kept() {
    let s = stream();
    let a = s.upload(&[1.0f64; 6]).unwrap();
    let mut out = s.upload(&[POISON; 6]).unwrap();
    let e = inv(&s, &a, &mut out, MatrixShape::new(1, 2, 3)).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    assert!(matches!(
        solve(&s, &a, &a, &mut out, MatrixShape::square(1, 2), 1),
        Err(Error::LengthMismatch { expected: 4, actual: 6, .. })
    ));
    let e = solve(&s, &a, &a, &mut out, MatrixShape::square(1 << 31, 1), 1).unwrap_err();
    assert!(e.to_string().contains("2^31"), "{e}");
    assert_eq!(out.to_vec().unwrap(), [POISON; 6]);
    // Empty batches do nothing.
    let mut none = s.alloc::<f64>(0).unwrap();
    inv(&s, &s.alloc::<f64>(0).unwrap(), &mut none, MatrixShape::square(0, 5)).unwrap();
}

#[test]
fn cholesky_qr_and_eigh_rebuild_their_matrices() {
    let s = stream();
    for (batch, m, n) in [(2, 6, 6), (3, 9, 4), (2, 4, 9), (1, 1, 1)] {
        let a = random(20 + m as u64, batch * m * n);
        let da = s.upload(&a).unwrap();
        for mode in [QrMode::Reduced, QrMode::Complete] {
            let (qs, rs) = mode.shapes(MatrixShape::new(batch, m, n));
            let mut q = s.upload(&vec![POISON; qs.len()]).unwrap();
            let mut r = s.upload(&vec![POISON; rs.len()]).unwrap();
            qr(&s, &da, &mut q, &mut r, MatrixShape::new(batch, m, n), mode).unwrap();
            let (q, r) = (q.to_vec().unwrap(), r.to_vec().unwrap());
            let k = qs.cols;
            for b in 0..batch {
                let (qb, rb) = (&q[b * m * k..(b + 1) * m * k], &r[b * k * n..(b + 1) * k * n]);
                let what = format!("qr {mode:?} {m}x{n}, matrix {b}");
                assert_close(&what, &matmul(qb, rb, m, k, n), &a[b * m * n..(b + 1) * m * n], 1e-12);
                let eye: Vec<f64> = (0..k * k).map(|ij| if ij / k == ij % k { 1.0 } else { 0.0 }).collect();
                assert_close(&format!("{what}: Q^T Q"), &matmul(&transpose(qb, m, k), qb, k, m, k), &eye, 1e-12);
                assert!((0..k).all(|i| (0..n.min(i)).all(|j| rb[i * n + j] == 0.0)), "{what}: R upper");
            }
        }
        if m != n {
            continue;
        }
        // Symmetric positive definite: A A^T + n I.
        let spd: Vec<f64> = (0..batch)
            .flat_map(|b| {
                let ab = &a[b * n * n..(b + 1) * n * n];
                let mut p = matmul(ab, &transpose(ab, n, n), n, n, n);
                (0..n).for_each(|i| p[i * n + i] += n as f64);
                p
            })
            .collect();
        let dspd = s.upload(&spd).unwrap();
        let mut l = s.upload(&vec![POISON; batch * n * n]).unwrap();
        cholesky(&s, &dspd, &mut l, MatrixShape::square(batch, n)).unwrap();
        let mut w = s.upload(&vec![POISON; batch * n]).unwrap();
        let mut v = s.upload(&vec![POISON; batch * n * n]).unwrap();
        eigh(&s, &dspd, &mut w, &mut v, MatrixShape::square(batch, n)).unwrap();
        let mut w2 = s.upload(&vec![POISON; batch * n]).unwrap();
        eigvalsh(&s, &dspd, &mut w2, MatrixShape::square(batch, n)).unwrap();
        let (l, w, v, w2) = (l.to_vec().unwrap(), w.to_vec().unwrap(), v.to_vec().unwrap(), w2.to_vec().unwrap());
        for b in 0..batch {
            let (pb, lb, wb, vb) = (
                &spd[b * n * n..(b + 1) * n * n],
                &l[b * n * n..(b + 1) * n * n],
                &w[b * n..(b + 1) * n],
                &v[b * n * n..(b + 1) * n * n],
            );
            assert_close("L L^T", &matmul(lb, &transpose(lb, n, n), n, n, n), pb, 1e-12);
            assert!((0..n).all(|i| (i + 1..n).all(|j| lb[i * n + j] == 0.0)), "L lower");
            let av = matmul(pb, vb, n, n, n);
            let vw: Vec<f64> = (0..n * n).map(|ij| vb[ij] * wb[ij % n]).collect();
            assert_close("A V = V diag(w)", &av, &vw, 1e-10);
            assert!(wb.windows(2).all(|p| p[0] <= p[1]), "ascending: {wb:?}");
            assert_close("eigvalsh", &w2[b * n..(b + 1) * n], wb, 1e-12);
        }
    }
}

#[test]
fn least_squares_tall_and_minimum_norm_wide() {
    let s = stream();
    // Tall: fit y = 1 + 2 t exactly, and a noisy set against the normal equations.
    for (m, n) in [(7, 3), (3, 7)] {
        let a = random(31 + m as u64, m * n);
        let b = random(41, m * 2);
        let (da, db) = (s.upload(&a).unwrap(), s.upload(&b).unwrap());
        let mut x = s.upload(&vec![POISON; n * 2]).unwrap();
        lstsq(&s, &da, &db, &mut x, MatrixShape::new(1, m, n), 2).unwrap();
        let x = x.to_vec().unwrap();
        let at = transpose(&a, m, n);
        if m >= n {
            // A^T (A x - b) = 0.
            let r: Vec<f64> = matmul(&a, &x, m, n, 2).iter().zip(&b).map(|(p, q)| p - q).collect();
            assert_close("normal equations", &matmul(&at, &r, n, m, 2), &[0.0; 6], 1e-12);
        } else {
            // A x = b, and x = A^T y (in the row space: the minimum norm).
            assert_close("consistent", &matmul(&a, &x, m, n, 2), &b, 1e-12);
            let aat = matmul(&a, &at, m, n, m);
            let daat = s.upload(&aat).unwrap();
            let mut y = s.alloc::<f64>(m * 2).unwrap();
            solve(&s, &daat, &db, &mut y, MatrixShape::square(1, m), 2).unwrap();
            assert_close("minimum norm", &x, &matmul(&at, &y.to_vec().unwrap(), n, m, 2), 1e-10);
        }
    }
}

#[test]
fn arrays_take_leading_batch_axes_and_any_layout() {
    let s = stream();
    let (n, lead) = (5, [2usize, 3]);
    let a = random(51, 6 * n * n);
    let b = random(52, 6 * n * 2);
    let arr = Array::from_vec(&s, &[2, 3, n, n], &a).unwrap();
    let rhs = Array::from_vec(&s, &[2, 3, n, 2], &b).unwrap();
    let x = arr.solve(&rhs).unwrap();
    assert_eq!(x.shape(), &[2, 3, n, 2]);
    let x = x.to_vec().unwrap();
    for m in 0..6 {
        let ax = matmul(&a[m * n * n..(m + 1) * n * n], &x[m * n * 2..(m + 1) * n * 2], n, n, 2);
        assert_close("Array::solve", &ax, &b[m * n * 2..(m + 1) * n * 2], 1e-10);
    }
    assert_eq!(arr.det().unwrap().shape(), &lead);
    let (w, v) = arr.eigh().unwrap();
    assert_eq!((w.shape(), v.shape()), (&[2, 3, n][..], &[2, 3, n, n][..]));
    let (q, r) = Array::from_vec(&s, &[4, 2], &random(53, 8)).unwrap().qr(QrMode::Complete).unwrap();
    assert_eq!((q.shape(), r.shape()), (&[4, 4][..], &[4, 2][..]));
    // A transposed view is copied out first: inv(a^T) = inv(a)^T.
    let single = Array::from_vec(&s, &[n, n], &a[..n * n]).unwrap();
    let inv_t = single.t().inv().unwrap().to_vec().unwrap();
    let inv_a = single.inv().unwrap().to_vec().unwrap();
    assert_close("inv of a transposed view", &inv_t, &transpose(&inv_a, n, n), 1e-10);
    // A vector right-hand side with a stack of matrices is refused.
    let e = arr.solve(&Array::from_vec(&s, &[n], &b[..n]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("leading axes"), "{e}");
    assert!(Array::from_vec(&s, &[4], &[1.0f64; 4]).unwrap().inv().is_err(), "a 1-d array is not a matrix");
}
