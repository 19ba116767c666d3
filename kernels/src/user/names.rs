//! How a user kernel's name reaches generated code: as its entry points,
//! prefixed so that no name can collide with a keyword of CUDA C++ or
//! WGSL, a function or type either language predeclares, or an identifier
//! kiln's generators emit.
//!
//! The kernel's name is the only user-chosen name generated code holds:
//! arguments, locals and the fold's `a` and `b` are printed by position
//! (`a0`, `v3`), so any identifier serves for them. Entry points are
//! `user_{name}` (elementwise) and `user_{name}_{pass}` (reductions and
//! scans); nothing the generators emit, and nothing CUDA or WGSL declares,
//! starts with `user_`, which a test over every generated source holds
//! them to. A kernel named `return`, `float`, `Params` or `_` is therefore
//! as good as any other.

use kiln_core::{Error, Result};

use crate::expr::Param;

/// What every entry point of a user kernel starts with.
pub(crate) const PREFIX: &str = "user_";

/// The entry point of the elementwise kernel `kernel`.
pub(crate) fn entry(kernel: &str) -> String {
    format!("{PREFIX}{kernel}")
}

/// The entry point of pass `pass` of the reduction or scan `kernel`.
pub(crate) fn pass_entry(kernel: &str, pass: &str) -> String {
    format!("{}_{pass}", entry(kernel))
}

fn fail(kernel: &str, reason: impl Into<String>) -> Error {
    Error::invalid(format!("user kernel `{kernel}`"), reason)
}

/// `Err` unless `name` is an identifier (ASCII letters, digits and `_`,
/// not starting with a digit) and no two arguments share a name.
pub(crate) fn check_ident(name: &str, params: &[Param]) -> Result<()> {
    let ident = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !ident(name) {
        return Err(fail(name, "the name must be an identifier (letters, digits, _)"));
    }
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(fail(name, format!("declares `{}` twice", p.name)));
        }
    }
    Ok(())
}
