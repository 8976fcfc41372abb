//! What the checker found: per ELF file, where each `DT_NEEDED` resolves.

use std::fmt;

use crate::search_path::SearchDir;
use elf_surgery::Imports;

/// The result of [`crate::LinkChecker::check`]: every host ELF file with
/// its needed libraries, sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinkReport {
    /// Host ELF files (shared objects and dynamic executables), sorted by
    /// path then origin.
    pub files: Vec<ElfReport>,
    /// ELF files that could not be parsed.
    pub unreadable: Vec<Unreadable>,
}

/// One host ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ElfReport {
    /// Where it is in the tree.
    pub path: String,
    /// Where it comes from when the tree is virtual (a wheel's file name).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub origin: Option<String>,
    /// `DT_SONAME` (not in the JSON form: reports keep their shape).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub soname: Option<String>,
    /// Raw `e_machine` (not in the JSON form); policy audits compare it
    /// with the wheel's architecture.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub machine: Option<u16>,
    /// Which dynamic entry the loader searches (`RUNPATH` wins over `RPATH`).
    pub search_kind: Option<SearchKind>,
    /// The search path entries, expanded for this file.
    pub search_dirs: Vec<SearchDir>,
    /// Every `DT_NEEDED` entry, in file order.
    pub needed: Vec<Needed>,
    /// What the file imports, when the checker read it
    /// ([`crate::LinkChecker::with_imports`]); policy audits use it.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub imports: Option<Imports>,
}

/// Which dynamic entry holds the search path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SearchKind {
    /// `DT_RPATH`.
    Rpath,
    /// `DT_RUNPATH`.
    Runpath,
}

/// One `DT_NEEDED` entry and where it resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Needed {
    /// The soname as written in the file.
    pub name: String,
    /// Where it resolves.
    pub resolution: Resolution,
}

/// Where a needed library comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum Resolution {
    /// A file of the tree, found through the search path.
    Tree {
        /// Its path in the tree.
        path: String,
    },
    /// A system library the policy allows.
    System,
    /// A library the release deliberately leaves to the system although
    /// no policy allows it ([`crate::SystemPolicy::with_excluded`]).
    Excluded,
    /// The dynamic loader.
    Loader,
    /// Nothing provides it.
    Unresolved,
}

/// An ELF file whose structures could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Unreadable {
    /// Where it is in the tree.
    pub path: String,
    /// The wheel it comes from, for a virtual tree.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub origin: Option<String>,
    /// What the ELF reader reported.
    pub reason: String,
}

/// One needed library nothing provides, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unresolved<'a> {
    /// The file that needs it.
    pub file: &'a ElfReport,
    /// The soname.
    pub name: &'a str,
}

impl fmt::Display for Unresolved<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.path)?;
        if let Some(origin) = &self.file.origin {
            write!(f, " (in {origin})")?;
        }
        write!(f, ": NEEDED {} not found", self.name)?;
        // Each directory once, in search order (`$ORIGIN/../lib` and the
        // entry the build appended can name the same one).
        let mut searched: Vec<&str> = Vec::new();
        for dir in &self.file.search_dirs {
            if let SearchDir::Tree(dir) = dir
                && !searched.contains(&dir.as_str())
            {
                searched.push(dir);
            }
        }
        if searched.is_empty() {
            write!(f, " (no search path inside the tree)")?;
        } else {
            write!(f, " in {}", searched.join(", "))?;
        }
        write!(
            f,
            ", and it is neither an allowed system library nor the loader"
        )
    }
}

impl LinkReport {
    /// Every needed library nothing provides, in file order.
    pub fn unresolved(&self) -> impl Iterator<Item = Unresolved<'_>> {
        self.files.iter().flat_map(|file| {
            file.needed
                .iter()
                .filter(|n| n.resolution == Resolution::Unresolved)
                .map(move |n| Unresolved {
                    file,
                    name: &n.name,
                })
        })
    }

    /// Whether every needed library resolves and every ELF file parsed.
    pub fn is_ok(&self) -> bool {
        self.unreadable.is_empty() && self.unresolved().next().is_none()
    }

    /// How many `DT_NEEDED` entries were checked.
    pub fn needed_count(&self) -> usize {
        self.files.iter().map(|f| f.needed.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unresolved_entry_names_each_directory_searched_once() {
        let file = ElfReport {
            path: "pkg/bin/tool".into(),
            origin: None,
            soname: None,
            machine: None,
            search_kind: Some(SearchKind::Runpath),
            search_dirs: ["pkg/lib", "pkg/lib", "/opt/x", "pkg/lib/llvm"]
                .map(|d| {
                    if d.starts_with('/') {
                        SearchDir::Outside(d.into())
                    } else {
                        SearchDir::Tree(d.into())
                    }
                })
                .to_vec(),
            needed: vec![Needed {
                name: "libz.so.1".into(),
                resolution: Resolution::Unresolved,
            }],
            imports: None,
        };
        let report = LinkReport {
            files: vec![file],
            unreadable: Vec::new(),
        };
        let text: Vec<String> = report.unresolved().map(|u| u.to_string()).collect();
        assert_eq!(
            text,
            [
                "pkg/bin/tool: NEEDED libz.so.1 not found in pkg/lib, pkg/lib/llvm, and it is \
              neither an allowed system library nor the loader"
            ]
        );
    }
}
