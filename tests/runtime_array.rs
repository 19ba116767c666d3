//! `kiln::Array` on every device that opens here (the CPU always, lavapipe
//! or a GPU where present): views, fused expressions, reductions, in-place
//! updates, patterns and random values against ndarray or plain-Rust
//! references on seeded random inputs; arrays of two backends mixed are an
//! error naming both, and the array mixed into keeps its values.

use kiln::array::{Array, ArrayExpr, Fold, promote, where_};
use kiln::kernels::random::Philox;
use kiln::typed::kernels::sort::SortOrder;
use kiln::{Cpu, Device, Error};
use ndarray::{Array2, ArrayD, Axis, s};
use rand::Rng;

mod common;
use common::{devices, on_each_device};

/// Device 0 of every backend compiled in that opens here.
fn close(got: &ArrayD<f32>, want: &ArrayD<f32>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{what}: element {i} is {g}, host {w}");
    }
}

#[test]
fn views_expressions_and_reductions_match_ndarray() {
    on_each_device(11, |dev, s, rng| {
        for (rows, cols) in [(1usize, 1usize), (3, 5), (17, 33), (64, 129)] {
            let a = Array2::from_shape_fn((rows, cols), |_| rng.random_range(-4.0f32..4.0));
            let b = Array2::from_shape_fn((1, cols), |_| rng.random_range(0.5f32..2.0));
            let (da, db) = (Array::from_ndarray(s, &a).unwrap(), Array::from_ndarray(s, &b).unwrap());
            assert_eq!(da.shape(), [rows, cols]);
            assert_eq!(da.device().to_string(), dev.to_string());

            // A reversed, transposed view read back as ndarray reads it.
            let v = da.slice(s![..;-1, ..]).unwrap().t();
            assert_eq!(v.to_ndarray().unwrap(), a.slice(s![..;-1, ..]).t().to_owned().into_dyn(), "view on {dev}");

            // One fused expression with broadcasting and a where.
            let e = where_(da.gt(0.0), (&da * 2.0 + &db).sqrt(), -&da / &db);
            let want = ndarray::Zip::from(&a)
                .and_broadcast(&b)
                .map_collect(|&x, &y| if x > 0.0 { (x * 2.0 + y).sqrt() } else { -x / y })
                .into_dyn();
            close(&e.eval().unwrap().to_ndarray().unwrap(), &want, &format!("fused {rows}x{cols} on {dev}"));

            // Reductions fused with their producer, whole and along axes.
            let sq = (&da * &da).sum().unwrap();
            let host: f64 = a.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
            assert!((f64::from(sq) - host).abs() <= 1e-4 * (1.0 + host), "sum of squares on {dev}: {sq} vs {host}");
            let col_max = da.fold_axes(Fold::Max, &[0]).unwrap().to_vec().unwrap();
            let want: Vec<f32> = a.axis_iter(Axis(1)).map(|c| c.iter().copied().fold(f32::MIN, f32::max)).collect();
            assert_eq!(col_max, want, "column max on {dev}");
            let arg = da.argmax_axis(1).unwrap().to_vec().unwrap();
            for (r, row) in a.axis_iter(Axis(0)).enumerate() {
                let m = row.iter().copied().fold(f32::MIN, f32::max);
                assert_eq!(arg[r] as usize, row.iter().position(|&x| x == m).unwrap(), "argmax row {r} on {dev}");
            }
            let var = da.var_axes(&[0]).unwrap().to_ndarray().unwrap();
            close(&var, &a.var_axis(Axis(0), 0.0).into_dyn(), &format!("var on {dev}"));
        }
    });
}

#[test]
fn in_place_updates_are_copy_on_write_and_patterns_route() {
    for dev in devices() {
        let on = dev.to_string();
        let s = dev.stream();
        let mut a = Array::from_vec(&s, &[2, 3], &[1i32, -2, 3, -4, 5, -6]).unwrap();
        let before = a.clone();
        a *= 3;
        a += &Array::from_vec(&s, &[3], &[100, 200, 300]).unwrap();
        a.check().unwrap();
        assert_eq!(a.to_vec().unwrap(), [103, 194, 309, 88, 215, 282], "in place on {on}");
        assert_eq!(before.to_vec().unwrap(), [1, -2, 3, -4, 5, -6], "the clone on {on}");
        a.assign(&a % 7).unwrap();
        assert_eq!(a.to_vec().unwrap(), [103 % 7, 194 % 7, 309 % 7, 88 % 7, 215 % 7, 282 % 7], "assign on {on}");

        let x = Array::<f64>::arange(&s, 0.0, 5.0, 1.0).unwrap();
        assert_eq!(x.dot(&x).unwrap(), 30.0, "dot on {on}");
        assert_eq!(x.cumsum().unwrap().to_vec().unwrap(), [0.0, 1.0, 3.0, 6.0, 10.0], "cumsum on {on}");
        let m = Array::from_vec(&s, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(m.matmul(&m.t()).unwrap().to_vec().unwrap(), [5.0, 11.0, 11.0, 25.0], "matmul on {on}");
        let u = Array::from_vec(&s, &[5], &[3u32, 1, 4, 1, 5]).unwrap();
        assert_eq!(u.sort(SortOrder::Descending).unwrap().to_vec().unwrap(), [5, 4, 3, 1, 1], "sort on {on}");
        // 40 lanes of 3 (sorted together) and 3 lanes of 40 (one by one).
        let v: Vec<i32> = (0..120u32).map(|i| (i.wrapping_mul(2654435761) >> 7) as i32 % 50 - 25).collect();
        let m = Array::from_vec(&s, &[40, 3], &v).unwrap();
        let rows = m.sort_axis(1, SortOrder::Ascending).unwrap().to_vec().unwrap();
        let cols = m.t().sort_axis(1, SortOrder::Descending).unwrap().t().to_vec().unwrap();
        for r in 0..40 {
            let mut want = v[3 * r..3 * r + 3].to_vec();
            want.sort();
            assert_eq!(rows[3 * r..3 * r + 3], want, "row {r} sorted on {on}");
        }
        for c in 0..3 {
            let mut want: Vec<i32> = (0..40).map(|r| v[3 * r + c]).collect();
            want.sort_by(|a, b| b.cmp(a));
            assert_eq!((0..40).map(|r| cols[3 * r + c]).collect::<Vec<_>>(), want, "column {c} sorted on {on}");
        }
        let bits = ((&u << 8u32) | &u ^ 0xffu32).eval().unwrap().to_vec().unwrap();
        let want: Vec<u32> = [3u32, 1, 4, 1, 5].iter().map(|&v| (v << 8) | (v ^ 0xff)).collect();
        assert_eq!(bits, want, "bit operations on {on}");
        assert_eq!((!&u).eval().unwrap().to_vec().unwrap()[0], !3u32, "not on {on}");
        assert_eq!(Array::<f32>::eye(&s, 2).unwrap().to_vec().unwrap(), [1.0, 0.0, 0.0, 1.0], "eye on {on}");
        assert_eq!(Array::<i32>::zeros(&s, &[0, 3]).unwrap().sum().unwrap(), 0, "empty sum on {on}");
    }
}

#[test]
fn a_failed_in_place_operator_keeps_the_old_values_and_its_error_to_itself() {
    for dev in devices() {
        let on = dev.to_string();
        let s = dev.stream();
        let old = [1.0f32, 2.0, 3.0, 4.0];
        let mut c = Array::from_vec(&s, &[2, 2], &old).unwrap();
        let b = Array::from_vec(&s, &[3], &[10.0f32, 20.0, 30.0]).unwrap();
        let before = c.clone();
        c += &b;
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("[2, 2]") && e.contains("[3]"), "the error names both shapes on {on}: {e}");
        assert_eq!(c.to_vec().unwrap(), old, "c reads its old values on {on}");
        assert_eq!(c.t().to_vec().unwrap(), [1.0, 3.0, 2.0, 4.0], "so does a view of c on {on}");
        c *= 2.0; // skipped while the error is held
        assert_eq!(c.to_vec().unwrap(), old, "no update past a failure on {on}");
        let after = c.clone();
        for (name, other) in [("made before", &before), ("made after", &after)] {
            assert!(other.check().is_ok(), "the clone {name} holds no error on {on}");
            assert_eq!(other.to_vec().unwrap(), old, "the clone {name} on {on}");
        }
        assert_eq!(c.take_error().map(|e| e.to_string()), Some(e), "taken once on {on}");
        assert!(c.check().is_ok(), "cleared on {on}");
        c *= 2.0;
        assert_eq!(c.to_vec().unwrap(), [2.0, 4.0, 6.0, 8.0], "updates again on {on}");
    }
}

#[test]
fn random_values_are_the_same_bits_on_every_backend() {
    let cpu = Device::open(kiln::BackendKind::Cpu, 0).unwrap().stream();
    let want = Array::<f32>::uniform(&cpu, &mut Philox::new(5), &[1000]).unwrap().to_vec().unwrap();
    let normal = Array::<f64>::normal(&cpu, &mut Philox::new(5), &[999]).unwrap().to_vec().unwrap();
    for dev in devices() {
        let got = Array::<f32>::uniform(&dev.stream(), &mut Philox::new(5), &[1000]).unwrap().to_vec().unwrap();
        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "uniform on {dev}");
        let got = Array::<f64>::normal(&dev.stream(), &mut Philox::new(5), &[999]).unwrap().to_vec().unwrap();
        assert!(got.iter().zip(&normal).all(|(g, w)| g.to_bits() == w.to_bits()), "normal on {dev}");
    }
}

#[test]
fn scalars_alone_and_mixed_backends_are_errors_that_lose_nothing() {
    let cpu = Device::open(kiln::BackendKind::Cpu, 0).unwrap().stream();
    let e = kiln::array::ArrayExpr::scalar(1.0f32) + 2.0;
    assert!(e.eval().unwrap_err().to_string().contains("scalars only"));
    // Scalars alone take the backend of the array they meet.
    let a = Array::from_vec(&cpu, &[2], &[1.0f32, 2.0]).unwrap();
    assert_eq!(where_(a.lt(1.5), e.clone(), e * 2.0).eval().unwrap().to_vec().unwrap(), [3.0, 6.0]);
    assert!(a.typed::<Cpu>().is_some());
    let wide = Array::from_vec(&cpu, &[3], &[0.0f32; 3]).unwrap();
    let err = (&a + &wide).eval().unwrap_err().to_string();
    assert!(err.contains("[2]") && err.contains("[3]"), "{err}");

    for dev in devices().into_iter().filter(|d| d.kind() != kiln::BackendKind::Cpu) {
        let other = Array::from_vec(&dev.stream(), &[2], &[10.0f32, 20.0]).unwrap();
        let err = (&a + &other).eval().unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("cpu") && text.contains(&dev.kind().to_string()), "{text}");
        let mut b = a.clone();
        assert!(b.assign(&other * 2.0).is_err());
        assert_eq!(b.to_vec().unwrap(), [1.0, 2.0]);
        b += &other;
        assert!(matches!(b.check(), Err(Error::DeviceMismatch { .. })));
        assert!(matches!(a.dot(&other), Err(Error::DeviceMismatch { .. })));
        let (row, col) = (a.reshape(&[1, 2]).unwrap(), other.reshape(&[2, 1]).unwrap());
        assert!(matches!(row.matmul(&col), Err(Error::DeviceMismatch { .. })));
        assert_eq!(a.to_vec().unwrap(), [1.0, 2.0]);
    }
}

#[test]
fn mixed_types_promote_as_numpy_in_one_kernel() {
    on_each_device(5, |dev, s, rng| {
        let hi: Vec<i32> = (0..300).map(|_| rng.random_range(-1000..1000)).collect();
        let hf: Vec<f32> = (0..300).map(|_| rng.random_range(-4.0f32..4.0)).collect();
        let i = Array::from_vec(s, &[3, 100], &hi).unwrap();
        let f = Array::from_vec(s, &[3, 100], &hf).unwrap();
        let (x, y) = promote(&i, &f);
        let got = ((x.clone() + y.clone()) * x).eval().unwrap().to_vec().unwrap();
        let want: Vec<f64> = hi.iter().zip(&hf).map(|(&a, &b)| (f64::from(a) + f64::from(b)) * f64::from(a)).collect();
        assert_eq!(got, want, "i32 with f32 to f64 on {dev}");
        // An f32 choice made by an i32 mask, and a cast inside the expression.
        let pick = i.gt(0).select(f.expr(), i.cast::<f32>() * 0.5).eval().unwrap().to_vec().unwrap();
        let want: Vec<f32> = hi.iter().zip(&hf).map(|(&a, &b)| if a > 0 { b } else { a as f32 * 0.5 }).collect();
        assert_eq!(pick, want, "mixed where on {dev}");
        assert_eq!(
            (&f * 10.0).cast::<i32>().eval().unwrap().to_vec().unwrap()[..3],
            [(hf[0] * 10.0) as i32, (hf[1] * 10.0) as i32, (hf[2] * 10.0) as i32]
        );
        // A scalar with a cast joins arrays of the CPU; elsewhere it is an error saying so.
        let half = ArrayExpr::scalar(1i32).cast::<f32>() * 0.5;
        let r = (f.expr() * half).eval();
        if dev.kind() == kiln::BackendKind::Cpu {
            assert_eq!(r.unwrap().to_vec().unwrap()[0], hf[0] * 0.5);
        } else {
            assert!(r.unwrap_err().to_string().contains("on the host first"), "on {dev}");
        }
        // Operands of one type promote to themselves: a scalar stays a
        // scalar that joins arrays of any backend, an array reads as it is.
        let (x, seven) = promote(&i, 7i32);
        let got = (x * seven).eval().unwrap().to_vec().unwrap();
        assert_eq!(got, hi.iter().map(|a| a.wrapping_mul(7)).collect::<Vec<i32>>(), "i32 with i32 on {dev}");
        let got = (f.cast::<f32>() - 7.0).eval().unwrap().to_vec().unwrap();
        assert_eq!(got, hf.iter().map(|b| b - 7.0).collect::<Vec<f32>>(), "f32 cast to f32 on {dev}");
    });
}
