//! A blob kept in a file beside the disk store (`results.sqlite3.trie` beside
//! `results.sqlite3`): state a later run reuses that is not made of entries, such as the
//! trie of repeated blocks (`session::repeat`). One blob per file, written whole, read
//! whole.
//!
//! Invariants:
//! * A file is a header, then the payload. The header holds:
//!   - [`MAGIC`] and [`SIDECAR_VERSION`];
//!   - the caller's 16-byte tag: what the blob is for, e.g. a digest of the settings it
//!     holds for;
//!   - the payload's length;
//!   - a checksum of the header and the payload: the first 16 bytes of
//!     blake3("smtproxy-sidecar" || header without the checksum || payload).
//!
//!   A reader returns the payload only when every one of these agrees. A file of
//!   another version or another tag is not this reader's: it is `None`, never misread.
//!   A file whose checksum or length does not agree is an error, never a payload. The
//!   payload's bytes are given back exactly as they were written.
//! * A write is atomic: the blob goes to a temporary file in the same directory, which is
//!   renamed over the old one. Several processes sharing a store each see a whole file,
//!   either theirs or another's: the last writer wins.
//! * Reading is bounded: a file whose payload is longer than the caller's bound is refused
//!   from its header, before anything else of it is read.
//! * A temporary file outlives its write only when its process was killed during it;
//!   [`remove_stale`] removes those whose process is gone (a writer's own, and any live
//!   process's, are left alone), so killed writers do not add up beside the store.

use super::CacheError;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The first bytes of every sidecar file.
pub const MAGIC: &[u8; 8] = b"SMTPXSC\0";
/// The header's layout (the byte after [`MAGIC`]).
pub const SIDECAR_VERSION: u8 = 1;
const CHECKSUM_LEN: usize = 16;
/// magic, version, tag, payload length, checksum: a file is this and its payload.
pub const HEADER_LEN: usize = 8 + 1 + 16 + 8 + CHECKSUM_LEN;

/// The sidecar file named `name` of the store at `store`: `<store>.<name>`.
pub fn path_for(store: &Path, name: &str) -> PathBuf {
    let mut p = store.as_os_str().to_owned();
    p.push(".");
    p.push(name);
    PathBuf::from(p)
}

fn checksum(head: &[u8], payload: &[u8]) -> [u8; CHECKSUM_LEN] {
    let mut h = blake3::Hasher::new();
    h.update(b"smtproxy-sidecar");
    h.update(head);
    h.update(payload);
    let mut out = [0u8; CHECKSUM_LEN];
    out.copy_from_slice(&h.finalize().as_bytes()[..CHECKSUM_LEN]);
    out
}

/// The header (without its checksum) for a payload of `len` bytes under `tag`.
fn head(tag: &[u8; 16], len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(MAGIC);
    h.push(SIDECAR_VERSION);
    h.extend_from_slice(tag);
    h.extend_from_slice(&len.to_le_bytes());
    h
}

/// Write `payload` under `tag` to `path`, replacing what was there.
pub fn write(path: &Path, tag: &[u8; 16], payload: &[u8]) -> Result<(), CacheError> {
    let mut head = head(tag, payload.len() as u64);
    let sum = checksum(&head, payload);
    head.extend_from_slice(&sum);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&head)?;
        f.write_all(payload)?;
        f.flush()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(written?)
}

/// Remove the temporary files (`<path>.tmp-PID`) that writers of `path` killed during a
/// write left: those whose process no longer exists.
pub fn remove_stale(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let pid = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|p| p.parse::<libc::pid_t>().ok());
        if pid.is_some_and(|p| p > 0 && !process_exists(p)) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a process `pid` exists (another user's too: `kill` then says EPERM).
fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The payload stored at `path` under `tag`: None when there is no file, or it was
/// written by another version or under another tag; an error when it is damaged or its
/// payload is longer than `max_len` bytes.
pub fn read(path: &Path, tag: &[u8; 16], max_len: usize) -> Result<Option<Vec<u8>>, CacheError> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut header = [0u8; HEADER_LEN];
    match f.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(CacheError::BadEntry("sidecar file cut short".into()))
        }
        Err(e) => return Err(e.into()),
    }
    if &header[..8] != MAGIC {
        return Err(CacheError::BadEntry("not a sidecar file".into()));
    }
    if header[8] != SIDECAR_VERSION || header[9..25] != tag[..] {
        return Ok(None);
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[25..33]);
    let len = u64::from_le_bytes(len);
    if len > max_len as u64 {
        return Err(CacheError::BadEntry(format!(
            "sidecar payload of {len} bytes, over the bound of {max_len}"
        )));
    }
    let mut payload = Vec::with_capacity(len as usize);
    f.take(len + 1).read_to_end(&mut payload)?;
    if payload.len() as u64 != len {
        return Err(CacheError::BadEntry(
            "sidecar file of the wrong length".into(),
        ));
    }
    if checksum(&header[..HEADER_LEN - CHECKSUM_LEN], &payload)[..]
        != header[HEADER_LEN - CHECKSUM_LEN..]
    {
        return Err(CacheError::BadEntry(
            "sidecar checksum does not match".into(),
        ));
    }
    Ok(Some(payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("smtproxy-sidecar-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        d
    }

    #[test]
    fn round_trip_and_replace() {
        let p = tmp("rt");
        let tag = [3u8; 16];
        assert_eq!(read(&p, &tag, 100).unwrap(), None);
        write(&p, &tag, b"first").unwrap();
        assert_eq!(read(&p, &tag, 100).unwrap().as_deref(), Some(&b"first"[..]));
        write(&p, &tag, b"").unwrap();
        assert_eq!(read(&p, &tag, 100).unwrap().as_deref(), Some(&b""[..]));
        // Another tag's reader does not take it; a bound below its length refuses it.
        assert_eq!(read(&p, &[4u8; 16], 100).unwrap(), None);
        write(&p, &tag, b"0123456789").unwrap();
        assert!(read(&p, &tag, 9).is_err());
        assert!(read(&p, &tag, 10).unwrap().is_some());
        let _ = std::fs::remove_file(&p);
    }

    /// The temporary file of a writer that is gone is removed; this process's, a file
    /// whose suffix is no process id, the file itself and another file's are kept.
    #[test]
    fn stale_temporary_files_of_gone_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.sqlite3.trie");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let name = |s: &str| dir.path().join(s);
        let files = [
            (format!("s.sqlite3.trie.tmp-{gone}"), false),
            (format!("s.sqlite3.trie.tmp-{}", std::process::id()), true),
            ("s.sqlite3.trie.tmp-x1".to_string(), true),
            ("s.sqlite3.trie".to_string(), true),
            (format!("t.sqlite3.trie.tmp-{gone}"), true),
        ];
        for (f, _) in &files {
            std::fs::write(name(f), b"x").unwrap();
        }
        remove_stale(&p);
        for (f, kept) in &files {
            assert_eq!(name(f).exists(), *kept, "{f}");
        }
    }

    /// Every flipped bit, every cut and every byte added is refused or read as another
    /// reader's file; never given back as a payload.
    #[test]
    fn damage_is_never_a_payload() {
        let p = tmp("damage");
        let tag = [7u8; 16];
        write(&p, &tag, b"payload bytes").unwrap();
        let good = std::fs::read(&p).unwrap();
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut b = good.clone();
                b[i] ^= 1 << bit;
                std::fs::write(&p, &b).unwrap();
                assert!(
                    !matches!(read(&p, &tag, 1000), Ok(Some(_))),
                    "byte {i} bit {bit}"
                );
            }
        }
        for cut in 0..good.len() {
            std::fs::write(&p, &good[..cut]).unwrap();
            assert!(!matches!(read(&p, &tag, 1000), Ok(Some(_))), "cut {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        std::fs::write(&p, &longer).unwrap();
        assert!(read(&p, &tag, 1000).is_err());
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn the_path_is_beside_the_store() {
        assert_eq!(
            path_for(Path::new("/a/results.sqlite3"), "trie"),
            PathBuf::from("/a/results.sqlite3.trie")
        );
    }
}
