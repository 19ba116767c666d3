//! How the CPU's matmul routes see one product: each operand's leading
//! dimension and transposition, and c's row stride (cpu.rs makes them,
//! the packed routes take them).

/// How one operand of one product lies in its slice.
#[derive(Clone, Copy, Debug)]
pub(super) struct Operand {
    /// Elements from one stored row to the next.
    pub ld: usize,
    /// Stored transposed: element (i, p) at `p ld + i`.
    pub transposed: bool,
}

impl Operand {
    /// (row stride, column stride) of the operand's elements.
    pub(super) fn strides(&self) -> (usize, usize) {
        if self.transposed { (1, self.ld) } else { (self.ld, 1) }
    }

    /// The index of element (i, p).
    pub(super) fn at(&self, i: usize, p: usize) -> usize {
        let (rs, cs) = self.strides();
        i * rs + p * cs
    }

    /// The elements a `rows x cols` operand spans, from its first to its
    /// last (both at least 1).
    pub(super) fn span(&self, rows: usize, cols: usize) -> usize {
        self.at(rows - 1, cols - 1) + 1
    }
}

/// One product `c (m x n) = a (m x k) . b (k x n)`, each slice starting at
/// its matrix's first element; c's rows `ldc` apart.
#[derive(Clone, Copy, Debug)]
pub(super) struct Product {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Operand,
    pub b: Operand,
    pub ldc: usize,
}
