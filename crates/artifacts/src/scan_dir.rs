//! Indexing an extracted artifact directory, never following a symlink.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::artifact::{Artifact, ArtifactLocation, EntrySource, Member, MemberKind};
use crate::identity::FileIdentity;
use crate::manifest::{MANIFEST_FILE, parse_manifest};
use crate::{ArtifactName, Error, Result};

/// Reads the manifest of `dir` and indexes every base directory.
pub(crate) fn index_dir(name: ArtifactName, dir: &Path) -> Result<Artifact> {
    let text = read_manifest(&dir.join(MANIFEST_FILE))?;
    let prefixes = parse_manifest(&name.to_string(), &text)?;
    let mut members = Vec::new();
    let mut missing_prefixes = Vec::new();
    for (index, prefix) in prefixes.iter().enumerate() {
        if let Some(base) = base_dir(dir, &name, prefix)? {
            walk(&base, "", index, &mut members)?;
        } else {
            missing_prefixes.push(prefix.clone());
        }
    }
    members.sort_by(|a, b| (&a.relpath, a.prefix).cmp(&(&b.relpath, b.prefix)));
    Ok(Artifact {
        name: Arc::new(name),
        location: ArtifactLocation::Dir(dir.to_path_buf()),
        prefixes,
        missing_prefixes,
        members,
    })
}

/// Whether an artifact directory has a manifest at `path`: `false` when
/// there is none; an error when it cannot be looked at (an unreadable
/// directory) or is not a regular file (a link is never followed).
pub(crate) fn has_manifest(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(meta) => Err(Error::ManifestNotAFile {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Reads a manifest that must be a regular file: opened without following
/// a link or blocking on a FIFO, then checked on the open file, so a
/// replacement made after discovery is refused too.
fn read_manifest(path: &Path) -> Result<String> {
    let not_a_file = |kind| Error::ManifestNotAFile {
        path: path.to_path_buf(),
        kind,
    };
    let mut file = open_no_follow(path).map_err(|e| {
        if is_symlink_refusal(&e) {
            not_a_file("symlink")
        } else {
            Error::io(path, e)
        }
    })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_a_file(kind_of(meta.file_type())));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| Error::io(path, e))?;
    Ok(text)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(unix)]
fn is_symlink_refusal(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Opens a reparse point itself, not its target; the file-type check on the
/// open handle then refuses it.
#[cfg(windows)]
fn open_no_follow(path: &Path) -> std::io::Result<fs::File> {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

#[cfg(windows)]
fn is_symlink_refusal(_: &std::io::Error) -> bool {
    false
}

/// The mode bits of an entry: the real ones on Unix; on Windows, which has
/// none, what an unpacked tar would give (directories searchable, files
/// writable unless read-only).
#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(windows)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    match (meta.is_dir(), meta.permissions().readonly()) {
        (true, _) => 0o755,
        (false, false) => 0o644,
        (false, true) => 0o444,
    }
}

/// The base directory of manifest line `line`, reached through real
/// directories only: every component is looked at with `lstat`, so a
/// symlinked component anywhere (`sub/x -> /elsewhere`) is refused, never
/// followed. `None` when a component does not exist (the line is skipped).
fn base_dir(dir: &Path, artifact: &ArtifactName, line: &str) -> Result<Option<PathBuf>> {
    let mut path = dir.to_path_buf();
    for component in line.split('/').filter(|c| !c.is_empty()) {
        path.push(component);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        if meta.is_dir() {
            continue;
        }
        let artifact = artifact.to_string();
        let line = line.to_owned();
        return Err(if meta.file_type().is_symlink() {
            Error::SymlinkInPrefix {
                path,
                artifact,
                line,
            }
        } else {
            Error::PrefixNotADirectory {
                path,
                artifact,
                line,
                kind: kind_of(meta.file_type()),
            }
        });
    }
    Ok(Some(path))
}

/// What a file type is, in words.
pub(crate) fn kind_of(file_type: fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_file() {
        "regular file"
    } else {
        special_kind(file_type)
    }
}

#[cfg(unix)]
fn special_kind(file_type: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "device"
    }
}

#[cfg(windows)]
fn special_kind(_: fs::FileType) -> &'static str {
    "special file"
}

fn walk(dir: &Path, rel: &str, prefix: usize, out: &mut Vec<Member>) -> Result<()> {
    let mut children: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| Error::io(dir, e))?;
    children.sort_by_key(fs::DirEntry::file_name);
    for child in children {
        let path = child.path();
        let file_name = child.file_name();
        let Some(file_name) = file_name.to_str() else {
            return Err(Error::NonUtf8Name { path });
        };
        crate::error::check_name(file_name, "name", || path.clone())?;
        let relpath = if rel.is_empty() {
            file_name.to_owned()
        } else {
            format!("{rel}/{file_name}")
        };
        let meta = fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
        let file_type = meta.file_type();
        let mode = mode_of(&meta);
        if file_type.is_symlink() {
            let target = fs::read_link(&path).map_err(|e| Error::io(&path, e))?;
            let Some(target) = target.to_str() else {
                return Err(Error::NonUtf8Name { path });
            };
            crate::error::check_name(target, "link text", || path.clone())?;
            out.push(Member {
                prefix,
                relpath,
                kind: MemberKind::Symlink(target.to_owned()),
                mode: 0o777,
                size: 0,
                source: None,
            });
        } else if file_type.is_dir() {
            out.push(Member {
                prefix,
                relpath: relpath.clone(),
                kind: MemberKind::Dir,
                mode,
                size: 0,
                source: None,
            });
            walk(&path, &relpath, prefix, out)?;
        } else if file_type.is_file() {
            out.push(Member {
                prefix,
                relpath,
                kind: MemberKind::File,
                mode,
                size: meta.len(),
                source: Some(EntrySource::File {
                    identity: FileIdentity::of_entry(&path, &meta)?,
                    path,
                    extracted_from: None,
                }),
            });
        } else {
            return Err(Error::UnsupportedFileType {
                path,
                kind: kind_of(file_type).into(),
            });
        }
    }
    Ok(())
}
