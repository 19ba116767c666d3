//! What the sort's passes share: the flags a pass takes, the buffers it
//! reads and writes, and the most keys onesweep sorts. A leaf: the programs,
//! the plan, the launches and the CPU passes all name these, and it names
//! none of them.

/// Map the keys read (to sortable patterns): the first pass.
pub(crate) const FLAG_MAP: u32 = 1;
/// Unmap the keys written (back to key bits): the last pass.
pub(crate) const FLAG_UNMAP: u32 = 2;
/// Move values with the keys.
pub(crate) const FLAG_VALUES: u32 = 4;
/// Take each key's position as its value (argsort's first pass).
pub(crate) const FLAG_GEN_INDEX: u32 = 8;
/// Write no keys, only values (argsort's last pass).
pub(crate) const FLAG_NO_KEYS: u32 = 16;
/// Read the keys (and values) from the outputs: the one-tile sort in place.
pub(crate) const FLAG_IN_PLACE: u32 = 32;

/// The buffers one pass reads and writes.
pub(super) struct Io<'r, KI, VI, KO, VO> {
    pub keys_in: &'r KI,
    pub vals_in: &'r VI,
    pub keys_out: &'r mut KO,
    pub vals_out: &'r mut VO,
}

/// The most keys onesweep sorts: its status words count in 30 bits.
pub(super) const MAX_KEYS: usize = (1 << 30) - 1;
