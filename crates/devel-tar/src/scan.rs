//! First pass over the devel tar: read every header (no contents), refuse
//! anything unsafe, start checking the file against its RECORD row, and
//! build the model of the final tree. Nothing is written before this pass
//! has seen the whole archive.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use dist_info::devel_tree::{self, HardLinkNode, check_link_text};
use dist_info::windows_names;
use pypa_formats::installer::InstallCommand;

use crate::compression::{READ_BUFFER, TarCodec};
use crate::counting::CountingReader;
use crate::error::Error;
use crate::integrity::{DigestCheck, HashingReader, Recorded};
use crate::positioned::PositionedReader;
use crate::tree_names::TreeNames;

/// What a member is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir {
        mode: u32,
    },
    /// A regular file; its data is `size` bytes at `offset` in the plain
    /// tar stream (the file itself when the tar is uncompressed).
    File {
        mode: u32,
        mtime: u64,
        offset: u64,
        size: u64,
    },
    Symlink {
        target: String,
    },
    /// A tar hard link. Once the scan is complete, `target` is the regular
    /// member its chain ends at (the archive may chain hard links).
    HardLink {
        target: String,
    },
}

/// The tree the archive describes, by site-packages-relative path.
#[derive(Debug)]
pub(crate) struct Model {
    /// The tree's names; every member is in its root (`_rocm_sdk_devel{N}`).
    pub(crate) names: TreeNames,
    pub(crate) members: BTreeMap<String, Kind>,
    /// Parents of members that have no directory entry of their own.
    pub(crate) implicit_dirs: BTreeSet<String>,
}

impl Model {
    /// An empty tree named `names`.
    pub(crate) fn new(names: TreeNames) -> Self {
        Self {
            names,
            members: BTreeMap::new(),
            implicit_dirs: BTreeSet::new(),
        }
    }

    /// True when `path` is a directory of the final tree.
    pub(crate) fn is_dir(&self, path: &str) -> bool {
        path == self.names.root()
            || matches!(self.members.get(path), Some(Kind::Dir { .. }))
            || self.implicit_dirs.contains(path)
    }

    /// Every directory of the tree, parents before children.
    pub(crate) fn dirs(&self) -> Vec<(&str, u32)> {
        let mut dirs: Vec<(&str, u32)> = self
            .members
            .iter()
            .filter_map(|(p, k)| match k {
                Kind::Dir { mode } => Some((p.as_str(), *mode)),
                _ => None,
            })
            .chain(self.implicit_dirs.iter().map(|p| (p.as_str(), 0o755)))
            .collect();
        let root = self.names.root();
        if !self.members.contains_key(root) {
            dirs.push((root, 0o755));
        }
        dirs.sort_unstable();
        dirs
    }
}

/// Reads every header of the archive at `tar` (open as `file`), whose
/// members must all lie in the tree `names` gives, and returns its model,
/// or the first reason to refuse it. The file must match `recorded`, its
/// RECORD row: a compressed tar is hashed as it is decoded, an uncompressed
/// one by the returned check, still running, which the caller finishes
/// before the tree counts as unpacked. A mismatch is reported before any
/// other finding, since a changed file explains them all. With
/// `windows_names`, names Windows cannot hold are refused too
/// ([`check_windows_names`]).
pub(crate) fn scan(
    tar: &Path,
    file: &File,
    compression: TarCodec,
    recorded: &Recorded,
    names: &TreeNames,
    windows_names: bool,
) -> Result<(Model, DigestCheck), Error> {
    let size = file
        .metadata()
        .map_err(|e| Error::read("inspect", tar, e))?
        .len();
    recorded.check_size(tar, size)?;
    let (scanned, check) = if compression == TarCodec::None {
        let check = DigestCheck::start(file, tar, recorded)?;
        (read_plain_members(tar, file, names), check)
    } else {
        let mut raw = HashingReader::new(file, recorded);
        let scanned = read_members(tar, compression, &mut raw, names);
        raw.drain().map_err(|e| Error::read("read", tar, e))?;
        recorded.check(tar, &raw)?;
        (scanned, DigestCheck::passed())
    };
    let checked = scanned.and_then(|mut model| {
        check_tree(&mut model, tar)?;
        if windows_names {
            check_windows_names(&model, tar)?;
        }
        Ok(model)
    });
    match checked {
        Ok(model) => Ok((model, check)),
        Err(e) => Err(check.explain(e)),
    }
}

/// docs/behaviour.md#windows-names: no member or link text names a device
/// or holds a name Windows cannot hold, and no two members differ only in
/// case (`dist_info::windows_names`, the rule the build applies to a
/// Windows package). On Windows, opening `bin/aux.txt` opens the AUX device
/// and waits forever, and `share/CON/` cannot be created, so the whole
/// archive is judged before anything is opened or written.
fn check_windows_names(model: &Model, tar: &Path) -> Result<(), Error> {
    let refuse = |member: &str, reason: String| Error::UnsafeMember {
        tar: tar.to_path_buf(),
        member: member.to_owned(),
        reason,
    };
    for (path, kind) in &model.members {
        windows_names::check_path(path).map_err(|problem| refuse(path, problem.to_string()))?;
        if let Kind::Symlink { target } = kind {
            windows_names::check_path(target)
                .map_err(|problem| refuse(path, format!("link to {target:?}: {problem}")))?;
        }
    }
    if let Some((first, second)) =
        windows_names::case_collisions(model.members.keys().map(String::as_str))
            .into_iter()
            .next()
    {
        return Err(refuse(
            &second,
            format!("it differs from {first} only in case, and Windows takes them for one name"),
        ));
    }
    Ok(())
}

fn corrupt(tar: &Path, reason: String) -> Error {
    Error::CorruptTar {
        install: InstallCommand::default(),
        tar: tar.to_path_buf(),
        reason,
    }
}

/// Every member of the compressed archive read from `raw`, checked one by
/// one; the stream is read to its end, so the codec checks its trailer.
fn read_members(
    tar: &Path,
    compression: TarCodec,
    raw: &mut HashingReader<&File>,
    names: &TreeNames,
) -> Result<Model, Error> {
    let reader = compression
        .decoder(BufReader::with_capacity(READ_BUFFER, raw))
        .map_err(|e| corrupt(tar, e.to_string()))?;
    let mut counted = CountingReader::new(reader);
    let (model, end_of_last) = {
        let mut archive = tar::Archive::new(&mut counted);
        let entries = archive.entries().map_err(|e| corrupt(tar, e.to_string()))?;
        members(tar, entries, names)?
    };
    check_end_marker(tar, counted.count(), end_of_last)?;
    io::copy(&mut counted, &mut io::sink()).map_err(|e| corrupt(tar, e.to_string()))?;
    Ok(model)
}

/// Every member of the uncompressed archive in `file`, checked one by one;
/// only headers are read, the members' data is skipped.
fn read_plain_members(tar: &Path, file: &File, names: &TreeNames) -> Result<Model, Error> {
    let mut archive = tar::Archive::new(PositionedReader::new(file));
    let (model, end_of_last) = {
        let entries = archive
            .entries_with_seek()
            .map_err(|e| corrupt(tar, e.to_string()))?;
        members(tar, entries, names)?
    };
    check_end_marker(tar, archive.into_inner().furthest(), end_of_last)?;
    Ok(model)
}

/// The end-of-archive block must have been read (`read` bytes, the last
/// member ending at `end_of_last`): a plain tar cut at a member boundary
/// otherwise looks complete.
fn check_end_marker(tar: &Path, read: u64, end_of_last: u64) -> Result<(), Error> {
    if read < end_of_last + 512 {
        return Err(corrupt(tar, "the end-of-archive marker is missing".into()));
    }
    Ok(())
}

/// The model of `entries`, and where the data of the last member ends.
fn members<R: Read>(
    tar: &Path,
    entries: tar::Entries<'_, R>,
    names: &TreeNames,
) -> Result<(Model, u64), Error> {
    let mut model = Model::new(names.clone());
    let mut end_of_last = 0u64;
    for entry in entries {
        let entry = entry.map_err(|e| corrupt(tar, e.to_string()))?;
        let header = entry.header();
        let size = entry.size();
        end_of_last = entry.raw_file_position() + size.div_ceil(512) * 512;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let unsafe_member = |reason: String| Error::UnsafeMember {
            tar: tar.to_path_buf(),
            member: raw_name.clone(),
            reason,
        };
        let kind = match header.entry_type() {
            tar::EntryType::Directory => Kind::Dir {
                mode: header_mode(header) | 0o700,
            },
            tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File {
                mode: header_mode(header),
                mtime: header.mtime().unwrap_or(0),
                offset: entry.raw_file_position(),
                size,
            },
            tar::EntryType::Symlink => {
                let target = link_text(&entry).map_err(&unsafe_member)?;
                check_link_text(&target)
                    .map_err(|p| unsafe_member(format!("link to {target:?}: {p}")))?;
                Kind::Symlink { target }
            }
            tar::EntryType::Link => {
                let target = link_text(&entry).map_err(&unsafe_member)?;
                let target = member_path(&target, names)
                    .map_err(|r| unsafe_member(format!("hard link to {target:?}: {r}")))?;
                Kind::HardLink { target }
            }
            tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Char | tar::EntryType::Block => {
                return Err(unsafe_member("device file".into()));
            }
            tar::EntryType::Fifo => return Err(unsafe_member("named pipe".into())),
            other => {
                return Err(unsafe_member(format!("unsupported member type {other:?}")));
            }
        };
        let path = member_path(&raw_name, names).map_err(&unsafe_member)?;
        if path == names.root() && !matches!(kind, Kind::Dir { .. }) {
            return Err(unsafe_member(format!(
                "{} must be a directory",
                names.root()
            )));
        }
        match model.members.get(&path) {
            Some(Kind::Dir { .. }) if matches!(kind, Kind::Dir { .. }) => {}
            Some(_) => return Err(unsafe_member("appears twice in the archive".into())),
            None => {
                model.members.insert(path, kind);
            }
        }
    }
    Ok((model, end_of_last))
}

/// Parents must be directories (never a link, through which a later member
/// would be written outside the tree); hard links must lead to a regular
/// file of the tree (`dist_info::devel_tree::hard_link_source`).
fn check_tree(model: &mut Model, tar: &Path) -> Result<(), Error> {
    let refuse = |member: &str, reason: String| Error::UnsafeMember {
        tar: tar.to_path_buf(),
        member: member.to_owned(),
        reason,
    };
    let mut implicit = BTreeSet::new();
    for path in model.members.keys() {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let parent = &path[..end + i];
            end += i + 1;
            match model.members.get(parent) {
                None => {
                    implicit.insert(parent.to_owned());
                }
                Some(Kind::Dir { .. }) => {}
                Some(_) => {
                    return Err(refuse(
                        path,
                        format!("its parent {parent} is not a directory (a link or file)"),
                    ));
                }
            }
        }
    }
    // Each hard link is pointed at the regular member its chain ends at, so
    // later stages never follow chains.
    let mut sources = Vec::new();
    for (path, kind) in &model.members {
        if let Kind::HardLink { target } = kind {
            let member = |p: &str| match model.members.get(p) {
                Some(Kind::File { .. }) => HardLinkNode::File,
                Some(Kind::HardLink { target }) => HardLinkNode::HardLink(target),
                _ => HardLinkNode::Other,
            };
            let source = devel_tree::hard_link_source(path, target, member)
                .map_err(|problem| refuse(path, problem.to_string()))?;
            if source != target {
                sources.push((path.clone(), source.to_owned()));
            }
        }
    }
    for (path, source) in sources {
        model
            .members
            .insert(path, Kind::HardLink { target: source });
    }
    implicit.remove(model.names.root());
    model.implicit_dirs = implicit;
    Ok(())
}

/// A member name as a clean site-packages-relative path under the devel
/// root `names` gives (`dist_info::devel_tree::member_path`).
pub(crate) fn member_path(raw: &str, names: &TreeNames) -> Result<String, String> {
    devel_tree::member_path(raw, names)
        .map(str::to_owned)
        .map_err(|problem| problem.to_string())
}

fn header_mode(header: &tar::Header) -> u32 {
    // Never setuid/setgid/sticky from an archive.
    header.mode().unwrap_or(0o644) & 0o777
}

/// The link name of a symlink or hard link, as UTF-8.
fn link_text<R: Read>(entry: &tar::Entry<'_, R>) -> Result<String, String> {
    let bytes = entry
        .link_name_bytes()
        .ok_or_else(|| "link without a target".to_owned())?;
    String::from_utf8(bytes.into_owned()).map_err(|_| "link target is not UTF-8".to_owned())
}
