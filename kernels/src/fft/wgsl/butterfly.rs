//! The WGSL of one radix's butterfly: the DFT of a few complex values held
//! in registers, unrolled, its constant twiddles folded in (a quarter turn
//! is a swap of parts, a zero turn nothing).
//!
//! Radices 2 and 4 are additions and swaps; 3, 5 and 7 (and any other
//! prime) pair `x[q]` with `x[p - q]`, so that each cosine and sine
//! multiplies a sum once; composite radices (8, 9, 16) are Cooley-Tukey
//! over two smaller ones.

use std::fmt::Write;

use super::tables::unit;

/// Writes `let` statements into `code`, naming each value afresh.
pub(super) struct Emitter {
    pub code: String,
    indent: String,
    next: usize,
    inverse: bool,
}

impl Emitter {
    /// An emitter of butterflies in direction `inverse` (the exponent's
    /// sign: `+` inverse), its statements indented by `indent` spaces.
    pub(super) fn new(indent: usize, inverse: bool) -> Self {
        Emitter { code: String::new(), indent: " ".repeat(indent), next: 0, inverse }
    }

    /// Bind `expr` to a fresh name, and return the name.
    fn let_(&mut self, expr: String) -> String {
        let name = format!("u{}", self.next);
        self.next += 1;
        let _ = writeln!(self.code, "{}let {name} = {expr};", self.indent);
        name
    }

    /// The DFT of `x` (WGSL names of `C2` values) in this emitter's
    /// direction: the names of its outputs, in order.
    pub(super) fn dft(&mut self, x: &[String]) -> Vec<String> {
        let r = x.len();
        match r {
            0 | 1 => x.to_vec(),
            2 => vec![self.let_(format!("{} + {}", x[0], x[1])), self.let_(format!("{} - {}", x[0], x[1]))],
            4 => self.radix4(x),
            _ => match smallest_factor(r) {
                p if p == r => self.prime(x),
                p => {
                    // Split off a four where there is one (its twiddles are swaps).
                    let r1 = if r.is_multiple_of(4) && r > 4 { 4 } else { p };
                    self.composite(x, r1)
                }
            },
        }
    }

    /// Radix 4: two radix-2 layers, the middle twiddle a quarter turn.
    fn radix4(&mut self, x: &[String]) -> Vec<String> {
        let a = self.let_(format!("{} + {}", x[0], x[2]));
        let b = self.let_(format!("{} - {}", x[0], x[2]));
        let c = self.let_(format!("{} + {}", x[1], x[3]));
        let d = self.let_(self.quarter(&format!("({} - {})", x[1], x[3]), 1));
        vec![
            self.let_(format!("{a} + {c}")),
            self.let_(format!("{b} + {d}")),
            self.let_(format!("{a} - {c}")),
            self.let_(format!("{b} - {d}")),
        ]
    }

    /// `v` turned by `q` quarter turns in this direction (`exp(+-i pi q / 2)`).
    fn quarter(&self, v: &str, q: usize) -> String {
        match (q % 4, self.inverse) {
            (0, _) => v.to_string(),
            (2, _) => format!("-{v}"),
            (1, false) | (3, true) => format!("mulni({v})"),
            _ => format!("muli({v})"),
        }
    }

    /// A prime radix: `y[0]` is the sum; for each `k <= (p - 1) / 2`,
    /// `y[k]` and `y[p - k]` share the cosine sum and differ in the sign of
    /// the sine sum.
    fn prime(&mut self, x: &[String]) -> Vec<String> {
        let p = x.len();
        let h = (p - 1) / 2;
        let mut sums = Vec::with_capacity(h);
        let mut diffs = Vec::with_capacity(h);
        for q in 1..=h {
            sums.push(self.let_(format!("{} + {}", x[q], x[p - q])));
            diffs.push(self.let_(format!("{} - {}", x[q], x[p - q])));
        }
        let mut y = vec![String::new(); p];
        y[0] = self.let_(format!("{} + {}", x[0], sums.join(" + ")));
        for k in 1..=h {
            let mut cos = x[0].clone();
            let mut sin = Vec::new();
            for q in 1..=h {
                // (cos, sin) of 2 pi qk / p.
                let w = unit(((q * k) % p) as u128, p as u128, true);
                let _ = write!(cos, " + {} * R({:e})", sums[q - 1], w.re);
                sin.push(format!("{} * R({:e})", diffs[q - 1], w.im));
            }
            let c = self.let_(cos);
            let s = self.let_(format!("muli({})", sin.join(" + ")));
            // x[q] w^(qk) + x[p-q] w^(-qk) = sum cos + (sign) i diff sin.
            let (plus, minus) = if self.inverse { ("+", "-") } else { ("-", "+") };
            y[k] = self.let_(format!("{c} {plus} {s}"));
            y[p - k] = self.let_(format!("{c} {minus} {s}"));
        }
        y
    }

    /// Cooley-Tukey over `r = r1 r2`: `r2` DFTs of `r1` (inputs `j2`,
    /// `r2 + j2`, ...), twiddled by `w_r^(j2 k1)`, then `r1` DFTs of `r2`;
    /// output `k1 + r1 k2`.
    fn composite(&mut self, x: &[String], r1: usize) -> Vec<String> {
        let r = x.len();
        let r2 = r / r1;
        let mut inner = Vec::with_capacity(r2);
        for j2 in 0..r2 {
            let column: Vec<String> = (0..r1).map(|j1| x[r2 * j1 + j2].clone()).collect();
            let mut y = self.dft(&column);
            for (k1, v) in y.iter_mut().enumerate().skip(1) {
                *v = self.twiddle(v, j2 * k1, r);
            }
            inner.push(y);
        }
        let mut out = vec![String::new(); r];
        for k1 in 0..r1 {
            let row: Vec<String> = (0..r2).map(|j2| inner[j2][k1].clone()).collect();
            for (k2, v) in self.dft(&row).into_iter().enumerate() {
                out[k1 + r1 * k2] = v;
            }
        }
        out
    }

    /// `v` times `w_r^e` in this direction, a constant: nothing for a zero
    /// turn, a swap for quarter turns, a multiplication otherwise.
    fn twiddle(&mut self, v: &str, e: usize, r: usize) -> String {
        let e = e % r;
        if e == 0 {
            return v.to_string();
        }
        if (4 * e).is_multiple_of(r) {
            return self.let_(self.quarter(v, 4 * e / r));
        }
        let w = unit(e as u128, r as u128, self.inverse);
        self.let_(format!("cmul({v}, C2(R({:e}), R({:e})))", w.re, w.im))
    }
}

/// The least prime factor of `r` (at least 2).
fn smallest_factor(r: usize) -> usize {
    (2..).find(|p| r.is_multiple_of(*p) || p * p > r).map_or(r, |p| if r.is_multiple_of(p) { p } else { r })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    type C = (f64, f64);

    /// Evaluate the emitted statements on `x` (names `x0`, `x1`, ...).
    fn eval(code: &str, x: &[C], outs: &[String]) -> Vec<C> {
        let mut env: HashMap<String, C> = x.iter().enumerate().map(|(i, &v)| (format!("x{i}"), v)).collect();
        for line in code.lines() {
            let line = line.trim().trim_start_matches("let ").trim_end_matches(';');
            let (name, expr) = line.split_once(" = ").unwrap();
            let v = expr_value(expr, &env);
            env.insert(name.to_string(), v);
        }
        outs.iter().map(|o| env[o]).collect()
    }

    /// A tiny evaluator of the emitted expression forms.
    fn expr_value(expr: &str, env: &HashMap<String, C>) -> C {
        let expr = expr.trim();
        // Sums and differences at the top level (outside parentheses).
        let mut depth = 0;
        let bytes: Vec<char> = expr.chars().collect();
        for i in (1..bytes.len()).rev() {
            match bytes[i] {
                ')' => depth += 1,
                '(' => depth -= 1,
                '+' | '-' if depth == 0 && bytes[i - 1] == ' ' && bytes.get(i + 1) == Some(&' ') => {
                    let (a, b) = (expr_value(&expr[..i - 1], env), expr_value(&expr[i + 2..], env));
                    return if bytes[i] == '+' { (a.0 + b.0, a.1 + b.1) } else { (a.0 - b.0, a.1 - b.1) };
                }
                _ => {}
            }
        }
        if let Some(rest) = expr.strip_prefix('-') {
            let v = expr_value(rest, env);
            return (-v.0, -v.1);
        }
        if let Some((a, b)) = split_top(expr, " * ") {
            let v = expr_value(a, env);
            let s: f64 = b.trim_start_matches("R(").trim_end_matches(')').parse().unwrap();
            return (v.0 * s, v.1 * s);
        }
        for (f, g) in [("muli(", 1), ("mulni(", -1)] {
            if let Some(inner) = expr.strip_prefix(f) {
                let v = expr_value(&inner[..inner.len() - 1], env);
                return if g == 1 { (-v.1, v.0) } else { (v.1, -v.0) };
            }
        }
        if let Some(inner) = expr.strip_prefix("cmul(") {
            let inner = &inner[..inner.len() - 1];
            let (a, w) = inner.split_once(", C2(").unwrap();
            let w = &w[..w.len() - 1];
            let (c, s) = w.split_once(", ").unwrap();
            let num = |t: &str| -> f64 { t.trim_start_matches("R(").trim_end_matches(')').parse().unwrap() };
            let (c, s, v) = (num(c), num(s), expr_value(a, env));
            return (v.0 * c - v.1 * s, v.0 * s + v.1 * c);
        }
        if let Some(inner) = expr.strip_prefix('(').and_then(|e| e.strip_suffix(')')) {
            return expr_value(inner, env);
        }
        env[expr]
    }

    fn split_top<'a>(expr: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
        let mut depth = 0i32;
        for (i, ch) in expr.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 && expr[i..].starts_with(sep) => return Some((&expr[..i], &expr[i + sep.len()..])),
                _ => {}
            }
        }
        None
    }

    #[test]
    fn butterflies_compute_the_dft_in_both_directions() {
        for r in [2usize, 3, 4, 5, 7, 8, 9, 16] {
            for inverse in [false, true] {
                let x: Vec<C> = (0..r).map(|i| ((i as f64 * 0.37).sin(), (i as f64 * 1.3).cos())).collect();
                let names: Vec<String> = (0..r).map(|i| format!("x{i}")).collect();
                let mut em = Emitter::new(0, inverse);
                let outs = em.dft(&names);
                let got = eval(&em.code, &x, &outs);
                let sign = if inverse { 1.0 } else { -1.0 };
                for (k, g) in got.iter().enumerate() {
                    let mut want = (0.0, 0.0);
                    for (j, v) in x.iter().enumerate() {
                        let a = sign * 2.0 * std::f64::consts::PI * ((j * k) % r) as f64 / r as f64;
                        want.0 += v.0 * a.cos() - v.1 * a.sin();
                        want.1 += v.0 * a.sin() + v.1 * a.cos();
                    }
                    assert!(
                        (g.0 - want.0).abs() < 1e-12 && (g.1 - want.1).abs() < 1e-12,
                        "r {r} k {k}: {g:?} {want:?}"
                    );
                }
            }
        }
    }
}
