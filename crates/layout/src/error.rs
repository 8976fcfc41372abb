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
    #[error("{0}")]
    Check(String),
    /// The model refused a name or a version.
    #[error("{0}")]
    Model(String),
}
