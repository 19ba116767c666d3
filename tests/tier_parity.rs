//! The two tiers offer the same patterns: every public function of a
//! pattern module of the typed tier (`kiln::typed::kernels::X`, read from
//! kiln-kernels' sources) has a counterpart of the same name in the
//! run-time tier's `kiln::kernels::X` (a function, or the typed one
//! re-exported when it takes no device), or is listed below as typed-only,
//! with the reason. A pattern added to one tier alone fails here.
//!
//! Most run-time functions are generated from the entries of
//! `kiln_kernels::entry_points!` (kernels/src/entries.rs), which kiln-kernels
//! checks against the typed functions as it compiles; they are read from
//! there, the rest from the run-time module's source.

use std::collections::BTreeSet;
use std::path::Path;

/// Modules of `kiln::typed::kernels` with no module of the same name in
/// `kiln::kernels`, and why.
const MODULES_TYPED_ONLY: &[(&str, &str)] = &[
    ("array", "the run-time tier's n-d array is `kiln::array`, with the same methods"),
    ("expr", "the expression language of user kernels takes no device; `kiln::kernels::user::expr` is it"),
];

/// Functions of a shared module with no run-time counterpart, and why.
const FUNCTIONS_TYPED_ONLY: &[(&str, &str, &str)] = &[];

/// Where the workspace's sources are (the `kiln` package is its root).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `text` up to its unit tests.
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// The names of `pub mod x;` lines.
fn public_modules(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')).map(str::to_string).collect()
}

/// Snake-case names a module makes public at its top level: `pub fn name`
/// items and the functions of its `pub use` lines (types and traits, in
/// CamelCase, are left out).
fn public_functions(text: &str) -> BTreeSet<String> {
    let text = without_tests(text);
    let mut names = BTreeSet::new();
    for item in text.split(';').flat_map(|s| s.split('\n')) {
        if let Some(rest) = item.strip_prefix("pub fn ") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.insert(name);
        }
    }
    let text = format!("\n{text}");
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\npub use ") {
        let tail = &rest[at + "\npub use ".len()..];
        let end = tail.find(';').unwrap_or(tail.len());
        let list = &tail[..end];
        let inner = match list.find('{') {
            Some(open) => list[open + 1..].trim_end_matches(['}', ' ', '\n']),
            None => list,
        };
        for piece in inner.split(',') {
            // `path::name` or `path::name as alias`: the public name is the last word.
            let word = piece.split_whitespace().last().unwrap_or("").rsplit("::").next().unwrap_or("");
            if word.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && word != "self" {
                names.insert(word.to_string());
            }
        }
        rest = &tail[end..];
    }
    names
}

/// The names of the entries of `module` in the source of `entry_points!`:
/// its `fn name` lines from `module)` to the end of its arm.
fn entry_functions(entries: &str, module: &str) -> BTreeSet<String> {
    let Some(start) = entries.find(&format!(", {module}) =>")) else {
        return BTreeSet::new();
    };
    let arm = &entries[start..];
    let arm = &arm[..arm.find("\n    };").unwrap_or(arm.len())];
    arm.lines()
        .filter_map(|l| l.trim_start().strip_prefix("fn "))
        .map(|rest| rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .collect()
}

/// The source of module `name` under `dir`: `name.rs` or `name/mod.rs`.
fn module_source(dir: &Path, name: &str) -> String {
    let file = dir.join(format!("{name}.rs"));
    let path = if file.exists() { file } else { dir.join(name).join("mod.rs") };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn every_typed_pattern_function_has_a_run_time_counterpart() {
    let typed_dir = root().join("kernels/src");
    let runtime_dir = root().join("src/kernels");
    let typed = public_modules(&std::fs::read_to_string(typed_dir.join("lib.rs")).unwrap());
    let runtime = public_modules(&std::fs::read_to_string(runtime_dir.join("mod.rs")).unwrap());
    let entries = std::fs::read_to_string(typed_dir.join("entries.rs")).unwrap();
    assert!(typed.len() >= 14 && runtime.len() >= 14, "typed {typed:?}, run-time {runtime:?}");
    let mut missing = Vec::new();
    let mut checked = 0;
    for module in &typed {
        if !runtime.contains(module) {
            if !MODULES_TYPED_ONLY.iter().any(|(m, _)| m == module) {
                missing.push(format!("module {module}: no kiln::kernels::{module}"));
            }
            continue;
        }
        let mut have = public_functions(&module_source(&runtime_dir, module));
        have.extend(entry_functions(&entries, module));
        // Some modules (`user`) offer types and methods only.
        let want = public_functions(&module_source(&typed_dir, module));
        checked += want.len();
        for function in want.difference(&have) {
            if !FUNCTIONS_TYPED_ONLY.iter().any(|(m, f, _)| m == module && f == function) {
                missing.push(format!("{module}::{function}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "typed-tier functions without a run-time counterpart (add one, or list it as typed-only with the reason):\n{}",
        missing.join("\n")
    );
    assert!(checked >= 40, "only {checked} typed functions read: has the layout of kernels/src changed?");
    // The lists name nothing that is gone.
    for (module, _) in MODULES_TYPED_ONLY {
        assert!(typed.contains(*module) && !runtime.contains(*module), "{module} is listed as typed-only");
    }
}

#[test]
fn the_source_reader_finds_functions_and_re_exports() {
    let text = "pub use a::{b, C, d as e};\npub use f::g;\npub fn h<T>() {}\nfn private() {}\n    pub fn method() {}\n#[cfg(test)]\nmod tests { pub fn t() {} }";
    let names: Vec<String> = public_functions(text).into_iter().collect();
    assert_eq!(names, ["b", "e", "g", "h"]);
    assert_eq!(public_modules("pub mod x;\nmod y;\npub mod z;").into_iter().collect::<Vec<_>>(), ["x", "z"]);
    let entries = "    ($($c:ident)::+, a) => {\n        $($c)::+! { a;\n            /// fn doc\n            fn f<T: N>(x: view T) -> ();\n            fn g(n: value usize) -> u64;\n        }\n    };\n    ($($c:ident)::+, b) => {\n            fn h() -> ();\n    };";
    assert_eq!(entry_functions(entries, "a").into_iter().collect::<Vec<_>>(), ["f", "g"]);
    assert_eq!(entry_functions(entries, "b").into_iter().collect::<Vec<_>>(), ["h"]);
    assert!(entry_functions(entries, "c").is_empty());
}
