//! A file named as a public runtime library must be one.
//!
//! `rocm_sdk.find_libraries` and `preload_libraries` locate the libraries
//! of the library table by file name; an empty file, a text file or another
//! machine's ELF under such a name would be packaged, pass every check by
//! name and fail only when a user loads it. So the name is checked against
//! the bytes here, before anything is written.

use artifacts::{Catalog, Entry, EntryKind, Resolution};
use dist_info::library::{Library, all_libraries};
use dist_info::package::PackageKind;
use dist_info::requirement::Platform;

use crate::error::Error;
use crate::plan::SourceRef;
use crate::survey::{FileClass, SourceSurvey};

/// One library-table pattern of a platform package. It is matched as the
/// table's own patterns are everywhere ([`Library::matches`]: `?` is one
/// character, as Python's `fnmatch` has it), not with the include/exclude
/// glob language of artifact filters, where `?` is a run.
struct Pattern {
    library: Library,
    platform: Platform,
    /// `dir/pattern`, for messages.
    text: String,
}

impl Pattern {
    fn matches(&self, relpath: &str) -> bool {
        self.library.matches(self.platform, relpath)
    }
}

/// The patterns of the libraries `kind` ships on the platform.
fn patterns(kind: PackageKind, windows: bool) -> Vec<Pattern> {
    let platform = if windows {
        Platform::Windows
    } else {
        Platform::Linux
    };
    all_libraries()
        .into_iter()
        .filter(|l| l.package == kind)
        .filter_map(|library| {
            let (dir, name) = library.location(platform)?;
            let text = format!("{dir}/{name}");
            Some(Pattern {
                library,
                platform,
                text,
            })
        })
        .collect()
}

/// Refuses the first selected entry of `catalog` whose name matches a
/// library-table pattern of `kind` but whose bytes (its link target's, for
/// a link) are not a non-empty shared library of the platform: an ELF
/// shared object of a host machine, or a PE DLL for a Windows tag.
pub(crate) fn check_runtime_libraries(
    catalog: &Catalog,
    survey: &SourceSurvey,
    kind: PackageKind,
    windows: bool,
) -> Result<(), Error> {
    let patterns = patterns(kind, windows);
    if patterns.is_empty() {
        return Ok(());
    }
    for entry in catalog.entries() {
        let Some(pattern) = patterns.iter().find(|p| p.matches(entry.relpath())) else {
            continue;
        };
        let file = match entry.kind() {
            EntryKind::File => entry,
            EntryKind::Symlink {
                resolution: Resolution::File(target),
                ..
            } => match catalog.tree_get(target) {
                Some(file) => file,
                None => continue,
            },
            // Directories and dangling links ship no bytes under the name.
            _ => continue,
        };
        let class = survey.of_or_read(file)?;
        if let Some(reason) = defect(file.size(), class.as_ref(), windows) {
            return Err(Error::NotALibrary {
                file: describe(file),
                name: entry.relpath().to_owned(),
                library: pattern.library.shortname.clone(),
                pattern: pattern.text.clone(),
                reason,
            });
        }
    }
    Ok(())
}

/// Why a file cannot be the library its name says, if it cannot.
fn defect(size: u64, class: Option<&FileClass>, windows: bool) -> Option<&'static str> {
    if size == 0 {
        return Some("it is empty");
    }
    let class = class?;
    if windows {
        return match class {
            FileClass::WindowsImage { dll: true } => None,
            FileClass::WindowsImage { dll: false } => Some("it is a Windows program, not a DLL"),
            _ => Some("it is not a Windows DLL (no PE header)"),
        };
    }
    match class {
        FileClass::SharedObject { .. } => None,
        FileClass::Executable | FileClass::StaticExecutable => {
            Some("it is an ELF executable, not a shared library")
        }
        FileClass::DeviceCode => {
            Some("it is ELF for another machine or not loadable (an object file or device code)")
        }
        FileClass::Script => Some("it is a script, not an ELF shared library"),
        FileClass::WindowsImage { .. } => {
            Some("it is a Windows PE file, not an ELF shared library")
        }
        FileClass::Data => Some("it is not an ELF file"),
    }
}

/// The file as the user finds it: on disk, or a member of an archive.
pub(crate) fn describe(file: &Entry) -> String {
    SourceRef::of(file).map_or_else(
        || format!("{} in {}", file.relpath(), file.artifact()),
        |source| source.describe(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_patterns_name_the_table_directories() {
        let linux = patterns(PackageKind::Core, false);
        let hip = linux
            .iter()
            .find(|p| p.library.shortname == "amdhip64")
            .unwrap();
        assert_eq!(hip.text, "lib/libamdhip64.so*");
        assert!(hip.matches("lib/libamdhip64.so.7.1.0"));
        assert!(!hip.matches("lib/llvm/lib/libamdhip64.so.7"));
        let windows = patterns(PackageKind::Core, true);
        assert!(windows.iter().any(|p| p.text == "bin/amdhip64*.dll"));
        assert!(patterns(PackageKind::Device, false).is_empty());
    }

    #[test]
    fn only_non_empty_platform_libraries_pass() {
        let so = FileClass::SharedObject { soname: None };
        let dll = FileClass::WindowsImage { dll: true };
        assert_eq!(defect(10, Some(&so), false), None);
        assert_eq!(defect(10, Some(&dll), true), None);
        assert_eq!(defect(0, Some(&so), false), Some("it is empty"));
        assert!(defect(10, Some(&FileClass::Data), false).is_some());
        assert!(defect(10, Some(&FileClass::Executable), false).is_some());
        assert!(defect(10, Some(&FileClass::DeviceCode), false).is_some());
        assert!(defect(10, Some(&so), true).is_some());
        assert!(defect(10, Some(&FileClass::WindowsImage { dll: false }), true).is_some());
    }

    /// The check of a library's bytes selects the files the record of the
    /// distribution's libraries lists: a `?` of the table is one character
    /// for both, not the filter language's run.
    #[test]
    fn a_question_mark_of_the_table_is_one_character() {
        let library = Library {
            shortname: "foo".into(),
            package: PackageKind::Core,
            linux_glob: Some("libfoo?.so".into()),
            windows_glob: None,
            posix_relpath: "lib".into(),
            windows_relpath: "bin".into(),
            optional: false,
        };
        let pattern = Pattern {
            library: library.clone(),
            platform: Platform::Linux,
            text: "lib/libfoo?.so".into(),
        };
        for relpath in ["lib/libfoo1.so", "lib/libfoo12.so", "lib/libfoo.so"] {
            assert_eq!(
                pattern.matches(relpath),
                library.matches(Platform::Linux, relpath),
                "{relpath}"
            );
        }
        assert!(pattern.matches("lib/libfoo1.so"));
        assert!(!pattern.matches("lib/libfoo12.so"));
        // Artifact filters keep the reference's language, where it is a run.
        assert!(artifacts::Glob::new("lib/libfoo?.so").matches("lib/libfoo12.so"));
    }
}
