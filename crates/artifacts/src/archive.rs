//! Indexing `.tar.zst` / `.tar.xz` artifacts in place, without extracting them.
//!
//! One sequential pass decompresses the archive and records, for every
//! member, its kind, mode, size and the offset of its data in the
//! decompressed stream. Readers later decompress again and skip to that
//! offset ([`crate::Source::open`]), or stream every wanted member of an
//! archive in one pass ([`crate::read_sources`]).

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;

use crate::artifact::{ArchiveRef, Artifact, ArtifactLocation, Member, MemberKind, Source};
use crate::manifest::{MANIFEST_FILE, parse_manifest};
use crate::{ArchiveFormat, ArtifactName, Error, Result};

/// The largest zstd window accepted: archives made with `zstd --long=31`
/// need it; memory is only used when an archive asks for it.
const ZSTD_WINDOW_LOG_MAX: u32 = 31;

/// The most memory an xz stream may ask for (its dictionary, declared in
/// its header): `xz -9` needs 65 MiB; a few bytes of header must not make
/// the reader allocate gigabytes.
pub(crate) const XZ_MEMORY_LIMIT: u64 = 512 << 20;

/// A decompressing reader over the whole tar stream of an archive.
pub(crate) fn decoder(archive: &ArchiveRef) -> Result<Box<dyn Read + Send>> {
    let file = File::open(&archive.path).map_err(|e| Error::io(&archive.path, e))?;
    Ok(match archive.format {
        ArchiveFormat::TarZst => {
            let mut d =
                zstd::stream::read::Decoder::new(file).map_err(|e| Error::io(&archive.path, e))?;
            d.window_log_max(ZSTD_WINDOW_LOG_MAX)
                .map_err(|e| Error::io(&archive.path, e))?;
            Box::new(d)
        }
        ArchiveFormat::TarXz => {
            // The .xz format only (not the legacy .lzma one, whose header can
            // ask for a 4 GiB dictionary), every concatenated stream, bounded.
            let stream = liblzma::stream::Stream::new_stream_decoder(
                XZ_MEMORY_LIMIT,
                liblzma::stream::CONCATENATED,
            )
            .map_err(|e| Error::io(&archive.path, e.into()))?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(
                BufReader::with_capacity(1 << 16, file),
                stream,
            ))
        }
    })
}

/// What the pass remembers of each member, for hard links.
struct Seen {
    kind: MemberKind,
    mode: u32,
    size: u64,
    source: Option<Source>,
}

/// Reads the manifest (the first member) and indexes every other member.
pub(crate) fn index_archive(name: ArtifactName, archive: Arc<ArchiveRef>) -> Result<Artifact> {
    let path = archive.path.clone();
    let bad = |reason: &str| Error::BadArchive {
        archive: path.clone(),
        reason: reason.to_owned(),
    };
    let io = |e| Error::io(&path, e);
    let mut tar = tar::Archive::new(decoder(&archive)?);
    let mut entries = tar.entries().map_err(io)?;

    let mut first = entries
        .next()
        .ok_or_else(|| bad("the archive is empty; its first member must be artifact_manifest.txt"))?
        .map_err(io)?;
    if member_name(&path, &first.path_bytes())? != MANIFEST_FILE
        || !first.header().entry_type().is_file()
    {
        return Err(bad(
            "the first member must be artifact_manifest.txt; rebuild the archive",
        ));
    }
    let mut text = String::new();
    first
        .read_to_string(&mut text)
        .map_err(|_| bad("artifact_manifest.txt is not UTF-8 text"))?;
    drop(first);
    let prefixes = parse_manifest(&name.to_string(), &text)?;

    let mut seen: HashMap<String, Seen> = HashMap::new();
    let mut members = Vec::new();
    let mut present = vec![false; prefixes.len()];
    for entry in entries {
        let entry = entry.map_err(io)?;
        let header = entry.header();
        let entry_type = header.entry_type();
        if entry_type.is_pax_global_extensions() {
            continue;
        }
        let full = member_name(&path, &entry.path_bytes())?;
        let outside = |member: String| Error::MemberOutsidePrefix {
            archive: path.clone(),
            member,
        };
        if ancestors(&full).any(|a| {
            matches!(
                seen.get(a),
                Some(Seen {
                    kind: MemberKind::Symlink(_),
                    ..
                })
            )
        }) {
            // Writing through a symlinked parent is the classic tar-slip.
            return Err(outside(full));
        }
        if full.is_empty() {
            if entry_type.is_dir() {
                continue;
            }
            return Err(outside(full));
        }
        let mode = header.mode().map_err(io)? & 0o7777;
        let this = if entry_type.is_file() || entry_type.is_contiguous() {
            let size = entry.size();
            Seen {
                kind: MemberKind::File,
                mode,
                size,
                source: Some(Source::ArchiveMember {
                    archive: Arc::clone(&archive),
                    offset: entry.raw_file_position(),
                    size,
                }),
            }
        } else if entry_type.is_dir() {
            Seen {
                kind: MemberKind::Dir,
                mode,
                size: 0,
                source: None,
            }
        } else if entry_type.is_symlink() {
            let raw = entry.link_name_bytes().unwrap_or_default();
            let Ok(text) = std::str::from_utf8(&raw) else {
                return Err(Error::NonUtf8Name {
                    path: inside(&path, &full),
                });
            };
            Seen {
                kind: MemberKind::Symlink(text.to_owned()),
                mode: 0o777,
                size: 0,
                source: None,
            }
        } else if entry_type.is_hard_link() {
            let raw = entry.link_name_bytes().unwrap_or_default();
            let target = member_name(&path, &raw)
                .map_err(|_| outside(format!("{full} -> {}", String::from_utf8_lossy(&raw))))?;
            if !prefixes.iter().any(|p| under_prefix(p, &target).is_some()) {
                return Err(outside(format!("{full} -> {target}")));
            }
            match seen.get(&target) {
                Some(t) if t.kind != MemberKind::Dir => Seen {
                    kind: t.kind.clone(),
                    mode: t.mode,
                    size: t.size,
                    source: t.source.clone(),
                },
                _ => {
                    return Err(bad(&format!(
                        "hard link {full} -> {target}: the target is not an earlier file in the archive"
                    )));
                }
            }
        } else {
            return Err(Error::UnsupportedFileType {
                path: inside(&path, &full),
                kind: format!("{entry_type:?}"),
            });
        };

        let mut placed = false;
        for (index, prefix) in prefixes.iter().enumerate() {
            if let Some(relpath) = under_prefix(prefix, &full) {
                present[index] = true;
                placed = true;
                members.push(Member {
                    prefix: index,
                    relpath: relpath.to_owned(),
                    kind: this.kind.clone(),
                    mode: this.mode,
                    size: this.size,
                    source: this.source.clone(),
                });
            }
        }
        if !placed {
            // `tar` run on a directory also stores the base directories and
            // their parents: harmless, so accepted when they are directories.
            let is_base_or_parent = prefixes.iter().enumerate().any(|(index, p)| {
                let hit = p == &full || p.starts_with(&format!("{full}/"));
                if p == &full {
                    present[index] = true;
                }
                hit
            });
            if !(is_base_or_parent && this.kind == MemberKind::Dir) {
                return Err(outside(full));
            }
        }
        seen.insert(full, this);
    }

    // A later member with the same name replaces an earlier one, as when
    // extracting; sorting is stable, so keep the last of each run.
    members.sort_by(|a, b| (&a.relpath, a.prefix).cmp(&(&b.relpath, b.prefix)));
    members.reverse();
    members.dedup_by(|later, earlier| {
        later.relpath == earlier.relpath && later.prefix == earlier.prefix
    });
    members.reverse();
    add_missing_parents(&name, &mut members);

    let missing_prefixes = prefixes
        .iter()
        .zip(&present)
        .filter(|(_, present)| !**present)
        .map(|(p, _)| {
            tracing::info!(artifact = %name, line = %p, "manifest line names no directory in the archive; skipped");
            p.clone()
        })
        .collect();
    Ok(Artifact {
        name: Arc::new(name),
        location: ArtifactLocation::Archive(archive),
        prefixes,
        missing_prefixes,
        members,
    })
}

/// Archives may omit directory members; a directory tree never does.
/// Supplying them keeps a tree and its archive identical.
fn add_missing_parents(name: &ArtifactName, members: &mut Vec<Member>) {
    let have: BTreeSet<(usize, &str)> = members
        .iter()
        .filter(|m| m.kind == MemberKind::Dir)
        .map(|m| (m.prefix, m.relpath.as_str()))
        .collect();
    let mut missing: BTreeSet<(usize, String)> = BTreeSet::new();
    for m in members.iter() {
        for parent in ancestors(&m.relpath) {
            if !have.contains(&(m.prefix, parent)) {
                missing.insert((m.prefix, parent.to_owned()));
            }
        }
    }
    if missing.is_empty() {
        return;
    }
    tracing::debug!(artifact = %name, count = missing.len(), "archive lacks directory members; assuming mode 755");
    members.extend(missing.into_iter().map(|(prefix, relpath)| Member {
        prefix,
        relpath,
        kind: MemberKind::Dir,
        mode: 0o755,
        size: 0,
        source: None,
    }));
    members.sort_by(|a, b| (&a.relpath, a.prefix).cmp(&(&b.relpath, b.prefix)));
}

/// `a/b/c` → `a/b`, `a`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || {
        let cut = rest.rfind('/')?;
        rest = &rest[..cut];
        Some(rest)
    })
}

/// The part of `full` below `prefix`, if any (`""` prefix: everything).
fn under_prefix<'a>(prefix: &str, full: &'a str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(full);
    }
    full.strip_prefix(prefix)?
        .strip_prefix('/')
        .filter(|r| !r.is_empty())
}

/// A member name, normalised: UTF-8, no leading `./`, no `.` or empty
/// segments, no trailing `/`. Absolute names and `..` are refused.
fn member_name(archive: &std::path::Path, raw: &[u8]) -> Result<String> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(Error::NonUtf8Name {
            path: inside(archive, &String::from_utf8_lossy(raw)),
        });
    };
    let outside = || Error::MemberOutsidePrefix {
        archive: archive.to_path_buf(),
        member: text.to_owned(),
    };
    if text.starts_with('/') {
        return Err(outside());
    }
    let mut segments = Vec::new();
    for s in text.split('/') {
        match s {
            "" | "." => {}
            ".." => return Err(outside()),
            s => segments.push(s),
        }
    }
    // Empty means the archive root (`./`), which only a directory may name.
    Ok(segments.join("/"))
}

fn inside(archive: &std::path::Path, member: &str) -> PathBuf {
    let mut s = archive.as_os_str().to_owned();
    s.push(format!("!/{member}"));
    PathBuf::from(s)
}
