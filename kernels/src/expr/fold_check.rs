//! Checking a declared fold (`FoldDef`) part by part into its typed form
//! (`Fold`), the combining expression's identity included (`neutral.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{DType, Error, Result};

use super::check::{Op, Param, Role, Stmt, Typed, resolve};
use super::fold::{A, B, Fold, FoldDef};
use super::halves::check;
use super::ty::Ty;

/// The synthetic output each part stores its value in.
const OUT: &str = "kx_out";

fn fail(kernel: &str, reason: impl Into<String>) -> Error {
    Error::invalid(format!("user kernel `{kernel}`"), reason)
}

fn param(name: &str, role: Role, ty: Ty) -> Param {
    Param { name: Arc::from(name), role, ty }
}

/// `Err` unless `body` uses only what `allowed` accepts, naming `part`.
fn only(kernel: &str, body: &Typed, part: &str, allowed: impl Fn(&Op) -> bool) -> Result<()> {
    match body.nodes.iter().find(|n| !allowed(&n.op)) {
        None => Ok(()),
        Some(n) => Err(fail(kernel, format!("the {part} may not use {}", describe(&n.op)))),
    }
}

fn describe(op: &Op) -> &'static str {
    match op {
        Op::Load(_) | Op::At(_) | Op::LenOf(_) => "the kernel's buffers",
        Op::Index => "index()",
        Op::Len => "len()",
        Op::Scalar(_) => "arguments",
        _ => "this operation",
    }
}

/// Check every part of `def` with placeholders bound by `bind`.
pub(crate) fn check_fold(def: &FoldDef, bind: &HashMap<Arc<str>, DType>) -> Result<Fold> {
    let k = def.name.as_str();
    let acc = resolve(k, &def.acc, bind, "the accumulator")?;
    if super::halves::is_half(acc) {
        return Err(fail(
            k,
            format!(
                "accumulates in {acc}; accumulate 16-bit floats in f32 and round in the post-map (`.post({acc}, var(\"a\").cast({acc}))`)"
            ),
        ));
    }
    let acc_ty = Ty::Is(acc);
    let roles: Vec<Role> = def.params.iter().map(|p| p.role).collect();

    let mut map_params = def.params.clone();
    map_params.push(param(OUT, Role::Output, acc_ty.clone()));
    let mut stmts = def.locals.clone();
    stmts.push(Stmt::Set(Arc::from(OUT), def.map.clone()));
    let map = check(k, &map_params, &stmts, bind).map_err(|e| context(e, "map"))?;

    let pair = [
        param(A, Role::Scalar, acc_ty.clone()),
        param(B, Role::Scalar, acc_ty.clone()),
        param(OUT, Role::Output, acc_ty.clone()),
    ];
    let combine = check(k, &pair, &[Stmt::Set(Arc::from(OUT), def.combine.clone())], bind)
        .map_err(|e| context(e, "combining expression"))?;
    only(k, &combine, "combining expression", |op| !matches!(op, Op::Index | Op::Len))?;

    let id_params = [param(OUT, Role::Output, acc_ty.clone())];
    let identity = check(k, &id_params, &[Stmt::Set(Arc::from(OUT), def.identity.clone())], bind)
        .map_err(|e| context(e, "identity"))?;
    only(k, &identity, "identity", |op| !matches!(op, Op::Load(_) | Op::At(_) | Op::LenOf(_) | Op::Index | Op::Len))?;
    // Neutral at the samples; guarded where that does not prove it neutral everywhere.
    let combine = match super::neutral::check(k, acc, (&combine, &def.combine), (&identity, &def.identity))? {
        None => combine,
        Some(guarded) => check(k, &pair, &[Stmt::Set(Arc::from(OUT), guarded)], bind)
            .map_err(|e| context(e, "combining expression"))?,
    };

    let (post, out) = match &def.post {
        None => (None, acc),
        Some((ty, e)) => {
            let out = resolve(k, ty, bind, "the post-map's result")?;
            if def.params.iter().any(|p| &*p.name == A) {
                return Err(fail(
                    k,
                    format!("an argument is named `{A}`, the name the post-map gives the accumulated value"),
                ));
            }
            let mut params = def.params.clone();
            params.push(param(A, Role::Scalar, acc_ty.clone()));
            params.push(param(OUT, Role::Output, Ty::Is(out)));
            let post =
                check(k, &params, &[Stmt::Set(Arc::from(OUT), e.clone())], bind).map_err(|e| context(e, "post-map"))?;
            only(k, &post, "post-map", |op| !matches!(op, Op::Load(_) | Op::At(_) | Op::LenOf(_) | Op::Index))?;
            (Some(post), out)
        }
    };
    Ok(Fold { roles, map, combine, identity, post, acc, out })
}

/// `e` with the part it comes from named.
fn context(e: Error, part: &str) -> Error {
    match e {
        Error::InvalidArgument { what, reason } => {
            Error::InvalidArgument { what, reason: format!("in the {part}: {reason}") }
        }
        other => other,
    }
}
