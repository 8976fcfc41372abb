//! Why a plan cannot be made.

use std::path::PathBuf;

/// Errors while planning; each names the file or the rule at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the artifacts failed.
    #[error(transparent)]
    Artifacts(#[from] artifacts::Error),
    /// A source file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file (or archive).
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A host ELF file could not be parsed; the error names the file (or
    /// the archive), once.
    #[error(transparent)]
    Elf(elf_surgery::Error),
    /// A file named as a runtime library of the library table is not one
    /// (empty, not ELF, not a shared object, not a DLL).
    #[error(
        "{file}: shipped as {name}, a name of the runtime library {library} ({pattern}), \
         but {reason}; rebuild the artifact that holds it"
    )]
    NotALibrary {
        /// The file on disk or the archive member.
        file: String,
        /// The relpath the package would ship it under.
        name: String,
        /// The library's short name (`amdhip64`).
        library: String,
        /// The table pattern the name matches (`lib/libamdhip64.so*`).
        pattern: String,
        /// What the bytes are instead.
        reason: &'static str,
    },
    /// The `share/therock/dist_info.json` core would ship cannot be read
    /// by the install side.
    #[error(
        "{file}: `rocm-sdk targets` could not read this dist_info.json, which rocm-sdk-core \
         would ship; fix it or rebuild base_lib_generic (TheRock writes it when the build is \
         configured)"
    )]
    DistTargets {
        /// The file on disk or the archive member.
        file: String,
        /// What is wrong with it.
        source: dist_info::dist_targets::DistTargetsError,
    },
    /// A shared object's SONAME is not one plain file name (empty, a path,
    /// `.`/`..`, a control character): the runtime packages would ship the
    /// library under it.
    #[error(
        "{file}: its SONAME {soname:?} is not a file name; the SONAME names the file the loader \
         looks for beside the library, so relink it with a plain one (-Wl,-soname,libNAME.so.N)"
    )]
    BadSoname {
        /// The file on disk or the archive member.
        file: String,
        /// The SONAME as read.
        soname: String,
    },
    /// A rule of docs/behaviour.md#build-checks refuses the build.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The model refused a name or a version.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// A rule of docs/behaviour.md#build-checks that refuses the build.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Core's artifacts hold no `share/therock/dist_info.json`.
    #[error(
        "no {relpath} among the artifacts of rocm-sdk-core: `rocm-sdk targets` reads it on \
         every installation; pass the artifact directory of a complete TheRock build (its \
         base_lib_generic artifact holds the file)",
        relpath = dist_info::dist_targets::RELPATH
    )]
    NoDistTargets,
    /// A Linux build without profiler artifacts.
    #[error(
        "no profiler artifacts (rocprofiler-compute, rocprofiler-systems): refusing to \
         build an empty rocm-profiler package; include them in the artifact directory"
    )]
    NoProfiler,
    /// No artifact holds the libraries package's files.
    #[error(
        "no libraries artifacts ({names} with component lib, target {which}): refusing to build a \
         set without rocm-sdk-libraries; include them in the artifact directory"
    )]
    NoLibraries {
        /// The artifact names looked for, `, ` separated.
        names: String,
        /// `generic`, or `generic or FAMILY`.
        which: String,
    },
    /// A kpack build lacks the device artifacts of targets its family
    /// list expects.
    #[error(
        "kpack build is incomplete: no device artifacts for {missing}; expected {expected} from the family list, \
         discovered {discovered}; fetch the missing targets' artifacts or fix the family list",
        missing = missing.join(", "),
        expected = expected.join(", "),
        discovered = discovered.join(", ")
    )]
    IncompleteKpack {
        /// The targets without device artifacts.
        missing: Vec<String>,
        /// The targets the family list expands to.
        expected: Vec<String>,
        /// The base targets of the device artifacts found.
        discovered: Vec<String>,
    },
    /// Installed paths Windows cannot hold, or that collide there: the
    /// first problem, then the others by their short names.
    #[error("{first}{}", more_names(others))]
    WindowsNames {
        /// The first problem, in full.
        first: Box<WindowsNameProblem>,
        /// Every other problem's short name (`lib/aux/`, `A.h / a.h`).
        others: Vec<String>,
    },
    /// Installed paths no file system holds (too long a name or path):
    /// the first problem, then the others by their short names.
    #[error("{first}{}", more_names(others))]
    LongNames {
        /// The first problem, in full.
        first: Box<LongNameProblem>,
        /// Every other problem's short name.
        others: Vec<String>,
    },
    /// Two packages that are installed together ship the same path: the
    /// first such path, then the others.
    #[error("{first}{}", more_names(others))]
    SharedPaths {
        /// The first shared path, in full.
        first: Box<SharedPathProblem>,
        /// Every other shared path.
        others: Vec<String>,
    },
    /// A file the build ships without editing it (it does not edit its
    /// kind) still searches directories of the build host: `verify`
    /// would refuse the release.
    #[error(
        "{file}: its {tag} searches the absolute {dirs} {entries} (of the build host), and the \
         build does not edit {kind}, so {package} would ship {them} as {they} {are}; rebuild the \
         file without {them}, or keep absolute search paths to ship {them} anyway (the release \
         then fails verify's search-paths check)",
        dirs = if entries.len() == 1 { "directory" } else { "directories" },
        entries = entries.join(", "),
        them = if entries.len() == 1 { "it" } else { "them" },
        they = if entries.len() == 1 { "it" } else { "they" },
        are = if entries.len() == 1 { "is" } else { "are" },
    )]
    UneditedSearchPath {
        /// The file on disk or the archive member.
        file: String,
        /// `RUNPATH` or `RPATH`.
        tag: &'static str,
        /// The absolute entries.
        entries: Vec<String>,
        /// What the file is (`a static executable`, `device code`).
        kind: &'static str,
        /// The distribution that would ship it.
        package: String,
    },
    /// A runtime alias asked for that is not an unversioned library name.
    #[error(
        "runtime alias {name:?}: not an unversioned library name; give a file name \
         like libamdhip64.so"
    )]
    AliasNotUnversioned {
        /// The name as given.
        name: String,
    },
    /// A runtime alias asked for that no shipped library's SONAME is a
    /// versioned form of.
    #[error(
        "runtime alias {name}: no runtime package ships a library whose SONAME is \
         a versioned form of it ({name}.N); check the name or do not ask for it"
    )]
    AliasWithoutLibrary {
        /// The name as given.
        name: String,
    },
    /// The alias file for a library cannot be made.
    #[error("runtime alias {name}: {reason}")]
    AliasBytes {
        /// The alias name.
        name: String,
        /// Why (said here, so it is no source as well).
        reason: elf_surgery::Error,
    },
}

/// Problems listed by name after the first one.
const NAMED_MORE: usize = 3;

/// ` (N more such names: a, b, c, …)` after the first problem, or nothing.
fn more_names(others: &[String]) -> String {
    if others.is_empty() {
        return String::new();
    }
    let named: Vec<&str> = others.iter().take(NAMED_MORE).map(String::as_str).collect();
    let ellipsis = if others.len() > NAMED_MORE {
        ", …"
    } else {
        ""
    };
    format!(
        " ({} more such {}: {}{ellipsis})",
        others.len(),
        if others.len() == 1 { "name" } else { "names" },
        named.join(", ")
    )
}

/// An installed path a set for a Windows tag cannot hold
/// (docs/behaviour.md#windows-names).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowsNameProblem {
    /// A name Windows cannot hold.
    #[error(
        "{origin}: shipped as {path} in {package}, but {problem}; a {tag} package cannot hold \
         it: rename or remove it in its artifact"
    )]
    BadName {
        /// Where the file comes from, as the user finds it.
        origin: String,
        /// Its installed path, relative to site-packages.
        path: String,
        /// The distribution that installs it.
        package: String,
        /// Why Windows cannot hold it (said here, so it is no source as well).
        problem: dist_info::windows_names::NameProblem,
        /// The wheel platform tag.
        tag: String,
    },
    /// Two installed paths that differ only in case.
    #[error(
        "{} and {}: shipped as {} ({}) and {} ({}), one name to Windows (they differ only in \
         case), so on install one would overwrite the other: rename one of them in its artifact",
        first.origin, second.origin, first.shown, first.package, second.shown, second.package
    )]
    CaseCollision {
        /// One spelling.
        first: CaseSpelling,
        /// The other.
        second: CaseSpelling,
    },
}

/// An installed path no file system holds
/// (docs/behaviour.md#name-lengths).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: shipped as {} in {package}, but {problem}: shorten or rename it in its artifact",
    dist_info::name_lengths::shortened(origin),
    dist_info::name_lengths::shortened(path)
)]
pub struct LongNameProblem {
    /// Where the file comes from, as the user finds it.
    pub origin: String,
    /// Its installed path, relative to site-packages.
    pub path: String,
    /// The distribution that installs it.
    pub package: String,
    /// Why no file system holds it (said here, so it is no source as well).
    pub problem: dist_info::name_lengths::LengthProblem,
}

/// A path two packages installed together ship
/// (docs/behaviour.md#one-owner).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{first_origin} and {second_origin}: {shared}; take it out of one of the artifacts (a device \
     artifact holds only files of its own target)"
)]
pub struct SharedPathProblem {
    /// Where the first package's file comes from.
    pub first_origin: String,
    /// Where the second package's file comes from.
    pub second_origin: String,
    /// The path and both packages (said here, so it is no source as well).
    pub shared: dist_info::installed_paths::SharedPath,
}

/// One spelling of a case collision, as the message shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseSpelling {
    /// The path (a directory with its `/`).
    pub shown: String,
    /// The distribution that installs the first path at or below it.
    pub package: String,
    /// Where that path comes from.
    pub origin: String,
}

/// The model refused a family list the plan was given, or the selector.
///
/// The cause is part of each message (not a source as well), so it is
/// said once however the error is printed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A family list names no known family.
    #[error("{0}")]
    Families(dist_info::families::FamilyError),
    /// The `rocm` selector cannot be planned.
    #[error("{}", fs_helpers::error_chain::Chain(.0))]
    Selector(dist_info::selector::SelectorError),
}
