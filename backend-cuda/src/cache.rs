//! The on-disk cache of compiled modules.
//!
//! One file per module, named by the SHA-256 of everything that determines
//! it (source, options, target architecture, NVRTC version, entry point).
//! A file is a 56-byte header (magic, format version, image kind, payload
//! length, SHA-256 of the payload) and the CUBIN or PTX image. Writes go to a
//! temporary file in the same directory, renamed into place, so a reader
//! sees a whole entry or none; a damaged entry (truncated, overwritten) fails
//! its length or checksum and is compiled again and replaced.
//!
//! On by default, in `dirs::cache_dir()/kiln/nvrtc`; `KILN_CACHE_DIR` moves
//! it and `KILN_CACHE=0` turns it off. The key does not cover the contents of
//! included headers: after editing a header under an include path, clear the
//! directory.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"KILNNVRT";
const FORMAT: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8 + 32;
const KIND_CUBIN: u32 = 1;
const KIND_PTX: u32 = 2;

/// How a kernel's module was obtained, with respect to the disk cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// The disk cache is off (`KILN_CACHE=0`, or no cache directory is known).
    Disabled,
    /// Loaded from the disk cache; NVRTC did not run.
    Hit,
    /// Compiled, and stored for later processes.
    Stored,
    /// The cached entry was damaged: compiled again and replaced.
    Rebuilt {
        /// What was wrong with the entry.
        reason: String,
    },
    /// Compiled, but the entry could not be written (the kernel works; the next process compiles again).
    NotStored {
        /// The file-system error.
        reason: String,
    },
}

/// The cache directory the environment asks for: `None` when `KILN_CACHE` is
/// `0`, `off` or `false`, else `KILN_CACHE_DIR`, else the user's cache dir.
pub(crate) fn dir_from_env() -> Option<PathBuf> {
    let off = std::env::var("KILN_CACHE").map(|v| matches!(v.trim(), "0" | "off" | "false")).unwrap_or(false);
    if off {
        return None;
    }
    match std::env::var_os("KILN_CACHE_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::cache_dir().map(|d| d.join("kiln").join("nvrtc")),
    }
}

/// The cache key: SHA-256 over the parts, each length-prefixed so that no two
/// different part lists hash alike.
pub(crate) fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The file holding entry `key`.
pub(crate) fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.kmod"))
}

/// A cached module image.
pub(crate) struct Entry {
    pub cubin: bool,
    pub bytes: Vec<u8>,
}

/// What a lookup found.
pub(crate) enum Lookup {
    Miss,
    Hit(Entry),
    /// An entry exists but cannot be trusted; the reason says why.
    Damaged(String),
}

/// Read entry `key`, checking its header, length and checksum.
pub(crate) fn load(dir: &Path, key: &str) -> Lookup {
    let data = match std::fs::read(entry_path(dir, key)) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
        Err(e) => return Lookup::Damaged(format!("unreadable: {e}")),
    };
    match parse(&data) {
        Ok(entry) => Lookup::Hit(entry),
        Err(reason) => Lookup::Damaged(reason),
    }
}

fn parse(data: &[u8]) -> Result<Entry, String> {
    if data.len() < HEADER {
        return Err(format!("{} bytes, shorter than the {HEADER}-byte header", data.len()));
    }
    let (head, payload) = data.split_at(HEADER);
    if &head[..8] != MAGIC {
        return Err("not a kiln module cache entry (bad magic)".into());
    }
    let u32_at = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    if u32_at(8) != FORMAT {
        return Err(format!("format version {} (expected {FORMAT})", u32_at(8)));
    }
    let cubin = match u32_at(12) {
        KIND_CUBIN => true,
        KIND_PTX => false,
        k => return Err(format!("unknown image kind {k}")),
    };
    let mut len = [0u8; 8];
    len.copy_from_slice(&head[16..24]);
    let len = u64::from_le_bytes(len);
    if len != payload.len() as u64 {
        return Err(format!("payload of {} bytes where the header says {len} (truncated?)", payload.len()));
    }
    if Sha256::digest(payload).as_slice() != &head[24..56] {
        return Err("payload checksum mismatch (corrupted)".into());
    }
    Ok(Entry { cubin, bytes: payload.to_vec() })
}

/// Write entry `key` atomically: a temporary file in `dir`, renamed into place.
pub(crate) fn store(dir: &Path, key: &str, cubin: bool, bytes: &[u8]) -> Result<(), String> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let tmp = dir.join(format!(".{key}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    let mut head = Vec::with_capacity(HEADER);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&FORMAT.to_le_bytes());
    head.extend_from_slice(&(if cubin { KIND_CUBIN } else { KIND_PTX }).to_le_bytes());
    head.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    head.extend_from_slice(&Sha256::digest(bytes));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(&head)?;
        f.write_all(bytes)
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, entry_path(dir, key)));
    renamed.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}: {e}", entry_path(dir, key).display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kiln-cache-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn entries_round_trip_and_damage_is_detected() {
        let dir = temp_dir("roundtrip");
        let k = key(&[b"source", b"-arch=sm_90"]);
        assert!(matches!(load(&dir, &k), Lookup::Miss));
        let image: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        store(&dir, &k, true, &image).unwrap();
        match load(&dir, &k) {
            Lookup::Hit(e) => assert!(e.cubin && e.bytes == image),
            _ => panic!("stored entry not found"),
        }
        // Flip one payload byte: the checksum must catch it.
        let path = entry_path(&dir, &k);
        let mut data = std::fs::read(&path).unwrap();
        data[HEADER + 100] ^= 0xff;
        std::fs::write(&path, &data).unwrap();
        assert!(matches!(load(&dir, &k), Lookup::Damaged(r) if r.contains("checksum")));
        // Truncate: the length must catch it.
        std::fs::write(&path, &data[..HEADER + 10]).unwrap();
        assert!(matches!(load(&dir, &k), Lookup::Damaged(r) if r.contains("truncated")));
        std::fs::write(&path, b"garbage").unwrap();
        assert!(matches!(load(&dir, &k), Lookup::Damaged(_)));
        // A rewrite replaces the damaged entry, and no temporary file is left.
        store(&dir, &k, false, b"ptx\0").unwrap();
        assert!(matches!(load(&dir, &k), Lookup::Hit(e) if !e.cubin && e.bytes == b"ptx\0"));
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]).len(), 64);
    }
}
