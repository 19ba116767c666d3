//! User kernels named with keywords of CUDA C++ or WGSL, functions either
//! language predeclares, or identifiers kiln's generators use: each builds,
//! runs on the CPU, and its generated sources declare it under its entry
//! point `user_{name}`, which no other identifier of theirs starts with.

use std::collections::BTreeSet;

use kiln_core::{Args, DType, Error, IndexWidth, Language, Program};
use kiln_kernels::expr::var;
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::{Elementwise, Reduction, Scan};

mod common;
use common::dev;

/// The names the generated code once took as they were: keywords, types and
/// functions of WGSL and CUDA C++, and the generators' own identifiers.
const NAMES: [&str; 22] = [
    "return",
    "fn",
    "let",
    "var",
    "struct",
    "loop",
    "f32",
    "select",
    "bitcast",
    "override",
    "const",
    "_",
    "__x",
    "a0",
    "Params",
    "params",
    "kx_zero",
    "block_x",
    "float",
    "__global__",
    "asm",
    "v0",
];

/// The identifiers of `source` (words of letters, digits and `_` that do
/// not start with a digit), hex literals aside.
fn identifiers(source: &str) -> BTreeSet<&str> {
    source
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
        .collect()
}

/// `Ok` when `program`'s source in `language` declares its entry point and
/// every other identifier of it that starts with `user_` is one of
/// `entries` (a CUDA scan's source holds both kinds).
fn declares_only_entries(program: &Program, language: Language, entries: &[&str]) -> Result<(), String> {
    let source = program.text(language).ok_or_else(|| format!("{} has no {language} source", program.name()))?;
    let entry = program.name();
    let head = match language {
        Language::Cuda => format!(" {entry}("),
        _ => format!("fn {entry}("),
    };
    if !entry.starts_with("user_") || !source.contains(&head) {
        return Err(format!("{entry}: the {language} source does not declare `{head}`:\n{source}"));
    }
    let others: Vec<&str> =
        identifiers(source).into_iter().filter(|w| w.starts_with("user_") && !entries.contains(w)).collect();
    if !others.is_empty() {
        return Err(format!("{entry}: the {language} source also has {others:?}"));
    }
    Ok(())
}

#[test]
fn keywords_and_generator_names_build_and_run_on_the_cpu() {
    let s = dev().stream();
    let x = s.upload(&[1.0f32, -2.0, 3.5]).unwrap();
    for name in NAMES {
        // The arguments take names of the list too: generated code names them by position.
        let k = Elementwise::new(name)
            .input("fn", DType::F32)
            .scalar("Params", DType::F32)
            .output("return", DType::F32)
            .local("kx_zero", var("fn") * var("Params"))
            .set("return", var("kx_zero") + 1.0)
            .build()
            .unwrap_or_else(|e| panic!("`{name}`: {e}"));
        let mut y = s.upload(&[7.0f32; 3]).unwrap();
        k.launch(&s, Args::new().arg(&x).arg(2.0f32).arg(&mut y)).unwrap();
        assert_eq!(y.to_vec().unwrap(), [3.0, -3.0, 8.0], "`{name}`");
        assert_eq!(k.name(), name);
    }
}

#[test]
fn generated_sources_declare_the_kernel_only_under_its_entry_point() {
    for name in NAMES {
        let k = Elementwise::new(name)
            .input("x", DType::U32)
            .raw("r", DType::U32)
            .output("y", DType::U32)
            .set("y", var("x") + var("r").at(var("x")))
            .build()
            .unwrap();
        let reduce = Reduction::new(name, DType::F32)
            .input("x", DType::F32)
            .scalar("s", DType::F32)
            .map(var("x") * var("s"))
            .reduce(var("a").max(var("b")))
            .identity(f32::NEG_INFINITY)
            .post(DType::F32, var("a") + var("s"))
            .build()
            .unwrap();
        let scan =
            Scan::new(name, DType::U32).input("x", DType::U32).scan(var("a") + var("b")).identity(0).build().unwrap();
        for (language, width) in [(Language::Cuda, IndexWidth::U64), (Language::Wgsl, IndexWidth::U32)] {
            let mut programs = vec![k.program(language, width, &[]).unwrap()];
            programs.extend(reduce.programs(language, width, &[]).unwrap());
            programs.extend(scan.programs(language, width, &[]).unwrap());
            let entries: Vec<&str> = programs.iter().map(|p| p.name()).collect();
            for p in &programs {
                declares_only_entries(p, language, &entries).unwrap_or_else(|e| panic!("{e}"));
            }
        }
        assert_eq!(k.program(Language::Host, IndexWidth::U64, &[]).unwrap().name(), format!("user_{name}"));
    }
}

#[test]
fn reductions_and_scans_with_such_names_run_on_the_cpu() {
    let s = dev().stream();
    let x = s.upload(&[3u32, 1, 4, 1, 5]).unwrap();
    for name in ["fn", "Params", "_", "kx_map", "float"] {
        let sum = Reduction::new(name, DType::U32)
            .input("x", DType::U32)
            .map(var("x"))
            .reduce(var("a") + var("b"))
            .identity(0);
        assert_eq!(sum.build().unwrap().reduce::<_, u32>(&s, Args::new().arg(&x)).unwrap(), 14, "`{name}`");
        let scan = Scan::new(name, DType::U32).input("x", DType::U32).scan(var("a") + var("b")).identity(0);
        let mut y = s.upload(&[0u32; 5]).unwrap();
        scan.build().unwrap().scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y).unwrap();
        assert_eq!(y.to_vec().unwrap(), [3, 4, 8, 9, 14], "`{name}`");
    }
}

#[test]
fn names_that_are_not_identifiers_are_refused_at_build() {
    for name in ["", "1x", "a-b", "a b", "é", "x.y"] {
        let e = Elementwise::new(name).input("x", DType::U32).output("y", DType::U32).set("y", var("x")).build();
        match e {
            Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("identifier"), "{reason}"),
            other => panic!("`{name}` gave {other:?}"),
        }
        let r = Reduction::new(name, DType::U32).input("x", DType::U32).map(var("x")).reduce(var("a")).identity(0);
        assert!(r.build().is_err(), "`{name}`");
    }
}
