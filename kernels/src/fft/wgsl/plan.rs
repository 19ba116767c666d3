//! How a length is cut into kernels: which lengths take the radix passes
//! (their prime factors all 2, 3, 5 or 7), the in-workgroup radices of a
//! line, the split of a long length into lines that fit workgroup memory
//! (one kernel each), the launch shape of a kernel, and Bluestein's padded
//! length for the others.

/// The primes the radix passes are made of.
const PRIMES: [usize; 4] = [2, 3, 5, 7];

/// The most invocations one line kernel's workgroup has.
pub(super) const MAX_THREADS: usize = 256;

/// Bytes of workgroup memory a kernel of several lines a workgroup uses
/// per line besides its elements: the line's input and output offsets, its
/// index and its first output index (a kernel of one line a workgroup keeps them in registers).
pub(super) const LINE_BYTES: usize = 16;

/// Bytes of workgroup memory `lines` lines of `r` elements of `csize`
/// bytes take.
pub(super) fn workgroup_bytes(r: usize, csize: usize, lines: usize) -> usize {
    let per_line = if lines == 1 { r * csize } else { r * csize + LINE_BYTES };
    per_line * lines
}

/// Whether every prime factor of `n` is 2, 3, 5 or 7.
pub(super) fn smooth(n: usize) -> bool {
    n >= 1 && rest(n) == 1
}

/// `n` without its factors 2, 3, 5 and 7.
fn rest(mut n: usize) -> usize {
    for p in PRIMES {
        while n.is_multiple_of(p) {
            n /= p;
        }
    }
    n
}

/// The prime factors of a smooth `n`, with multiplicity, largest first.
fn primes(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for p in PRIMES.into_iter().rev() {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
    }
    out
}

/// The radices of the in-workgroup stages of a line of smooth length `r`,
/// largest first: the powers of two in as few stages of at most 16 as
/// there can be, evened out (32 is 8 x 4, not 16 x 2), the threes in
/// nines (and a three), every five and every seven alone. Empty for 1.
pub(super) fn radices(r: usize) -> Vec<usize> {
    let count = |p: usize| {
        let (mut m, mut k) = (r, 0u32);
        while m.is_multiple_of(p) {
            m /= p;
            k += 1;
        }
        k
    };
    let mut out = Vec::new();
    let twos = count(2);
    if twos > 0 {
        let stages = twos.div_ceil(4);
        for s in 0..stages {
            // Spread the twos evenly: the first stages take the extra ones.
            let bits = twos / stages + u32::from(s < twos % stages);
            out.push(1usize << bits);
        }
    }
    let threes = count(3);
    out.extend(std::iter::repeat_n(9, (threes / 2) as usize));
    if threes % 2 == 1 {
        out.push(3);
    }
    out.extend(std::iter::repeat_n(5, count(5) as usize));
    out.extend(std::iter::repeat_n(7, count(7) as usize));
    out.sort_unstable_by(|a, b| b.cmp(a));
    out
}

/// The longest line of `csize`-byte complex elements a kernel holds when
/// its workgroup takes `lines` of them in `shared` bytes of workgroup memory.
pub(super) fn line_cap(csize: usize, shared: usize, lines: usize) -> usize {
    if lines == 1 { shared / csize } else { (shared / lines).saturating_sub(LINE_BYTES) / csize }
}

/// The fewest lines a workgroup of a kernel that is not the only one of
/// its transform takes, so that its strided reads and writes move whole
/// 32-byte sectors (4 complex f32, 2 complex f64).
pub(super) fn min_lines(csize: usize) -> usize {
    (32 / csize).max(1)
}

/// The lines a workgroup of such a kernel takes where workgroup memory
/// and the workgroup's size allow: 128 bytes of each element index.
pub(super) fn wide_lines(csize: usize) -> usize {
    (128 / csize).max(1)
}

/// The line lengths of a smooth `n` too long for one kernel: as few
/// factors of `n` as there can be, each at most `cap`, balanced (the
/// largest primes placed first, each on the shortest line so far); the
/// first kernel transforms along the longest. `None` when `cap` is below 7.
pub(super) fn split(n: usize, cap: usize) -> Option<Vec<usize>> {
    if cap < 7 {
        return None;
    }
    let ps = primes(n);
    for k in 2..=ps.len().max(2) {
        let mut bins = vec![1usize; k];
        for &p in &ps {
            let i = (0..k).min_by_key(|&i| bins[i]).unwrap_or(0);
            bins[i] *= p;
        }
        if bins.iter().all(|&b| b <= cap) {
            bins.sort_unstable_by(|a, b| b.cmp(a));
            bins.retain(|&b| b > 1);
            return Some(bins);
        }
    }
    None
}

/// Bluestein's padded length for `n`: the least `2^a s` (`s` one of 1, 3,
/// 5, 7, 9) at least `2n - 1`, so that the circular convolution of the
/// chirps holds their linear one.
pub(super) fn bluestein_len(n: usize) -> Option<usize> {
    let need = n.checked_mul(2)?.checked_sub(1)?;
    [1usize, 3, 5, 7, 9]
        .into_iter()
        .filter_map(|s| {
            let mut m = s;
            while m < need {
                m = m.checked_mul(2)?;
            }
            Some(m)
        })
        .min()
}

/// The launch shape of a line kernel: `lines` lines per workgroup,
/// `threads` invocations per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    pub lines: usize,
    pub threads: usize,
}

impl Shape {
    /// Invocations per workgroup.
    pub(super) fn workgroup(self) -> usize {
        self.lines * self.threads
    }
}

/// The shape of a kernel over lines of length `r` (stages `radices`) of
/// `csize`-byte elements: an invocation per butterfly of the largest radix
/// (at most 256), and as many lines as make 128 invocations, at least
/// `min_lines`, at most what workgroup memory holds and no more than the
/// `total` lines there are (rounded up to a power of two).
pub(super) fn shape(r: usize, radices: &[usize], csize: usize, shared: usize, total: usize, min_lines: usize) -> Shape {
    let rmax = radices.iter().copied().max().unwrap_or(1);
    let threads = r.div_ceil(rmax).clamp(1, MAX_THREADS);
    let fit =
        (1..=MAX_THREADS).rev().find(|&c| c.is_power_of_two() && workgroup_bytes(r, csize, c) <= shared).unwrap_or(1);
    let by_threads = prev_pow2((MAX_THREADS / threads).max(1));
    let want = (128 / threads).max(min_lines).max(1).next_power_of_two();
    let lines = want.min(fit).min(by_threads).min(total.max(1).next_power_of_two()).max(1);
    Shape { lines, threads }
}

/// The largest power of two at most `v` (`v` at least 1).
fn prev_pow2(v: usize) -> usize {
    1 << (usize::BITS - 1 - v.max(1).leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smooth_lengths_are_made_of_two_three_five_and_seven() {
        assert!(smooth(1) && smooth(4096) && smooth(1000) && smooth(2 * 3 * 5 * 7 * 49));
        assert!(!smooth(97) && !smooth(22) && !smooth(2 * 10007) && !smooth(0));
    }

    #[test]
    fn radices_multiply_to_the_line_and_stay_small() {
        for r in [1usize, 2, 4, 8, 16, 32, 64, 1024, 4096, 3, 9, 27, 81, 25, 7, 1000, 2187, 3125, 2 * 3 * 5 * 7] {
            let rs = radices(r);
            assert_eq!(rs.iter().product::<usize>(), r, "{r}: {rs:?}");
            assert!(rs.iter().all(|&x| x <= 16), "{r}: {rs:?}");
        }
        assert_eq!(radices(32), vec![8, 4]);
        assert_eq!(radices(4096), vec![16, 16, 16]);
        assert_eq!(radices(1024), vec![16, 8, 8]);
        assert_eq!(radices(1), Vec::<usize>::new());
    }

    #[test]
    fn splits_are_balanced_and_fit() {
        assert_eq!(split(1 << 16, 1024), Some(vec![256, 256]));
        assert_eq!(split(1 << 20, 1024), Some(vec![1024, 1024]));
        assert_eq!(split(1 << 24, 1024), Some(vec![256, 256, 256]));
        let s = split(3 * 5 * 7 * (1 << 12), 1024).unwrap();
        assert_eq!(s.iter().product::<usize>(), 3 * 5 * 7 * (1 << 12));
        assert!(s.iter().all(|&r| r <= 1024));
    }

    #[test]
    fn bluestein_pads_to_a_smooth_length_past_twice_n() {
        for n in [2usize, 3, 17, 97, 127, 10007, 100003] {
            let m = bluestein_len(n).unwrap();
            assert!(m >= 2 * n - 1 && smooth(m), "{n}: {m}");
        }
        assert_eq!(bluestein_len(97), Some(224));
    }

    #[test]
    fn shapes_fit_their_limits() {
        let s = shape(4096, &radices(4096), 8, 32768, 1, 1);
        assert_eq!(s, Shape { lines: 1, threads: 256 });
        let s = shape(8, &radices(8), 8, 32768, 10000, 1);
        assert_eq!(s, Shape { lines: 128, threads: 1 });
        let s = shape(1024, &radices(1024), 8, 32768, 10000, 4);
        assert!(s.lines >= 2 && workgroup_bytes(1024, 8, s.lines) <= 32768, "{s:?}");
        assert_eq!(line_cap(8, 32768, 1), 4096);
    }
}
