//! The errors of this crate: each names the file (or artifact) and what to do.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while reading an artifact directory.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },

    /// A member's data could not be written while extracting an archive.
    #[error(
        "cannot write {path} while extracting {archive}; the build needs free space for the archives' contents"
    )]
    Extract {
        /// The archive.
        archive: PathBuf,
        /// The file being written.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },

    /// The artifact directory itself does not exist or is not a directory.
    #[error("{path} is not a directory: pass the directory that holds the artifacts")]
    NotADirectory {
        /// The path given as the artifact directory.
        path: PathBuf,
    },

    /// The directory holds no artifact at all (an empty directory, a
    /// wrong one, or one artifact instead of the directory of them).
    #[error(
        "no TheRock artifacts in {path}: an artifact directory holds one entry per artifact, a \
         directory NAME_COMPONENT_TARGET with an artifact_manifest.txt (base_lib_generic, \
         core-hip_lib_gfx942) or the same name as a .tar.zst or .tar.xz archive; {remedy}"
    )]
    NoArtifacts {
        /// The path given as the artifact directory.
        path: PathBuf,
        /// What to pass instead.
        remedy: String,
    },

    /// A manifest line is absolute or climbs out of the artifact with `..`.
    #[error(
        "{artifact}: artifact_manifest.txt line {line_number} ({line:?}) leaves the artifact; \
         manifest lines must be relative paths without `..`"
    )]
    UnsafeManifestLine {
        /// The artifact whose manifest is wrong.
        artifact: String,
        /// 1-based line number.
        line_number: usize,
        /// The offending line.
        line: String,
    },

    /// A manifest line is not one path as a directory is named: it starts
    /// or ends with whitespace, or holds a control character.
    #[error(
        "{artifact}: artifact_manifest.txt line {line_number} ({line:?}) {problem}; a manifest \
         line is one path, exactly as the directory is named: fix the line"
    )]
    BadManifestLine {
        /// The artifact whose manifest is wrong.
        artifact: String,
        /// 1-based line number.
        line_number: usize,
        /// The offending line.
        line: String,
        /// What is wrong with it.
        problem: &'static str,
    },

    /// A component of a manifest line's path is a symlink: the base
    /// directory would be read from wherever the link points.
    #[error(
        "{path} is a symlink: {artifact}'s manifest line {line:?} must be reached through \
         real directories (a link could pull in files from anywhere on the host); replace the \
         link with the directory it points to"
    )]
    SymlinkInPrefix {
        /// The symlinked component.
        path: PathBuf,
        /// The artifact.
        artifact: String,
        /// The manifest line.
        line: String,
    },

    /// A component of a manifest line's path is a file, FIFO, socket or device.
    #[error(
        "{path} is a {kind}, not a directory: {artifact}'s manifest line {line:?} must name a \
         directory; rebuild the artifact"
    )]
    PrefixNotADirectory {
        /// The offending component.
        path: PathBuf,
        /// The artifact.
        artifact: String,
        /// The manifest line.
        line: String,
        /// What it is instead.
        kind: &'static str,
    },

    /// `artifact_manifest.txt` is a directory, a symlink, a FIFO or another
    /// non-regular file (it is never read, so never followed or blocked on).
    #[error(
        "{path} is a {kind}, not a regular file: an artifact's manifest must be a plain file \
         (links and special files are never read); replace it with the file"
    )]
    ManifestNotAFile {
        /// The manifest path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },

    /// A file name (or link text, or archive member name) is not UTF-8.
    #[error("{path}: the name is not valid UTF-8; rename it (package paths must be UTF-8)")]
    NonUtf8Name {
        /// The path as far as it can be shown.
        path: PathBuf,
    },

    /// A file name, link text or archive member name holds a control
    /// character (shown escaped, so the message stays one line).
    #[error(
        "{}: the {what} holds a control character; rename it (installers and `rocm-sdk test` \
         read a package's file list line by line, so no package may hold such a name)",
        escaped(path)
    )]
    ControlCharacterInName {
        /// The path, or the link whose text it is.
        path: PathBuf,
        /// `name` or `link text`.
        what: &'static str,
    },

    /// A source (a file, or an archive) is not the file it was when it
    /// was indexed: replaced, resized or rewritten since.
    #[error(
        "{path} changed after the build indexed it (its inode, size or times differ); artifacts \
         must not change while a build reads them: run the build again once they are complete"
    )]
    SourceChanged {
        /// The file.
        path: PathBuf,
    },

    /// A file type that cannot be packaged (device, FIFO, socket, ...).
    #[error(
        "{path}: unsupported file type ({kind}); only files, directories and symlinks can be packaged"
    )]
    UnsupportedFileType {
        /// The offending path.
        path: PathBuf,
        /// What it is.
        kind: String,
    },

    /// An archive artifact is malformed (bad tar data, manifest not first, ...).
    #[error("{archive}: {reason}")]
    BadArchive {
        /// The archive file.
        archive: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// An archive member (or the target of a hard link) lies outside every
    /// manifest prefix or climbs out with `..`: a tar-slip attempt or a broken archive.
    #[error(
        "{archive}: member {member:?} lies outside the artifact's manifest prefixes; \
         the archive is unsafe or broken, rebuild it"
    )]
    MemberOutsidePrefix {
        /// The archive file.
        archive: PathBuf,
        /// The member name (or `name -> hard-link target`).
        member: String,
    },

    /// A required file is missing from the artifact directory.
    #[error("{path} is missing: {hint}")]
    MissingFile {
        /// Where the file was expected.
        path: PathBuf,
        /// What to do about it.
        hint: &'static str,
    },

    /// `share/therock/dist_info.json` cannot be read by the install side.
    #[error(
        "{path}: rocm-sdk could not read this dist_info.json; fix it or rebuild base_lib_generic \
         (TheRock writes it when the build is configured)"
    )]
    DistTargets {
        /// The document.
        path: PathBuf,
        /// What is wrong with it.
        source: dist_info::dist_targets::DistTargetsError,
    },

    /// A JSON document could not be parsed or has the wrong shape.
    #[error("{path}: {reason}")]
    BadJson {
        /// The document.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// `path` with its control characters escaped (`\n`, `\u{7}`).
fn escaped(path: &std::path::Path) -> String {
    fs_helpers::error_chain::escape_controls(&path.display().to_string(), &[]).into_owned()
}

/// Refuses `text` (a name, or with `what` = `link text` a link's text)
/// when the rule every package keeps to
/// ([`pypa_formats::member::check_file_name`]) refuses it; `path` names
/// it in the error.
pub(crate) fn check_name(
    text: &str,
    what: &'static str,
    path: impl FnOnce() -> PathBuf,
) -> Result<()> {
    pypa_formats::member::check_file_name(text)
        .map_err(|_| Error::ControlCharacterInName { path: path(), what })
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
