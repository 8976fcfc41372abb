//! No host ELF file of a Linux wheel, nor of the devel tarball that
//! `rocm-sdk init` unpacks, searches an absolute directory: such an entry names a directory of the machine that built
//! it, and as `DT_RPATH` it is searched before `LD_LIBRARY_PATH` for the
//! file and everything it loads, so any machine where that directory
//! exists (or can be made) supplies libraries to the installed packages.
//! The build leaves these entries out unless told to keep them
//! (docs/behaviour.md#search-paths). The runtime wheels' files are read
//! from the ELF-links check's report, the devel tarball's here.

use std::io::{self, Read};

use dist_info::requirement::Platform;
use link_check::{LinkReport, ScanDepth, SearchDir, SearchKind, WheelSetTree, parse_streamed};

use super::release::{DistFile, Kind};
use super::{Release, devel_tarball};

/// One problem per absolute entry of each file, in the Linux runtime
/// wheels (from the ELF-links check's report) and in the devel tarballs of
/// Linux devel wheels; `None` when there is neither (the ELF-links check
/// says why the runtime wheels could not be read).
pub(crate) fn check(
    release: &Release,
    linux: Option<&(WheelSetTree, LinkReport)>,
) -> Option<Vec<String>> {
    let mut problems = linux.map(|(_, report)| runtime_problems(report));
    for file in release.unique() {
        let Kind::Wheel(wheel) = &file.kind else {
            continue;
        };
        if !wheel.readable || !file.installs_on(Platform::Linux) {
            continue;
        }
        for member in wheel
            .members
            .iter()
            .filter(|m| devel_tarball::is_devel_tarball(m))
        {
            let found = problems.get_or_insert_with(Vec::new);
            let origin = format!("{} ({member})", file.file_name);
            if let Err(e) = devel_problems(file, member, &origin, found) {
                found.push(format!(
                    "{origin}: cannot read the devel tarball's ELF files: {e}; rebuild the wheel"
                ));
            }
        }
    }
    problems
}

fn runtime_problems(report: &LinkReport) -> Vec<String> {
    let mut problems = Vec::new();
    for file in &report.files {
        let tag = match file.search_kind {
            Some(SearchKind::Rpath) => "RPATH",
            Some(SearchKind::Runpath) => "RUNPATH",
            None => continue,
        };
        for dir in &file.search_dirs {
            if let SearchDir::Outside(entry) = dir
                && entry.starts_with('/')
            {
                problems.push(search_path_problem(
                    &file.path,
                    file.origin.as_deref().unwrap_or("?"),
                    tag,
                    entry,
                ));
            }
        }
    }
    problems
}

/// The absolute entries of the ELF files in the devel tarball `member`;
/// a file that does not parse as ELF has no search path a loader uses.
fn devel_problems(
    file: &DistFile,
    member: &str,
    origin: &str,
    problems: &mut Vec<String>,
) -> io::Result<()> {
    devel_tarball::with_archive(&file.path, member, |archive| {
        for entry in archive.entries()? {
            let mut entry = entry?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = devel_tarball::clean_path(&entry.path_bytes());
            let mut magic = [0; 4];
            let size = entry.size();
            if size < 4 {
                continue;
            }
            entry.read_exact(&mut magic)?;
            if magic != *b"\x7fELF" {
                continue;
            }
            // Parsed in bounded memory (docs/verify.md#caps).
            let elf = match parse_streamed(&magic, &mut entry, size, ScanDepth::Links) {
                Ok((elf, _)) => elf,
                Err(link_check::ElfMemberError::TooLarge(size)) => {
                    problems.push(format!(
                        "{path} (in {origin}): an ELF file of {size} bytes, too large to read \
                         its search path"
                    ));
                    continue;
                }
                Err(link_check::ElfMemberError::Io(e)) => return Err(e),
                Err(_) => continue,
            };
            let (tag, search) = match (elf.runpath(), elf.rpath()) {
                (Some(runpath), _) => ("RUNPATH", runpath),
                (None, Some(rpath)) => ("RPATH", rpath),
                (None, None) => continue,
            };
            for dir in search.split(':').filter(|d| d.starts_with('/')) {
                problems.push(search_path_problem(&path, origin, tag, dir));
            }
        }
        Ok(())
    })
}

/// The `search-paths` problem of one absolute entry: the file at `path`
/// (its installed path) of `origin` (the wheel's file name, with the devel
/// tarball in it for a tarball member) searches `entry` through its `tag`
/// (`RPATH` or `RUNPATH`). A build that keeps such entries
/// (`--keep-absolute-search-paths`) says so in these words.
pub fn search_path_problem(path: &str, origin: &str, tag: &str, entry: &str) -> String {
    format!(
        "{path} (in {origin}): its {tag} searches the absolute directory {entry}, a directory \
         of the build host; rebuild without --keep-absolute-search-paths"
    )
}
