//! [`DirTree`]: a directory on disk, for example an installed site-packages.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use elf_surgery::{ElfFile, Imports};
use rayon::prelude::*;

use crate::Error;
use crate::report::Unreadable;
use crate::tree::{ELF_MAGIC, FileTree, Scan, ScanDepth, TreeElf, read_elf};
use fs_helpers::error_chain::Chain;

/// A directory on disk.
///
/// Opening lists the regular files once (not following directory links);
/// hard links to one file (the devel tree links every runtime file) are
/// parsed once and reported under each of their paths. Lookups follow links
/// the way the loader does.
#[derive(Debug, Clone)]
pub struct DirTree {
    root: PathBuf,
    /// Regular files (relative path) grouped by inode, sorted.
    files: Vec<(String, fs_helpers::file_id::FileId)>,
}

impl DirTree {
    /// Lists the regular files under `root`.
    pub fn open(root: &Path) -> Result<Self, Error> {
        let meta = fs::metadata(root).map_err(Error::io(root))?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory {
                path: root.to_owned(),
            });
        }
        let mut files = Vec::new();
        walk(root, "", &mut files)?;
        files.sort();
        Ok(Self {
            root: root.to_owned(),
            files,
        })
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many regular files the tree holds.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

fn walk(
    dir: &Path,
    rel: &str,
    out: &mut Vec<(String, fs_helpers::file_id::FileId)>,
) -> Result<(), Error> {
    for entry in fs::read_dir(dir).map_err(Error::io(dir))? {
        let entry = entry.map_err(Error::io(dir))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            tracing::debug!("skipping non-UTF-8 name in {}", dir.display());
            continue;
        };
        let rel_path = crate::search_path::join(rel, &name);
        let path = entry.path();
        let meta = entry.metadata().map_err(Error::io(&path))?;
        if meta.is_dir() {
            walk(&path, &rel_path, out)?;
        } else if meta.is_file() {
            let id =
                fs_helpers::file_id::FileId::of_entry(&path, &meta).map_err(Error::io(&path))?;
            out.push((rel_path, id));
        }
    }
    Ok(())
}

impl FileTree for DirTree {
    fn contains_file(&self, path: &str) -> bool {
        self.root.join(path).is_file()
    }

    fn scan(
        &self,
        select: &(dyn Fn(&str) -> bool + Sync),
        depth: ScanDepth,
    ) -> Result<Scan, Error> {
        let mut by_inode: BTreeMap<fs_helpers::file_id::FileId, Vec<&str>> = BTreeMap::new();
        for (path, inode) in &self.files {
            if select(path) {
                by_inode.entry(*inode).or_default().push(path);
            }
        }
        let groups: Vec<Vec<&str>> = by_inode.into_values().collect();
        let parsed: Vec<Result<Group<'_>, Error>> = groups
            .into_par_iter()
            .map(|paths| {
                let full = self.root.join(paths[0]);
                Ok(parse_file(&full, depth)?.map(|p| (paths, p)))
            })
            .collect();
        let mut scan = Scan::default();
        for group in parsed {
            let Some((paths, parsed)) = group? else {
                continue;
            };
            for path in paths {
                match &parsed {
                    Ok((elf, imports)) => scan.files.push(TreeElf {
                        path: path.to_owned(),
                        origin: None,
                        elf: elf.clone(),
                        imports: imports.clone(),
                    }),
                    Err(reason) => scan.unreadable.push(Unreadable {
                        path: path.to_owned(),
                        origin: None,
                        reason: reason.clone(),
                    }),
                }
            }
        }
        scan.files.sort_by(|a, b| a.path.cmp(&b.path));
        scan.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(scan)
    }
}

/// A file's facts, or why its ELF structures could not be read.
type Parsed = Result<(ElfFile, Option<Imports>), String>;

/// The paths of one inode and, when it is ELF, its facts.
type Group<'a> = Option<(Vec<&'a str>, Parsed)>;

/// `None` for a file that is not ELF.
fn parse_file(path: &Path, depth: ScanDepth) -> Result<Option<Parsed>, Error> {
    let mut file = File::open(path).map_err(Error::io(path))?;
    if !starts_with_elf_magic(&mut file).map_err(Error::io(path))? {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(0)).map_err(Error::io(path))?;
    Ok(Some(
        read_elf(&mut file, depth).map_err(|e| Chain(&e).to_string()),
    ))
}

/// Reads the first four bytes (fewer from a shorter file): are they the
/// ELF magic?
pub(crate) fn starts_with_elf_magic(reader: &mut impl Read) -> std::io::Result<bool> {
    let mut magic = Vec::with_capacity(ELF_MAGIC.len());
    reader
        .take(ELF_MAGIC.len() as u64)
        .read_to_end(&mut magic)?;
    Ok(magic == ELF_MAGIC)
}
