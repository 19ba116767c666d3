//! The on-disk cache of compiled modules.
//!
//! One file per module, named by the SHA-256 of everything that determines
//! it (source, options, target architecture, NVRTC version, entry point).
//! A file is a 56-byte header (magic, format version, image kind, payload
//! length, SHA-256 of the payload) and the CUBIN or PTX image. A damaged
//! entry (truncated, overwritten) fails its length or checksum and is
//! compiled again and replaced; so is one the driver refuses to load. An
//! image is stored only after the driver has loaded it (see `compile.rs`).
//!
//! Writing and reading hold up in a directory others can write to:
//!
//! - An entry is written to a temporary file in the same directory, created
//!   under an unpredictable name that must not exist yet (`O_EXCL`, so a
//!   symbolic link planted there is an error, never followed), readable by
//!   its owner only, then renamed into place, so a reader sees a whole entry
//!   or none.
//! - An entry that is a symbolic link is refused (and replaced), as it could
//!   lead anywhere outside the directory.
//! - Temporary files a killed process left behind are removed once they are
//!   an hour old, when the cache is opened or written.
//!
//! On by default, in `dirs::cache_dir()/kiln/nvrtc`; `KILN_CACHE_DIR` moves
//! it and `KILN_CACHE=0` turns it off. The key does not cover the contents of
//! included headers: after editing a header under an include path, clear the
//! directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"KILNNVRT";
const FORMAT: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8 + 32;
const KIND_CUBIN: u32 = 1;
const KIND_PTX: u32 = 2;
/// How temporary files end; they start with `.` and the entry's key.
const TMP_SUFFIX: &str = ".tmp";
/// How old a temporary file must be to be taken for one a killed process
/// left: writing an entry takes milliseconds.
const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

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
    let data = match read_entry(&entry_path(dir, key)) {
        Ok(Some(d)) => d,
        Ok(None) => return Lookup::Miss,
        Err(reason) => return Lookup::Damaged(reason),
    };
    match parse(&data) {
        Ok(entry) => Lookup::Hit(entry),
        Err(reason) => Lookup::Damaged(reason),
    }
}

/// The bytes of the regular file at `path`, `None` when there is none. A
/// symbolic link is refused rather than followed; the file opened is checked
/// to be the one looked at, so a link swapped in between is refused too.
fn read_entry(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let missing = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let seen = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if missing(&e) => return Ok(None),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    if seen.file_type().is_symlink() {
        return Err("a symbolic link, which the cache never writes: refused".into());
    }
    if !seen.is_file() {
        return Err("not a regular file".into());
    }
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if missing(&e) => return Ok(None),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let opened = file.metadata().map_err(|e| format!("unreadable: {e}"))?;
        if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
            return Err("replaced while being opened: refused".into());
        }
    }
    let mut data = Vec::with_capacity(seen.len() as usize);
    file.read_to_end(&mut data).map_err(|e| format!("unreadable: {e}"))?;
    Ok(Some(data))
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
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    remove_stale_temporaries(dir);
    let path = entry_path(dir, key);
    let failed = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
    let mut head = Vec::with_capacity(HEADER);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&FORMAT.to_le_bytes());
    head.extend_from_slice(&(if cubin { KIND_CUBIN } else { KIND_PTX }).to_le_bytes());
    head.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    head.extend_from_slice(&Sha256::digest(bytes));
    // The `tempfile` crate makes the name unpredictable and creates the file
    // with `O_CREAT | O_EXCL`, mode 0600 (retrying on a clash): nothing
    // planted under the name is followed or truncated. On every error path
    // the temporary file is deleted when `tmp` drops.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{key}."))
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(|e| failed(&e))?;
    tmp.write_all(&head).and_then(|()| tmp.write_all(bytes)).map_err(|e| failed(&e))?;
    tmp.persist(&path).map_err(|e| failed(&e.error))?;
    Ok(())
}

/// Delete entry `key`, if there is one (a symbolic link is removed, not what
/// it points to). Best effort: an entry that stays is checked again when read.
pub(crate) fn remove(dir: &Path, key: &str) {
    let _ = std::fs::remove_file(entry_path(dir, key));
}

/// Remove the temporary files in `dir` that killed processes left: regular
/// files named `.<...>.tmp` last written more than [`STALE_AFTER`] ago.
/// Best effort; returns how many were removed.
pub(crate) fn remove_stale_temporaries(dir: &Path) -> usize {
    remove_temporaries_older_than(dir, STALE_AFTER, SystemTime::now())
}

fn remove_temporaries_older_than(dir: &Path, age: Duration, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name.to_str().is_some_and(|n| n.starts_with('.') && n.ends_with(TMP_SUFFIX));
        // `DirEntry::metadata` does not follow symbolic links: only regular
        // files, as the cache writes them, are candidates.
        let Ok(meta) = entry.metadata() else { continue };
        if !ours || !meta.is_file() {
            continue;
        }
        let stale = meta.modified().ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|a| a >= age);
        if stale && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
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

    /// A file in `dir` last written two hours ago.
    fn old_file(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        let file = std::fs::File::create(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(2 * 60 * 60)).unwrap();
        path
    }

    #[test]
    fn temporaries_of_killed_processes_are_removed() {
        let dir = temp_dir("stale");
        std::fs::create_dir_all(&dir).unwrap();
        let k = key(&[b"stale"]);
        // Left by killed writers: the naming of earlier versions, and today's.
        let stale = [old_file(&dir, &format!(".{k}.4242.0.tmp")), old_file(&dir, &format!(".{k}.Xa9Qz2.tmp"))];
        // Not temporaries, or not stale: kept.
        let other_entry = old_file(&dir, &format!("{}.kmod", key(&[b"other"])));
        let notes = old_file(&dir, "notes.tmp");
        let in_progress = dir.join(format!(".{k}.Rt5Mw1.tmp"));
        std::fs::write(&in_progress, b"being written").unwrap();
        store(&dir, &k, true, b"image").unwrap();
        for path in &stale {
            assert!(!path.exists(), "{} left behind", path.display());
        }
        for path in [&other_entry, &notes, &in_progress] {
            assert!(path.exists(), "{} removed", path.display());
        }
        // Opening the cache sweeps too (without writing anything).
        let again = old_file(&dir, &format!(".{k}.Lm3Ht7.tmp"));
        assert_eq!(remove_stale_temporaries(&dir), 1);
        assert!(!again.exists() && in_progress.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn temporary_files_do_not_follow_links_planted_at_their_names() {
        let dir = temp_dir("planted");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = temp_dir("planted-victim");
        std::fs::write(&victim, b"precious").unwrap();
        let k = key(&[b"planted"]);
        // Links at the names a writer in this process would once have chosen.
        for n in 0..256 {
            let name = format!(".{k}.{}.{n}.tmp", std::process::id());
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        store(&dir, &k, true, b"image").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "a planted link was written through");
        assert!(std::fs::symlink_metadata(entry_path(&dir, &k)).unwrap().is_file());
        assert!(matches!(load(&dir, &k), Lookup::Hit(e) if e.bytes == b"image"));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&victim);
    }

    #[cfg(unix)]
    #[test]
    fn entries_that_are_symbolic_links_are_refused_and_replaced() {
        let (dir, elsewhere) = (temp_dir("link"), temp_dir("link-elsewhere"));
        std::fs::create_dir_all(&dir).unwrap();
        let k = key(&[b"link"]);
        // A well-formed entry outside the cache, linked in under the key.
        store(&elsewhere, &k, true, b"planted image").unwrap();
        std::os::unix::fs::symlink(entry_path(&elsewhere, &k), entry_path(&dir, &k)).unwrap();
        assert!(matches!(load(&dir, &k), Lookup::Damaged(r) if r.contains("symbolic link")));
        // Writing the entry replaces the link, not what it points to.
        store(&dir, &k, true, b"compiled here").unwrap();
        assert!(std::fs::symlink_metadata(entry_path(&dir, &k)).unwrap().is_file());
        assert!(matches!(load(&dir, &k), Lookup::Hit(e) if e.bytes == b"compiled here"));
        assert!(matches!(load(&elsewhere, &k), Lookup::Hit(e) if e.bytes == b"planted image"));
        // Removing an entry that is a link removes the link only.
        std::fs::remove_file(entry_path(&dir, &k)).unwrap();
        std::os::unix::fs::symlink(entry_path(&elsewhere, &k), entry_path(&dir, &k)).unwrap();
        remove(&dir, &k);
        assert!(matches!(load(&dir, &k), Lookup::Miss));
        assert!(entry_path(&elsewhere, &k).exists());
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]).len(), 64);
    }
}
