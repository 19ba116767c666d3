//! Tests of the suite itself: the runner catches a deliberately wrong case
//! and reports its index and seed; divergences behave as data; the comparer
//! and the poison do their job.

use kiln_conformance::{
    Cases, Condition, Divergence, Expect, Expected, Failure, Options, Record, SIZES, Status, Summary, Tolerance,
    case_seed, close, compare, matrix, notes, poison_for, run, run_cases,
};
use kiln_core::{BackendKind, DType, Device};
use kiln_cpu::Cpu;

fn cpu() -> Device<Cpu> {
    Device::<Cpu>::open(0).unwrap()
}

/// A case whose "kernel" is right everywhere but at one index that depends
/// on the seed, like a real off-by-one would depend on the size.
fn wrong_at_one_index(cases: &mut Cases<Cpu>) {
    cases.one("selftest", "selftest/wrong", DType::U32, |dev, ctx| {
        let data: Vec<u32> = ctx.random();
        let mut sent = data.clone();
        if !sent.is_empty() {
            let bad = (ctx.seed % sent.len() as u64) as usize;
            sent[bad] = sent[bad].wrapping_add(1);
        }
        let got = dev.upload(&sent)?.to_vec()?;
        ctx.compare("output", &Expected::new(data, Tolerance::Exact), &got)
    });
}

#[test]
fn a_deliberately_wrong_case_is_caught_with_its_index_and_seed() {
    let mut cases = Cases::new();
    wrong_at_one_index(&mut cases);
    let options = Options { sizes: vec![0, 1, 33, 1025], seed: 99, ..Options::default() };
    let records = run_cases(&cpu(), &cases.into_vec(), &options, &mut |_| {});
    assert_eq!(records.len(), 4);
    assert_eq!(records[0].status, Status::Pass, "nothing to get wrong at n = 0");
    for r in &records[1..] {
        let seed = case_seed(99, "selftest/wrong", DType::U32, r.size);
        let bad = (seed % r.size as u64) as usize;
        match &r.status {
            Status::Fail { seed: s, index, expected, got, message } => {
                assert_eq!(*s, seed);
                assert_eq!(*index, Some(bad));
                let (e, g): (u32, u32) =
                    (expected.as_ref().unwrap().parse().unwrap(), got.as_ref().unwrap().parse().unwrap());
                assert_eq!(g, e.wrapping_add(1));
                assert!(
                    message.contains(&format!("1 of {} elements wrong; first at index {bad}", r.size)),
                    "{message}"
                );
                assert!(message.contains(&format!("-> [{bad}]")), "neighbours are shown: {message}");
            }
            other => panic!("n = {}: the wrong case was not caught: {other:?}", r.size),
        }
    }
    let summary = Summary::of(&records);
    assert_eq!((summary.pass, summary.fail), (1, 3));
    assert!(!summary.ok());
    let m = matrix(&records);
    assert!(m.contains("FAIL u32 n=1 @0"), "{m}");
    let n = notes(&records);
    assert!(n.contains(&format!("(seed {:#x})", case_seed(99, "selftest/wrong", DType::U32, 33))), "{n}");
}

#[test]
fn an_untouched_output_is_caught_by_the_poison() {
    let mut cases = Cases::new();
    cases.one("selftest", "selftest/lazy", DType::F32, |dev, ctx| {
        let x: Vec<f32> = ctx.random();
        let want: Vec<f32> = x.iter().map(|v| v * v).collect();
        // A "kernel" that forgets the last element.
        let mut y = kiln_conformance::poisoned(dev, &want)?;
        if let Some(last) = want.len().checked_sub(1) {
            y.slice_mut(..last)?.copy_from_host(&want[..last])?;
        }
        ctx.compare("y", &Expected::new(want, Tolerance::Ulps(1)), &y.to_vec()?)
    });
    let options = Options { sizes: SIZES.to_vec(), ..Options::default() };
    let records = run_cases(&cpu(), &cases.into_vec(), &options, &mut |_| {});
    for r in records.iter().filter(|r| r.size > 0) {
        assert!(
            matches!(&r.status, Status::Fail { index: Some(i), .. } if *i == r.size - 1),
            "n = {}: {:?}",
            r.size,
            r.status
        );
    }
}

#[test]
fn poison_is_never_accepted_in_place_of_the_expected_value() {
    let mut rng = <kiln_conformance::CaseRng as rand::SeedableRng>::seed_from_u64(5);
    let floats: Vec<f64> = kiln_conformance::random_vec(&mut rng, 10_000);
    for t in [Tolerance::Bits, Tolerance::Exact, Tolerance::Ulps(3)] {
        for (&e, p) in floats.iter().zip(poison_for(&floats)) {
            assert!(!close(t, e, p), "{p:?} accepted for {e:?} with {t:?}");
        }
    }
    let ints: Vec<i32> = kiln_conformance::random_vec(&mut rng, 10_000);
    assert!(ints.iter().zip(poison_for(&ints)).all(|(&e, p)| !close(Tolerance::Exact, e, p)));
    let bytes: Vec<u8> = (0..=255).collect();
    assert!(bytes.iter().zip(poison_for(&bytes)).all(|(&e, p)| e != p));
}

#[test]
fn the_comparer_is_nan_aware_exact_for_integers_and_relative_for_floats() {
    let ulps = Tolerance::Ulps(2);
    assert!(close(ulps, 1.0f32, 1.0 + 2.0 * f32::EPSILON));
    assert!(!close(ulps, 1.0f32, 1.0 + 3.0 * f32::EPSILON));
    assert!(close(ulps, 1e30f32, 1e30 * (1.0 + f32::EPSILON)));
    assert!(close(ulps, f32::from_bits(1), f32::from_bits(3)), "subnormals: 2 units");
    assert!(!close(ulps, f32::from_bits(1), f32::from_bits(4)));
    assert!(close(ulps, f64::NAN, f64::NAN) && !close(ulps, f64::NAN, 0.0) && !close(ulps, 0.0, f64::NAN));
    assert!(close(ulps, f64::NEG_INFINITY, f64::NEG_INFINITY) && !close(ulps, f64::INFINITY, f64::NEG_INFINITY));
    assert!(!close(Tolerance::Bits, f32::NAN, f32::from_bits(f32::NAN.to_bits() | 1)), "payloads count in copies");
    assert!(close(Tolerance::Exact, f32::NAN, f32::from_bits(f32::NAN.to_bits() | 1)));
    assert!(!close(Tolerance::Ulps(1000), 1_000_000i32, 1_000_001));

    let want = Expected::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], Tolerance::Ulps(1));
    let m = compare("y", &want, &[0.0, 1.0, 2.0, 3.0, 4.5, 5.0, 6.5, 7.0]).unwrap_err();
    assert_eq!((m.index, m.bad, m.len), (4, 2, 8));
    assert_eq!((m.expected.as_str(), m.got.as_str()), ("4.0", "4.5"));
    assert_eq!(m.neighbours.lines().count(), 7, "three neighbours each side:\n{}", m.neighbours);
    let m = compare("y", &want, &[0.0; 3]).unwrap_err();
    assert_eq!((m.expected.as_str(), m.got.as_str()), ("8 elements", "3 elements"));
    let ctx = kiln_conformance::Ctx::new(2, 0, false);
    let report = match ctx.compare_inputs(
        "y",
        &Expected::new(vec![1.0f32, 4.0], Tolerance::Exact),
        &[1.0, 5.0],
        &[("x", &[1.0, 2.0])],
    ) {
        Err(Failure::Mismatch(m)) => m.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(report.contains("inputs: x[1] = 2.0"), "{report}");
    // An alternative (a fused or flushed result) is accepted as well.
    assert!(compare("y", &Expected::new(vec![1.0f32], Tolerance::Exact).or(vec![2.0]), &[2.0]).is_ok());
}

fn divergence(expect: Expect, when: Condition) -> Divergence {
    Divergence {
        backend: Some(BackendKind::Cpu),
        patterns: &["map/abs"],
        dtype: Some(DType::I32),
        when,
        expect,
        reason: "test divergence",
    }
}

#[test]
fn divergences_are_data_checked_against_the_device() {
    let dev = cpu();
    let run_with = |d: Divergence| {
        let options =
            Options { pattern: Some("map/abs".into()), sizes: vec![33], divergences: vec![d], ..Options::default() };
        run(&dev, &options, &mut |_| {})
    };
    let status_of =
        |records: &[Record], dtype: &str| records.iter().find(|r| r.dtype == dtype).map(|r| r.status.clone()).unwrap();
    // A known failure that passes is reported, and fails the run.
    let records = run_with(divergence(Expect::Failure, Condition::Always));
    assert_eq!(status_of(&records, "i32"), Status::UnexpectedPass { reason: "test divergence".into() });
    assert_eq!(status_of(&records, "f32"), Status::Pass, "other dtypes are not covered");
    assert!(!Summary::of(&records).ok());
    assert!(notes(&records).contains("remove the divergence"));
    // Unsupported: not run, reported with the reason.
    let records = run_with(divergence(Expect::Unsupported, Condition::Always));
    assert_eq!(status_of(&records, "i32"), Status::Unsupported { reason: "test divergence".into() });
    assert!(Summary::of(&records).ok());
    // Conditions are checked against the device's features: the CPU has f64.
    let records = run_with(divergence(Expect::Unsupported, Condition::Lacks(kiln_conformance::Feature::F64)));
    assert_eq!(status_of(&records, "i32"), Status::Pass);
}

#[test]
fn a_known_failure_that_still_fails_is_an_expected_failure() {
    let mut cases = Cases::new();
    wrong_at_one_index(&mut cases);
    let d = Divergence {
        backend: None,
        patterns: &["selftest"],
        dtype: None,
        when: Condition::Always,
        expect: Expect::Failure,
        reason: "known off-by-one",
    };
    let options = Options { sizes: vec![1, 2], divergences: vec![d], ..Options::default() };
    let records = run_cases(&cpu(), &cases.into_vec(), &options, &mut |_| {});
    assert!(records.iter().all(|r| r.status == Status::ExpectedFail { reason: "known off-by-one".into() }));
    assert!(Summary::of(&records).ok());
    assert!(matrix(&records).contains("xfail u32"));
}

#[test]
fn errors_panics_and_broken_contracts_are_failures_and_unsupported_is_not() {
    let mut cases = Cases::<Cpu>::new();
    cases.one("selftest", "selftest/error", DType::F32, |_, _| {
        Err(kiln_core::Error::invalid("selftest", "a backend error").into())
    });
    cases.one("selftest", "selftest/panic", DType::F32, |_, _| panic!("a backend bug"));
    cases.one("selftest", "selftest/contract", DType::F32, |_, _| Err(Failure::Contract("wrote nothing".into())));
    cases.one("selftest", "selftest/unsupported", DType::F32, |_, _| {
        Err(kiln_core::Error::unsupported(BackendKind::Cpu, "selftest", "no such thing").into())
    });
    let options = Options { sizes: vec![1], ..Options::default() };
    let records = run_cases(&cpu(), &cases.into_vec(), &options, &mut |_| {});
    let message = |i: usize| match &records[i].status {
        Status::Fail { message, index: None, .. } => message.clone(),
        other => panic!("{other:?}"),
    };
    assert!(message(0).contains("a backend error"));
    assert!(message(1).contains("panicked: a backend bug"));
    assert!(message(2).contains("contract broken: wrote nothing"));
    assert!(matches!(&records[3].status, Status::Unsupported { reason } if reason.contains("no such thing")));
}

#[test]
fn the_cpu_runs_every_pattern_and_progress_counts_every_run() {
    let dev = cpu();
    let options = Options { sizes: vec![0, 1, 257], ..Options::default() };
    let mut seen = Vec::new();
    let records = run(&dev, &options, &mut |p| seen.push((p.done, p.total)));
    assert_eq!(seen.len(), records.len());
    assert_eq!(seen.last().copied(), Some((records.len(), records.len())));
    let summary = Summary::of(&records);
    assert!(summary.ok(), "{}", notes(&records));
    // Sqrt on integers is refused, in both forms, on both integer types, at every size.
    let refused: Vec<&Record> = records
        .iter()
        .filter(|r| r.pattern.starts_with("map") && matches!(r.status, Status::Unsupported { .. }))
        .collect();
    assert_eq!(refused.len(), 2 * 2 * 3, "{}", notes(&records));
    assert!(refused.iter().all(|r| r.pattern.ends_with("/sqrt") && r.dtype != "f32" && r.dtype != "f64"));
    let json = serde_json::to_string(&records).unwrap();
    assert_eq!(serde_json::from_str::<Vec<Record>>(&json).unwrap(), records);
}

#[test]
fn the_filter_selects_groups_and_patterns() {
    let o = |f: &str| Options { pattern: Some(f.into()), ..Options::default() };
    assert!(o("map").selects("map", "map_in_place/abs"));
    assert!(o("map").selects("map", "map/abs"));
    assert!(o("map/abs").selects("map", "map/abs"));
    assert!(!o("map/abs").selects("map", "map/absx"));
    assert!(!o("map/a").selects("map", "map/abs"));
    assert!(!o("fill").selects("memory", "memory/fill_view"));
    assert!(Options::default().selects("anything", "at/all"));
}
