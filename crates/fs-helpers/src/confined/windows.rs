//! The confined directory on Windows, which has no `*at` calls: each
//! directory on the way is opened without following a reparse point,
//! refused when it is one, and held open without `FILE_SHARE_DELETE` for
//! as long as the handle lives, so none of them can be renamed or replaced
//! while an operation acts on the full path below them.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::windows::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
};

use super::{Entry, EntryKind, Refusal, Refused};
use crate::file_id::FileId;

/// How an existing file is opened.
#[derive(Debug, Clone, Copy)]
pub(super) enum Access {
    Read,
    Append,
    Write,
}

/// A directory, and every directory from the root down to it, held open.
#[derive(Debug)]
pub(super) struct Handle {
    path: PathBuf,
    guards: Vec<Arc<File>>,
}

/// Opens the directory at `path` for holding: data access (so the share
/// mode counts), sharing everything but deletion (so it cannot be renamed
/// or removed meanwhile), without following a reparse point unless
/// `follow`.
fn hold(path: &Path, follow: bool) -> io::Result<File> {
    let mut flags = FILE_FLAG_BACKUP_SEMANTICS;
    if !follow {
        flags |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(flags)
        .open(path)
}

fn is_reparse_point(meta: &fs::Metadata) -> bool {
    meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

impl Handle {
    pub(super) fn open_root(path: &Path) -> io::Result<Self> {
        let guard = hold(path, true)?;
        if !guard.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", path.display()),
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            guards: vec![Arc::new(guard)],
        })
    }

    pub(super) fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            path: self.path.clone(),
            guards: self.guards.clone(),
        })
    }

    pub(super) fn owner(&self) -> io::Result<Option<u32>> {
        Ok(None)
    }

    pub(super) fn as_file(&self) -> io::Result<File> {
        self.guards.last().expect("a root guard").try_clone()
    }

    pub(super) fn open_below(&self, _base: &Path, rel: &str) -> io::Result<Self> {
        let mut path = self.path.clone();
        let mut guards = self.guards.clone();
        for component in rel.split('/') {
            path.push(component);
            let guard = hold(&path, false)?;
            let meta = guard.metadata()?;
            if is_reparse_point(&meta) {
                return Err(Refused::error(rel, Refusal::SymbolicLink));
            }
            if !meta.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", path.display()),
                ));
            }
            guards.push(Arc::new(guard));
        }
        Ok(Self { path, guards })
    }

    pub(super) fn open_child_dir(&self, full: &Path, name: &str) -> io::Result<Self> {
        self.open_below(full, name)
    }

    pub(super) fn entry(&self, _full: &Path, name: &str) -> io::Result<Option<Entry>> {
        let path = self.path.join(name);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let kind = if is_reparse_point(&meta) || meta.file_type().is_symlink() {
            EntryKind::Symlink
        } else if meta.is_dir() {
            EntryKind::Dir
        } else if meta.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        Ok(Some(Entry {
            kind,
            id: FileId::of_entry(&path, &meta)?,
            len: meta.len(),
            owner: None,
        }))
    }

    pub(super) fn read_link(&self, _full: &Path, name: &str) -> io::Result<String> {
        fs::read_link(self.path.join(name))?
            .into_os_string()
            .into_string()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "link text is not Unicode"))
    }

    pub(super) fn open_file(&self, _full: &Path, name: &str, access: Access) -> io::Result<File> {
        let mut options = OpenOptions::new();
        match access {
            Access::Read => options.read(true),
            Access::Append => options.append(true),
            Access::Write => options.write(true),
        };
        let file = options
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.path.join(name))?;
        Ok(file)
    }

    pub(super) fn list(&self, _full: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(&self.path)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect()
    }

    pub(super) fn create_dir(&self, _full: &Path, name: &str, _mode: u32) -> io::Result<()> {
        fs::create_dir(self.path.join(name))
    }

    pub(super) fn create_new(&self, _full: &Path, name: &str, _mode: u32) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.path.join(name))
    }

    pub(super) fn rename_within(
        &self,
        from_full: &Path,
        from: &str,
        to_full: &Path,
        to: &str,
    ) -> io::Result<()> {
        self.rename_to(from_full, from, self, to_full, to)
    }

    pub(super) fn rename_to(
        &self,
        _from_full: &Path,
        from: &str,
        to_dir: &Handle,
        _to_full: &Path,
        to: &str,
    ) -> io::Result<()> {
        fs::rename(self.path.join(from), to_dir.path.join(to))
    }

    pub(super) fn remove(&self, _full: &Path, name: &str, dir: bool) -> io::Result<()> {
        let path = self.path.join(name);
        let meta = fs::symlink_metadata(&path)?;
        if dir {
            if is_reparse_point(&meta) {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is a link", path.display()),
                ));
            }
            return fs::remove_dir(&path);
        }
        match (is_reparse_point(&meta), meta.is_dir()) {
            // A link to a directory (or a junction) is removed as one.
            (true, true) => fs::remove_dir(&path),
            (false, true) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{} is a directory", path.display()),
            )),
            _ => fs::remove_file(&path),
        }
    }

    pub(super) fn remove_all(&self, full: &Path, name: &str) -> io::Result<()> {
        let path = self.path.join(name);
        let meta = fs::symlink_metadata(&path)?;
        if meta.is_dir() && !is_reparse_point(&meta) {
            // std removes a tree without following its links or junctions.
            fs::remove_dir_all(&path)
        } else {
            self.remove(full, name, false)
        }
    }

    pub(super) fn hard_link(
        &self,
        _source_full: &Path,
        source: &str,
        to_dir: &Handle,
        _link_full: &Path,
        link: &str,
    ) -> io::Result<()> {
        fs::hard_link(self.path.join(source), to_dir.path.join(link))
    }
}

pub(super) fn current_user() -> Option<u32> {
    None
}

pub(super) fn is_regular(file: &File) -> io::Result<bool> {
    let meta = file.metadata()?;
    Ok(meta.is_file() && !is_reparse_point(&meta))
}

pub(super) fn open_regular_path(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if is_regular(&file)? {
        Ok(file)
    } else {
        Err(Refused::error(
            &path.display().to_string(),
            Refusal::NotRegularFile,
        ))
    }
}
