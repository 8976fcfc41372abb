//! What the fuzz targets share: a scratch directory per process and the
//! way one input byte chooses how the rest reaches a reader.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How the bytes after the first reach a reader that expects a
/// compressed stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapping {
    /// Compressed by the target first, so mutations reach the tar inside.
    Compressed,
    /// Handed over as they are, so mutations reach the decoder.
    Raw,
}

/// Splits an input into its wrapping (from the first byte's low bit) and
/// payload.
pub fn split(data: &[u8]) -> Option<(Wrapping, u8, &[u8])> {
    let (&first, payload) = data.split_first()?;
    let wrapping = if first & 1 == 0 {
        Wrapping::Compressed
    } else {
        Wrapping::Raw
    };
    Some((wrapping, first >> 1, payload))
}

/// `payload` zstd-compressed (level 1: the target's time goes to the reader).
pub fn zstd(payload: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(payload, 1).expect("compressing into memory cannot fail")
}

/// `payload` in one xz stream (preset 0).
pub fn xz(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = liblzma::write::XzEncoder::new(&mut out, 0);
    encoder
        .write_all(payload)
        .expect("compressing into memory cannot fail");
    encoder
        .finish()
        .expect("compressing into memory cannot fail");
    out
}

/// A directory for this process's scratch files, removed with the process's
/// temporary directory (`TMPDIR`; `cargo xtask fuzz` points it at a tmpfs
/// when one exists).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("therock-fuzz-")
            .tempdir()
            .expect("a scratch directory")
            .keep()
    })
}

/// An empty directory inside [`scratch`], emptied first if a previous run
/// left it behind.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = scratch().join(name);
    if std::fs::symlink_metadata(&dir).is_ok() {
        remove_tree(&dir);
    }
    std::fs::create_dir(&dir).expect("create a scratch directory");
    dir
}

/// Removes `dir`, first making every directory in it writable (an input
/// may have unpacked read-only directories).
pub fn remove_tree(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // Each pass makes the directories it can see writable and listable;
    // the next one sees what they held.
    for _ in 0..64 {
        if std::fs::remove_dir_all(dir).is_ok() {
            return;
        }
        for entry in walk(dir) {
            if std::fs::symlink_metadata(&entry).is_ok_and(|m| m.is_dir()) {
                let _ = std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755));
            }
        }
    }
    std::fs::remove_dir_all(dir).expect("remove a scratch directory");
}

/// Every path under `root` (not following symlinks), `root` first.
pub fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let path = out[i].clone();
        i += 1;
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            children.sort();
            out.extend(children);
        }
    }
    out
}
