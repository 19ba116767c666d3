//! The small integer codes kernels take for an operation or a mode (a CPU
//! kernel's `OP` const parameter, `OP` defined in the CUDA and WGSL
//! sources, the convolution's border argument), and reading one back: one
//! mapping for every such enum.

use kiln_core::{Error, Result};

/// An enum whose kernels take each value as a code: its discriminant,
/// which is also its index in [`ALL`](Code::ALL).
pub(crate) trait Code: Copy + PartialEq + Sized + 'static {
    /// Every value, in code order.
    const ALL: &'static [Self];
    /// What a code stands for, in errors ("reduction").
    const WHAT: &'static str;
    /// What a value is called, in errors ("operation").
    const NOUN: &'static str;

    /// The lower-case name of `self`.
    fn label(self) -> &'static str;

    /// The code of `self`.
    fn code(self) -> u32 {
        Self::ALL.iter().position(|&v| v == self).unwrap_or(usize::MAX) as u32
    }

    /// The value of `code`, or `None` for a code no value has.
    fn from_code(code: u32) -> Option<Self> {
        Self::ALL.get(code as usize).copied()
    }

    /// [`from_code`](Self::from_code), with an unknown code as an
    /// `InvalidArgument` error naming `what` (the kernel that got it) and
    /// listing the codes there are.
    fn decode(code: u32, what: &str) -> Result<Self> {
        Self::from_code(code).ok_or_else(|| {
            let known: Vec<String> = Self::ALL.iter().map(|v| format!("{} {}", v.code(), v.label())).collect();
            Error::invalid(what, format!("{} code {code} names no {} ({})", Self::WHAT, Self::NOUN, known.join(", ")))
        })
    }
}

/// `impl Code for $enum`, its values in `$enum::ALL` (in discriminant
/// order) and their names from `$enum::name`.
macro_rules! codes {
    ($enum:ty, $what:literal, $noun:literal) => {
        impl $crate::code::Code for $enum {
            const ALL: &'static [Self] = &<$enum>::ALL;
            const WHAT: &'static str = $what;
            const NOUN: &'static str = $noun;
            fn label(self) -> &'static str {
                self.name()
            }
        }
    };
}
pub(crate) use codes;

#[cfg(test)]
mod tests {
    use super::Code;
    use crate::elementwise::BinaryOp;
    use crate::image::Border;
    use crate::map::MapOp;
    use crate::reduce::ReduceOp;

    fn check<C: Code + std::fmt::Debug>(what: &str) {
        for (i, &v) in C::ALL.iter().enumerate() {
            assert_eq!(v.code(), i as u32, "{v:?}");
            assert_eq!(C::from_code(v.code()), Some(v));
            assert_eq!(C::decode(v.code(), "test").ok(), Some(v));
        }
        let n = C::ALL.len() as u32;
        for code in [n, n + 1, u32::MAX] {
            assert_eq!(C::from_code(code), None);
            let err = C::decode(code, "a test").unwrap_err();
            assert!(matches!(err, kiln_core::Error::InvalidArgument { .. }), "{err}");
            let text = err.to_string();
            assert!(text.starts_with(&format!("a test: {what} code {code} names no ")), "{text}");
            assert!(text.contains(&format!("0 {}", C::ALL[0].label())), "{text}");
        }
    }

    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        check::<MapOp>("map");
        check::<ReduceOp>("reduction");
        check::<BinaryOp>("binary operation");
        check::<Border>("border");
    }

    #[test]
    fn codes_are_the_discriminants() {
        assert!(MapOp::ALL.iter().all(|&v| v as u32 == v.code()));
        assert!(ReduceOp::ALL.iter().all(|&v| v as u32 == v.code()));
        assert!(BinaryOp::ALL.iter().all(|&v| v as u32 == v.code()));
        assert!(Border::ALL.iter().all(|&v| v as u32 == v.code()));
        assert_eq!(
            ReduceOp::decode(9, "reduction test").unwrap_err().to_string(),
            "reduction test: reduction code 9 names no operation (0 sum, 1 product, 2 min, 3 max)"
        );
    }
}
