//! No host ELF file of a Linux runtime wheel searches an absolute
//! directory: such an entry names a directory of the machine that built
//! it, and as `DT_RPATH` it is searched before `LD_LIBRARY_PATH` for the
//! file and everything it loads, so any machine where that directory
//! exists (or can be made) supplies libraries to the installed packages.
//! The build leaves these entries out unless told to keep them
//! (docs/behaviour.md#search-paths). Read from the ELF-links check's report.

use link_check::{LinkReport, SearchDir, SearchKind, WheelSetTree};

/// One problem per absolute entry of each file; `None` when the links of
/// the Linux wheels could not be read (the ELF-links check says why) or
/// the release has none.
pub(crate) fn check(linux: Option<&(WheelSetTree, LinkReport)>) -> Option<Vec<String>> {
    let (_, report) = linux?;
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
                problems.push(format!(
                    "{} (in {}): its {tag} searches the absolute directory {entry}, a directory \
                     of the build host; rebuild without --keep-absolute-search-paths (a file the \
                     build does not edit, 32-bit or another machine's, must be left out of the \
                     artifacts)",
                    file.path,
                    file.origin.as_deref().unwrap_or("?")
                ));
            }
        }
    }
    Some(problems)
}
