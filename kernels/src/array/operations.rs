//! The operations of an array type and its expression type, written once
//! for both tiers: `array_operations!` implements the one-operation methods
//! (`abs`, `minimum`, `lt`, ...), `clip` and Rust's operators on the
//! expression type, on the array type and (operators) on references to it.
//! The typed tier expands it for `ArrayExpr<B, T>` and `Array<B, T>`
//! (kernels/src/array/lazy.rs), the run-time tier for `kiln::array`'s.
//!
//! Each type needs `unary(UnOp)`, `binary(BinOp, other)`,
//! `compare(BinOp, other)` (the expression) and `expr()` (the array).

/// `array_operations!([generics] Expr, Array, Mask, IntoExpr bound)`.
#[doc(hidden)]
#[macro_export]
macro_rules! array_operations {
    ([$($g:tt)*] $expr:ty, $array:ty, $mask:ty, $into:path) => {
        $crate::array_operations!(@unary [$($g)*] $expr, $array;
            /// `|x|` (integers wrap at the most negative value).
            abs => Abs,
            /// Square root (floats).
            sqrt => Sqrt,
            /// `1 / sqrt(x)` (floats).
            rsqrt => Rsqrt,
            /// `e^x` (floats).
            exp => Exp,
            /// Natural logarithm (floats).
            ln => Log,
            /// Sine (floats).
            sin => Sin,
            /// Cosine (floats).
            cos => Cos,
            /// Hyperbolic tangent (floats).
            tanh => Tanh,
            /// Largest integer not above (floats).
            floor => Floor,
            /// Smallest integer not below (floats).
            ceil => Ceil,
        );
        $crate::array_operations!(@binary [$($g)*] $expr, $array, $into;
            /// The smaller of the two (the other operand where one is NaN).
            minimum => Min,
            /// The larger of the two (the other operand where one is NaN).
            maximum => Max,
            /// `x` to the power `y` (floats; C's special cases).
            pow => Pow,
        );
        $crate::array_operations!(@compare [$($g)*] $expr, $array, $mask, $into;
            /// Where `x < y`.
            lt => Lt,
            /// Where `x <= y`.
            le => Le,
            /// Where `x > y`.
            gt => Gt,
            /// Where `x >= y`.
            ge => Ge,
            /// Where `x == y`.
            eq_to => Eq,
            /// Where `x != y` (true at NaN).
            ne_to => Ne,
        );
        $crate::array_operations!(@operators [$($g)*] $expr, $array, $into;
            Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div, Rem rem => Rem,
            BitAnd bitand => And, BitOr bitor => Or, BitXor bitxor => Xor, Shl shl => Shl, Shr shr => Shr,
        );
        $crate::array_operations!(@unary_operators [$($g)*] $expr, $array;
            /// `-x` (integers wrap at the most negative value).
            Neg neg => Neg,
            /// Every bit flipped (integers).
            Not not => Not,
        );

        impl<$($g)*> $expr {
            /// Each value limited to `[lo, hi]` (NumPy's `clip`: `min(max(x, lo), hi)`).
            pub fn clip(self, lo: impl $into, hi: impl $into) -> Self {
                self.maximum(lo).minimum(hi)
            }
        }

        impl<$($g)*> $array {
            /// Each value limited to `[lo, hi]` (NumPy's `clip`).
            pub fn clip(&self, lo: impl $into, hi: impl $into) -> $expr {
                self.expr().clip(lo, hi)
            }
        }
    };
    (@unary [$($g:tt)*] $expr:ty, $array:ty; $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {
        impl<$($g)*> $expr {
            $($(#[$doc])* pub fn $name(self) -> Self { self.unary($crate::expr::UnOp::$op) })*
        }
        impl<$($g)*> $array {
            $($(#[$doc])* pub fn $name(&self) -> $expr { self.expr().unary($crate::expr::UnOp::$op) })*
        }
    };
    (@binary [$($g:tt)*] $expr:ty, $array:ty, $into:path; $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {
        impl<$($g)*> $expr {
            $($(#[$doc])* pub fn $name(self, other: impl $into) -> Self {
                self.binary($crate::expr::BinOp::$op, other)
            })*
        }
        impl<$($g)*> $array {
            $($(#[$doc])* pub fn $name(&self, other: impl $into) -> $expr {
                self.expr().binary($crate::expr::BinOp::$op, other)
            })*
        }
    };
    (@compare [$($g:tt)*] $expr:ty, $array:ty, $mask:ty, $into:path; $($(#[$doc:meta])* $name:ident => $op:ident,)*) => {
        impl<$($g)*> $expr {
            $($(#[$doc])* pub fn $name(self, other: impl $into) -> $mask {
                self.compare($crate::expr::BinOp::$op, other)
            })*
        }
        impl<$($g)*> $array {
            $($(#[$doc])* pub fn $name(&self, other: impl $into) -> $mask {
                self.expr().compare($crate::expr::BinOp::$op, other)
            })*
        }
    };
    // One operator trait at a time: the generics repeat once per impl.
    (@operators $g:tt $expr:ty, $array:ty, $into:path; $trait:ident $method:ident => $op:ident, $($rest:tt)*) => {
        $crate::array_operations!(@operator $g $expr, $array, $into; $trait $method => $op);
        $crate::array_operations!(@operators $g $expr, $array, $into; $($rest)*);
    };
    (@operators $g:tt $expr:ty, $array:ty, $into:path;) => {};
    (@operator [$($g:tt)*] $expr:ty, $array:ty, $into:path; $trait:ident $method:ident => $op:ident) => {
        impl<$($g)*, R: $into> ::core::ops::$trait<R> for $expr {
            type Output = $expr;
            fn $method(self, other: R) -> $expr {
                self.binary($crate::expr::BinOp::$op, other)
            }
        }
        impl<$($g)*, R: $into> ::core::ops::$trait<R> for &$array {
            type Output = $expr;
            fn $method(self, other: R) -> $expr {
                self.expr().binary($crate::expr::BinOp::$op, other)
            }
        }
        impl<$($g)*, R: $into> ::core::ops::$trait<R> for $array {
            type Output = $expr;
            fn $method(self, other: R) -> $expr {
                self.expr().binary($crate::expr::BinOp::$op, other)
            }
        }
    };
    (@unary_operators $g:tt $expr:ty, $array:ty; $(#[$doc:meta])* $trait:ident $method:ident => $op:ident, $($rest:tt)*) => {
        $crate::array_operations!(@unary_operator $g $expr, $array; $(#[$doc])* $trait $method => $op);
        $crate::array_operations!(@unary_operators $g $expr, $array; $($rest)*);
    };
    (@unary_operators $g:tt $expr:ty, $array:ty;) => {};
    (@unary_operator [$($g:tt)*] $expr:ty, $array:ty; $(#[$doc:meta])* $trait:ident $method:ident => $op:ident) => {
        impl<$($g)*> ::core::ops::$trait for $expr {
            type Output = $expr;
            $(#[$doc])*
            fn $method(self) -> $expr {
                self.unary($crate::expr::UnOp::$op)
            }
        }
        impl<$($g)*> ::core::ops::$trait for &$array {
            type Output = $expr;
            $(#[$doc])*
            fn $method(self) -> $expr {
                self.expr().unary($crate::expr::UnOp::$op)
            }
        }
    };
}
