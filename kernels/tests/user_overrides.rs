//! The escape hatch: hand-written passes replacing generated ones, and
//! user kernels turned into programs for the low-level API.

use kiln_core::{Args, DType, Error, HostArgs, HostFn, IndexWidth, Language, Result};
use kiln_kernels::expr::{Ty, var};
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::{Elementwise, Reduction, Scan};

mod common;
use common::dev;

/// `y = x + 100` by hand, where the generated body doubles.
fn plus_hundred(a: &mut HostArgs<'_>) -> Result<()> {
    let x = a.input::<i32>(0)?;
    let y = a.output::<i32>(1)?;
    for (y, x) in y.iter_mut().zip(x) {
        *y = x + 100;
    }
    Ok(())
}

/// The largest input, by hand, in place of a generated sum's whole pass
/// (input, element count, output).
fn largest(a: &mut HostArgs<'_>) -> Result<()> {
    let x = a.input::<i32>(0)?;
    let last = a.len() - 1;
    let out = a.output::<i32>(last)?;
    out[0] = x.iter().copied().max().unwrap_or(i32::MIN);
    Ok(())
}

/// A running product, by hand, in place of a generated running sum's inclusive pass.
fn running_product(a: &mut HostArgs<'_>) -> Result<()> {
    let x = a.input::<i32>(0)?;
    let last = a.len() - 1;
    let out = a.output::<i32>(last)?;
    let mut acc = 1i32;
    for (o, x) in out.iter_mut().zip(x) {
        acc = acc.wrapping_mul(*x);
        *o = acc;
    }
    Ok(())
}

fn sum() -> kiln_kernels::user::ReductionKernel {
    Reduction::new("sum", DType::I32)
        .input("x", DType::I32)
        .map(var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap()
}

#[test]
fn a_hand_written_elementwise_body_replaces_the_generated_one() {
    let k = Elementwise::new("double")
        .input("x", DType::I32)
        .output("y", DType::I32)
        .set("y", var("x") * 2)
        .build()
        .unwrap();
    let s = dev().stream();
    let x = s.upload(&[1, -5, 7]).unwrap();
    let mut y = s.upload(&[9; 3]).unwrap();
    k.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [2, -10, 14]);
    // SAFETY: plus_hundred reads x and writes y over the launch's length.
    let hand = unsafe { k.clone().with_source(Language::Host, plus_hundred as HostFn) };
    let mut y = s.upload(&[9; 3]).unwrap();
    hand.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [101, 95, 107]);
    // The original keeps its generated body.
    k.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [2, -10, 14]);
}

#[test]
fn a_hand_written_reduction_pass_replaces_only_its_pass() {
    let s = dev().stream();
    let x = s.upload(&[3, -8, 12, 5, 1, 4]).unwrap();
    assert_eq!(sum().reduce::<_, i32>(&s, Args::new().arg(&x)).unwrap(), 17);
    // SAFETY: largest reads x over the launch's length and writes the one output.
    let hand = unsafe { sum().with_source(Language::Host, "user_sum_whole", largest as HostFn) }.unwrap();
    assert_eq!(hand.reduce::<_, i32>(&s, Args::new().arg(&x)).unwrap(), 12);
    // The row pass is still generated: [[3, -8, 12], [5, 1, 4]] summed by rows.
    let mut rows = s.upload(&[0; 2]).unwrap();
    hand.reduce_axis(&s, Args::new().arg(&x), 2, 3, 1, &mut rows).unwrap();
    assert_eq!(rows.to_vec().unwrap(), [7, 10]);
}

#[test]
fn a_hand_written_scan_pass_replaces_only_its_pass() {
    let k =
        Scan::new("running", DType::I32).input("x", DType::I32).scan(var("a") + var("b")).identity(0).build().unwrap();
    // SAFETY: running_product reads x and writes the output over the launch's length.
    let hand = unsafe { k.with_source(Language::Host, "user_running_inclusive", running_product as HostFn) }.unwrap();
    let s = dev().stream();
    let x = s.upload(&[2, 3, -1, 4]).unwrap();
    let mut y = s.upload(&[0; 4]).unwrap();
    hand.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), [2, 6, -6, -24]);
    hand.scan(&s, ScanKind::Exclusive, Args::new().arg(&x), &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), [0, 2, 5, 4]);
}

fn invalid(e: Error) -> String {
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn an_entry_point_the_kernel_lacks_is_refused_with_the_ones_it_has() {
    // SAFETY: refused before any source could run.
    let e = unsafe { sum().with_source(Language::Cuda, "sum", "") }.unwrap_err();
    let m = invalid(e);
    assert!(
        m.contains("`sum`")
            && m.contains("user_sum_whole, user_sum_fold, user_sum_rows, user_sum_split, user_sum_tile, user_sum_cols"),
        "{m}"
    );
    let k = Scan::new("cs", DType::U32).input("x", DType::U32).scan(var("a") + var("b")).identity(0).build().unwrap();
    // SAFETY: as above.
    let e = unsafe { k.with_source(Language::Wgsl, "cs_inclusive", "") }.unwrap_err();
    let m = invalid(e);
    assert!(
        m.contains(
            "user_cs_sums, user_cs_level_sums, user_cs_level_tiles, user_cs_tiles_inclusive, user_cs_tiles_exclusive"
        ),
        "{m}"
    );
}

#[test]
fn user_kernels_become_programs_in_every_language() {
    let t = Ty::param("T");
    let k = Reduction::new("sq", t.clone())
        .input("x", t)
        .map(var("x") * var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()
        .unwrap();
    let cuda = k.programs(Language::Cuda, IndexWidth::U64, &[("T", DType::F64)]).unwrap();
    let names: Vec<&str> = cuda.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        ["user_sq_whole", "user_sq_fold", "user_sq_rows", "user_sq_split", "user_sq_tile", "user_sq_cols"]
    );
    for p in &cuda {
        let src = p.cuda_source().unwrap();
        assert!(src.contains(p.name()) && src.contains("double"), "{}", p.name());
    }
    let wgsl = k.programs(Language::Wgsl, IndexWidth::U32, &[("T", DType::F32)]).unwrap();
    assert!(wgsl.iter().all(|p| p.wgsl_source().is_some_and(|s| s.contains(p.name()))));
    // A placeholder left unbound, and a dtype WGSL lacks, are errors.
    let m = invalid(k.programs(Language::Cuda, IndexWidth::U64, &[]).unwrap_err());
    assert!(m.contains("`sq`") && m.contains('T'), "{m}");
    let e = k.programs(Language::Wgsl, IndexWidth::U32, &[("T", DType::I64)]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("i64"), "{e}");
}
