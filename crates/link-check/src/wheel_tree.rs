//! [`WheelSetTree`]: the union of a set of wheels, virtually installed into
//! one site-packages, read from the archives without unpacking, through the
//! workspace's one strict zip reader (`pypa_formats::zip_archive`). ELF
//! members are parsed in bounded memory: a stored one in place, a
//! deflated one in memory or spilled to a temporary file
//! ([`crate::parse_streamed`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use pypa_formats::zip_archive::{Method, ZipArchive};
use rayon::prelude::*;

use crate::Error;
use crate::elf_member::{ElfMemberError, Window, parse_streamed};
use crate::report::Unreadable;
use crate::tree::{ELF_MAGIC, FileTree, Scan, ScanDepth, TreeElf, read_elf};
use fs_helpers::error_chain::Chain;

/// Where a wheel member lands relative to site-packages, as an installer
/// places it: `{name}.data/purelib/x` and `{name}.data/platlib/x` land at
/// `x`; other `.data` schemes (scripts, headers, data) land outside
/// site-packages (`None`); directories are `None`; anything else lands at
/// its own path.
///
/// ```
/// use link_check::installed_path;
/// assert_eq!(installed_path("_rocm_sdk_core/lib/libamdhip64.so.7").as_deref(), Some("_rocm_sdk_core/lib/libamdhip64.so.7"));
/// assert_eq!(installed_path("rocm_sdk_core-7.1.0.data/platlib/x/y.so").as_deref(), Some("x/y.so"));
/// assert_eq!(installed_path("rocm_sdk_core-7.1.0.data/scripts/hipcc"), None);
/// ```
pub fn installed_path(member: &str) -> Option<String> {
    if member.ends_with('/') {
        return None;
    }
    let (top, rest) = member.split_once('/')?;
    // The wheel spec names the directory `{distribution}-{version}.data` exactly.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    let path = if top.ends_with(".data") {
        let (scheme, inner) = rest.split_once('/')?;
        if scheme != "purelib" && scheme != "platlib" {
            return None;
        }
        inner
    } else {
        member
    };
    crate::normalize(path).filter(|p| !p.is_empty())
}

/// A set of wheels seen as the site-packages they would install.
#[derive(Debug, Clone)]
pub struct WheelSetTree {
    wheels: Vec<PathBuf>,
    /// Installed path → the file names of the wheels that hold it.
    installed: BTreeMap<String, Vec<String>>,
}

impl WheelSetTree {
    /// Reads the member lists of `wheels` (central directories only).
    pub fn open<I, P>(wheels: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut wheels: Vec<PathBuf> = wheels.into_iter().map(|p| p.as_ref().to_owned()).collect();
        wheels.sort();
        let mut installed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for wheel in &wheels {
            let archive = open_archive(wheel)?;
            let name = file_name(wheel);
            for path in archive
                .entries()
                .iter()
                .filter_map(|entry| installed_path(entry.name()))
            {
                installed.entry(path).or_default().push(name.clone());
            }
        }
        Ok(Self { wheels, installed })
    }

    /// The wheels, sorted by path.
    pub fn wheels(&self) -> &[PathBuf] {
        &self.wheels
    }

    /// Every installed path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.installed.keys().map(String::as_str)
    }

    /// The file names of the wheels that install `path` (empty when none
    /// does), in wheel order.
    pub fn providers(&self, path: &str) -> &[String] {
        self.installed.get(path).map_or(&[], Vec::as_slice)
    }
}

/// How a wheel is named in reports: its file name.
fn file_name(wheel: &Path) -> String {
    wheel.file_name().map_or_else(
        || wheel.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn open_archive(wheel: &Path) -> Result<ZipArchive<BufReader<File>>, Error> {
    let file = File::open(wheel).map_err(Error::io(wheel))?;
    ZipArchive::new(BufReader::new(file)).map_err(Error::zip(wheel))
}

impl FileTree for WheelSetTree {
    fn contains_file(&self, path: &str) -> bool {
        self.installed.contains_key(path)
    }

    fn scan(
        &self,
        select: &(dyn Fn(&str) -> bool + Sync),
        depth: ScanDepth,
    ) -> Result<Scan, Error> {
        let per_wheel: Vec<Result<Scan, Error>> = self
            .wheels
            .par_iter()
            .map(|wheel| scan_wheel(wheel, select, depth))
            .collect();
        let mut scan = Scan::default();
        for one in per_wheel {
            let one = one?;
            scan.files.extend(one.files);
            scan.unreadable.extend(one.unreadable);
        }
        scan.files
            .sort_by(|a, b| (&a.path, &a.origin).cmp(&(&b.path, &b.origin)));
        scan.unreadable
            .sort_by(|a, b| (&a.path, &a.origin).cmp(&(&b.path, &b.origin)));
        Ok(scan)
    }
}

fn scan_wheel(
    wheel: &Path,
    select: &(dyn Fn(&str) -> bool + Sync),
    depth: ScanDepth,
) -> Result<Scan, Error> {
    let origin = Some(file_name(wheel));
    let mut archive = open_archive(wheel)?;
    let mut scan = Scan::default();
    for index in 0..archive.entries().len() {
        let entry = archive.entries()[index].clone();
        let Some(path) = installed_path(entry.name()).filter(|p| select(p)) else {
            continue;
        };
        let member_path = wheel.join(entry.name());
        let mut member = archive.reader(index).map_err(Error::io(&member_path))?;
        // Only the first bytes of a non-ELF member are decompressed.
        let mut head = Vec::with_capacity(ELF_MAGIC.len());
        (&mut member)
            .take(ELF_MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(Error::io(&member_path))?;
        if head != ELF_MAGIC {
            continue;
        }
        let parsed = if entry.method() == Method::Stored {
            // Parsed in place: the stored bytes are the file.
            drop(member);
            let range = entry.data_range();
            let mut window = Window::new(archive.get_mut(), range.start, entry.size());
            read_elf(&mut window, depth).map_err(ElfMemberError::from)
        } else {
            parse_streamed(&head, &mut member, entry.size(), depth)
        };
        match parsed {
            Ok((elf, imports)) => scan.files.push(TreeElf {
                path,
                origin: origin.clone(),
                elf,
                imports,
            }),
            Err(e) => scan.unreadable.push(Unreadable {
                path,
                origin: origin.clone(),
                reason: Chain(&e).to_string(),
            }),
        }
    }
    Ok(scan)
}
