//! Indexing an extracted artifact directory, never following a symlink.

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use crate::artifact::{Artifact, ArtifactLocation, Member, MemberKind, Source};
use crate::manifest::{MANIFEST_FILE, parse_manifest};
use crate::{ArtifactName, Error, Result};

/// Reads the manifest of `dir` and indexes every base directory.
pub(crate) fn index_dir(name: ArtifactName, dir: &Path) -> Result<Artifact> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = fs::read_to_string(&manifest_path).map_err(|e| Error::io(&manifest_path, e))?;
    let prefixes = parse_manifest(&name.to_string(), &text)?;
    let mut members = Vec::new();
    let mut missing_prefixes = Vec::new();
    for (index, prefix) in prefixes.iter().enumerate() {
        let base = dir.join(prefix);
        // A base directory must be a real directory: a symlink here could
        // point anywhere on the host.
        match fs::symlink_metadata(&base) {
            Ok(meta) if meta.is_dir() => walk(&base, "", index, &mut members)?,
            Ok(_) => {
                tracing::info!(artifact = %name, line = %prefix, "manifest line is not a directory; skipped");
                missing_prefixes.push(prefix.clone());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!(artifact = %name, line = %prefix, "manifest line names no directory; skipped");
                missing_prefixes.push(prefix.clone());
            }
            Err(e) => return Err(Error::io(&base, e)),
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
        let relpath = if rel.is_empty() {
            file_name.to_owned()
        } else {
            format!("{rel}/{file_name}")
        };
        let meta = fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
        let file_type = meta.file_type();
        let mode = meta.permissions().mode() & 0o7777;
        if file_type.is_symlink() {
            let target = fs::read_link(&path).map_err(|e| Error::io(&path, e))?;
            let Some(target) = target.to_str() else {
                return Err(Error::NonUtf8Name { path });
            };
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
                source: Some(Source::File(path)),
            });
        } else {
            let kind = if file_type.is_fifo() {
                "FIFO"
            } else if file_type.is_socket() {
                "socket"
            } else {
                "device"
            };
            return Err(Error::UnsupportedFileType {
                path,
                kind: kind.into(),
            });
        }
    }
    Ok(())
}
