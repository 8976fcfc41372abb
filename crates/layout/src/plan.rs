//! The plan: every output file of every package, as data.

use artifacts::{Entry, EntrySource};
use dist_info::nonce::Nonce;
use dist_info::package::{Mode, PackageKind};
use dist_info::project_metadata::ProjectMetadata;
use serde::Serialize;

/// Where a planned file's bytes come from in the artifacts.
#[derive(Debug, Clone, Serialize)]
pub struct SourceRef {
    /// The artifact (`core-hip_lib_generic`).
    pub artifact: String,
    /// The relpath inside the merged tree.
    pub relpath: String,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits of the source.
    #[serde(skip)]
    pub mode: u32,
    /// Where to read the bytes.
    #[serde(skip)]
    pub source: EntrySource,
}

impl SourceRef {
    /// The file as the user finds it: on disk, or a member of an archive
    /// (as the build's errors and warnings name it).
    pub fn describe(&self) -> String {
        match self.source.archive() {
            // A member read in place or extracted for the build alike.
            Some(archive) => format!(
                "{} (member {} of {})",
                archive.path.display(),
                self.relpath,
                self.artifact
            ),
            None => self.source.path().display().to_string(),
        }
    }

    /// The source of a file entry (`None` for directories and links).
    pub fn of(entry: &Entry) -> Option<Self> {
        Some(Self {
            artifact: entry.artifact().to_string(),
            relpath: entry.relpath().to_owned(),
            size: entry.size(),
            mode: entry.mode(),
            source: entry.source()?.clone(),
        })
    }
}

/// Whether a file is a program to Windows, which has no mode bits: by its
/// extension (`.exe`, `.bat`, `.cmd`, `.com`, any case), as Python's
/// `os.stat` reports it there, and so as the wheels the reference writes
/// on Windows mark it. Builds for a Windows tag decide every file's mode
/// by this, so the same tree gives the same bytes on a Linux and a
/// Windows host (docs/windows.md).
pub fn windows_executable(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(_, extension)| {
        ["exe", "bat", "cmd", "com"]
            .iter()
            .any(|e| extension.eq_ignore_ascii_case(e))
    })
}

/// A search-path edit of one ELF file, decided by the planner whole
/// (docs/behaviour.md#search-paths): the entries added and left out, and
/// the tag the result is written as. The executor applies it as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchPathPatch {
    /// Entries appended after the existing ones (none for the devel tree,
    /// whose files keep their own relative entries).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub append: Vec<String>,
    /// Absolute entries of the source's search path left out: build
    /// host directories (empty with `--keep-absolute-search-paths`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
    /// Whether the result is one `DT_RPATH` (a `DT_RUNPATH` becomes one),
    /// else it keeps the file's own tag.
    pub force_rpath: bool,
}

impl SearchPathPatch {
    /// The edit `elf-surgery` applies.
    pub fn edit(&self) -> elf_surgery::SearchPathEdit {
        let edit = elf_surgery::SearchPathEdit::append(self.append.iter().map(String::as_str))
            .remove(self.remove.iter().map(String::as_str));
        if self.force_rpath {
            edit.force_rpath()
        } else {
            edit
        }
    }
}

/// How a runtime file is produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum Action {
    /// The source bytes unchanged.
    Copy {
        /// The source file.
        source: SourceRef,
    },
    /// The source with its search path edited (docs/behaviour.md#search-paths).
    PatchSearchPath {
        /// The source file.
        source: SourceRef,
        /// The edit.
        #[serde(flatten)]
        patch: SearchPathPatch,
    },
    /// A launcher executing `target`, relative to the launcher's directory
    /// (docs/behaviour.md#launchers).
    Launcher {
        /// The relative target.
        target: String,
    },
    /// Bytes the build writes itself (`_dist_info.json`, Python modules,
    /// `.devel_links/{T}.json`, `__init__.py`).
    Generated {
        /// What it is, for people reading the plan.
        what: String,
        /// The bytes.
        #[serde(skip)]
        bytes: Vec<u8>,
    },
    /// The devel tarball, written from the package's devel tree.
    DevelTar,
    /// The devel tarball's digest file, computed from the tarball once it
    /// is written (docs/devel-tar.md#the-digest-file).
    DevelDigest,
}

/// One file of a wheel.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedFile {
    /// The path inside the wheel (and inside site-packages).
    pub dest: String,
    /// Whether it is installed executable (0o755, else 0o644).
    pub executable: bool,
    /// How it is made.
    #[serde(flatten)]
    pub action: Action,
}

/// A name that a runtime package does not ship because the file's SONAME
/// is its real name (docs/behaviour.md#soname-rule).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SonameAlias {
    /// The relpath of the alias (`lib/libamdhip64.so`).
    pub relpath: String,
    /// The SONAME it stands for (`libamdhip64.so.7`), in the same directory.
    pub soname: String,
}

/// A runtime alias the core package ships (docs/behaviour.md#runtime-aliases):
/// a tiny shared object named `libX.so` standing for a library of the set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeAlias {
    /// Its path in the wheel (`_rocm_sdk_core/lib/libamdhip64.so`).
    pub relpath: String,
    /// The SONAME it stands for (`libamdhip64.so.7`).
    pub target: String,
    /// Its `DT_RUNPATH`, reaching the library's directory.
    pub runpath: String,
    /// Why the name got an alias, each reason once.
    pub why: Vec<AliasReason>,
    /// Its size in bytes.
    pub size: u64,
}

/// Why an unversioned name gets a runtime alias.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum AliasReason {
    /// `--runtime-alias NAME`.
    Asked,
    /// A file of a runtime package holds the name as a string literal.
    Found {
        /// The file's relpath in the artifacts.
        file: String,
        /// Its artifact.
        artifact: String,
    },
    /// The model's table of names opened by name.
    Known {
        /// Who opens it.
        opened_by: String,
    },
}

impl std::fmt::Display for AliasReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Asked => f.write_str("asked for with --runtime-alias"),
            Self::Found { file, artifact } => write!(f, "found in {file} ({artifact})"),
            Self::Known { opened_by } => write!(f, "opened by name by {opened_by}"),
        }
    }
}

/// Why an entry is left out of a package (runtime or devel).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Dropped {
    /// The relpath.
    pub relpath: String,
    /// The reason, in words.
    pub reason: String,
}

/// One entry of the devel tree (docs/behaviour.md#devel-build), relative to `_rocm_sdk_devel/`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DevelEntry {
    /// A directory.
    Dir {
        /// The relpath.
        relpath: String,
    },
    /// A file copied into the tar, a host ELF file with its search path
    /// edited.
    File {
        /// The relpath.
        relpath: String,
        /// The search-path edit of a host ELF file; `None`: the bytes as
        /// they are.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        patch: Option<SearchPathPatch>,
        /// The source file.
        source: SourceRef,
    },
    /// A file the build writes itself (the package marker `__init__.py`).
    Generated {
        /// The relpath.
        relpath: String,
        /// What it is, for people reading the plan.
        what: String,
        /// The bytes.
        #[serde(skip)]
        bytes: Vec<u8>,
    },
    /// A relative symlink.
    Symlink {
        /// The relpath.
        relpath: String,
        /// The link text.
        target: String,
        /// Why it is a link: `verbatim`, `soname_alias` or `runtime_file`.
        why: LinkReason,
    },
}

impl DevelEntry {
    /// The entry's relpath.
    pub fn relpath(&self) -> &str {
        match self {
            Self::Dir { relpath }
            | Self::File { relpath, .. }
            | Self::Generated { relpath, .. }
            | Self::Symlink { relpath, .. } => relpath,
        }
    }
}

/// Why a devel entry is a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkReason {
    /// A symlink of the source tree, kept as it was.
    Verbatim,
    /// A soname alias: points at the bare SONAME.
    SonameAlias,
    /// A file a runtime package ships: points into that package.
    RuntimeFile,
}

/// One wheel of the set.
#[derive(Debug, Clone, Serialize)]
pub struct PackagePlan {
    /// The logical package.
    pub kind: PackageKind,
    /// The distribution name (METADATA `Name`).
    pub dist_name: String,
    /// The family (legacy libraries and devel) or base target (device).
    pub target: Option<String>,
    /// The sub-directory of `dist/` it is written to (`""` or a family).
    pub subdir: String,
    /// One-line summary for METADATA.
    pub summary: String,
    /// `Requires-Dist`, rendered.
    pub requires: Vec<String>,
    /// `console_scripts` entry points: `(name, "module:function")`.
    pub console_scripts: Vec<(String, String)>,
    /// Every file of the wheel except its `.dist-info`, sorted by `dest`.
    pub files: Vec<PlannedFile>,
    /// The devel tree (devel only), sorted by relpath.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devel_tree: Vec<DevelEntry>,
    /// Names not shipped because a SONAME file stands for them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub soname_aliases: Vec<SonameAlias>,
    /// Runtime aliases this package ships (core only), sorted by relpath.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runtime_aliases: Vec<RuntimeAlias>,
    /// Entries left out, with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
}

/// One `rocm` selector sdist.
#[derive(Debug, Clone, Serialize)]
pub struct SelectorPlan {
    /// The sub-directory of `dist/` it is written to (`""` or a family).
    pub subdir: String,
    /// Legacy per-family selectors: the family it is restricted to.
    pub restricted_to: Option<String>,
    /// The `_dist_info.json` it carries.
    #[serde(skip)]
    pub dist_info_json: Vec<u8>,
    /// What the selector offers: `(extra, requirements)`.
    pub extras: Vec<(String, Vec<String>)>,
}

/// An ELF file that keeps the absolute entries of its search path
/// (`--keep-absolute-search-paths`) where `verify` reads them: its
/// search-paths check will refuse the release, and the build says so
/// (docs/behaviour.md#search-paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptSearchPath {
    /// The distribution that ships it.
    pub package: String,
    /// The sub-directory of `dist/` its package is written to.
    pub subdir: String,
    /// Its installed path, relative to site-packages (in the devel tree
    /// where `rocm-sdk init` unpacks it).
    pub path: String,
    /// Whether it is a member of the devel tarball.
    pub in_devel: bool,
    /// `RPATH` or `RUNPATH`, as the shipped file has it.
    pub tag: String,
    /// The absolute entries it keeps.
    pub entries: Vec<String>,
}

/// The `schema` of the plan document (`plan --json`, `plan.json`).
pub const PLAN_SCHEMA: u32 = 1;

/// The whole build: every package and selector, nothing written yet.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Always [`PLAN_SCHEMA`]: the document's version, first in its JSON.
    pub schema: u32,
    /// Legacy or kpack-split.
    pub mode: Mode,
    /// The canonical version of every package.
    pub version: String,
    /// The wheel platform tag (`linux_x86_64`, `win_amd64`).
    pub platform_tag: String,
    /// The nonce every platform package directory carries (and the devel
    /// tree's root, `_rocm_sdk_devel{N}`).
    #[serde(skip_serializing_if = "Nonce::is_empty")]
    pub nonce: Nonce,
    /// Summaries, licence and project URLs of every package
    /// (`Requires-Python` is [`dist_info::project_metadata::REQUIRES_PYTHON`]).
    pub metadata: ProjectMetadata,
    /// The wheels.
    pub packages: Vec<PackagePlan>,
    /// The `rocm` sdists.
    pub selectors: Vec<SelectorPlan>,
    /// Files that keep absolute search-path entries by request, which
    /// `verify` will report.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_search_paths: Vec<KeptSearchPath>,
}

impl Plan {
    /// The plan as pretty JSON (what `therock-package plan --json` prints).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plans serialise to JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::windows_executable;

    #[test]
    fn windows_programs_are_told_by_extension() {
        for program in [
            "bin/hipcc.exe",
            "bin/HIPINFO.EXE",
            "x.bat",
            "lib/llvm/bin/a.Cmd",
            "b.com",
        ] {
            assert!(windows_executable(program), "{program}");
        }
        for data in [
            "bin/amdhip64_7.dll",
            "lib/amdhip64.lib",
            "bin/hipconfig",
            "exe",
            "bin.exe/x",
        ] {
            assert!(!windows_executable(data), "{data}");
        }
    }
}
