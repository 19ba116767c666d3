//! The checked parts of a fold (a reduction or a scan): the per-element map,
//! the combining expression of `a` and `b`, the identity and the optional
//! post-map, each a typed body of its own that every generator prints.
//! `fold_check.rs` checks a declared fold into this form.

use kiln_core::DType;

use super::check::{Param, Role, Stmt, Typed};
use super::node::Expr;
use super::ty::Ty;
use crate::scan::ScanKind;

/// The name the combining expression and the post-map give the accumulated value.
pub(crate) const A: &str = "a";
/// The name the combining expression gives its second operand.
pub(crate) const B: &str = "b";

/// A fold as declared: arguments, locals and map, the combining
/// expression, identity and post-map, and the dtypes of the accumulator
/// and the result.
#[derive(Clone, Debug)]
pub struct FoldDef {
    pub(crate) name: String,
    pub(crate) params: Vec<Param>,
    pub(crate) locals: Vec<Stmt>,
    pub(crate) map: Expr,
    pub(crate) combine: Expr,
    pub(crate) identity: Expr,
    pub(crate) post: Option<(Ty, Expr)>,
    pub(crate) acc: Ty,
}

/// A fold with its dtypes bound: the typed parts.
#[derive(Clone, Debug)]
pub struct Fold {
    /// The user's arguments' roles (the map's arguments, in order).
    pub(crate) roles: Vec<Role>,
    /// Over the user's arguments and a last output: the value per element.
    pub(crate) map: Typed,
    /// Over scalars `a` (0), `b` (1) and an output (2).
    pub(crate) combine: Typed,
    /// Over one output: a constant.
    pub(crate) identity: Typed,
    /// Over the user's arguments, `a` (at `roles.len()`) and an output.
    pub(crate) post: Option<Typed>,
    pub(crate) acc: DType,
    pub(crate) out: DType,
}

impl Fold {
    /// The node a part stores its value from.
    pub(crate) fn result(body: &Typed) -> u32 {
        body.stores.last().map_or(0, |(_, v)| *v)
    }

    /// The canonical form of every part: generated programs are keyed by it.
    pub(crate) fn canonical(&self) -> String {
        let post = self.post.as_ref().map_or(String::new(), Typed::canonical);
        format!(
            "{:?} acc {} out {}\nmap {}\ncombine {}\nidentity {}\npost {post}",
            self.roles,
            self.acc,
            self.out,
            self.map.canonical(),
            self.combine.canonical(),
            self.identity.canonical()
        )
    }

    /// Every typed part, for checks over all of them.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &Typed> {
        [&self.map, &self.combine, &self.identity].into_iter().chain(self.post.as_ref())
    }
}

/// One kernel of a fold's plan, each its own entry point `{name}_{pass}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Map and fold a whole array into one partial per block.
    Whole,
    /// Fold the partials in one block; post-map into the one result.
    Fold,
    /// Along axis 1: one result per row.
    Rows,
    /// Along axis 1 for a few long rows, first pass: each row cut into
    /// parts, a partial per part (part-major), folded by [`Pass::Cols`].
    Split,
    /// Along axis 0, first pass: per chunk of rows, a partial per column.
    Tile,
    /// Along axis 0, second pass: fold each column's partials; post-map.
    Cols,
}

impl Pass {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Pass::Whole => "whole",
            Pass::Fold => "fold",
            Pass::Rows => "rows",
            Pass::Split => "split",
            Pass::Tile => "tile",
            Pass::Cols => "cols",
        }
    }
}

/// One kernel of a user scan's plan, each its own entry point `{name}_{pass}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanPass {
    /// The whole scan in one pass (CUDA: decoupled look-back; the CPU).
    One(ScanKind),
    /// WGSL, first pass: the fold of each tile of mapped elements.
    Sums,
    /// WGSL, first pass over a level of tile sums (accumulator values).
    LevelSums,
    /// WGSL, last pass: each tile of mapped elements scanned from its carry.
    Tiles(ScanKind),
    /// WGSL, last pass over a level of tile sums, in place: each element
    /// becomes the fold of everything before it (the next level's carries).
    LevelTiles,
}

impl ScanPass {
    pub(crate) fn name(self) -> String {
        match self {
            ScanPass::One(k) => format!("{k}"),
            ScanPass::Sums => "sums".into(),
            ScanPass::LevelSums => "level_sums".into(),
            ScanPass::Tiles(k) => format!("tiles_{k}"),
            ScanPass::LevelTiles => "level_tiles".into(),
        }
    }
}
