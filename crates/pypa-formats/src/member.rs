//! What a member of a package may be (docs/behaviour.md#member-rules): the
//! one predicate the writers (wheels, sdists, the devel tarball) and the
//! readers of untrusted packages (`verify`, `index`, `assemble`, the devel
//! unpack) all apply, so nothing is written that a reader refuses and
//! nothing is read that would land outside its root.
//!
//! - a member path is a clean relative path ([`check_relpath`]): `/`
//!   separated normal segments, never absolute (`/x`, `C:x`, `C:/x`), never
//!   with `.`/`..`, a backslash (Windows' separator) or a control character;
//! - a wheel or sdist member is a regular file or a directory, with no
//!   setuid, setgid or sticky bit ([`check_file_mode`]); links, devices,
//!   FIFOs and sockets are refused (the devel tarball's links follow the
//!   rules of `dist_info::devel_tree`).
//!
//! ```
//! use pypa_formats::member::{FileType, ModeProblem, PathProblem, check_file_mode, check_relpath};
//! assert_eq!(check_relpath("rocm_sdk_core/lib/libamdhip64.so.7"), Ok(()));
//! assert_eq!(check_relpath("pkg/../../evil.txt"), Err(PathProblem::DotSegment));
//! assert_eq!(check_relpath("C:/evil.txt"), Err(PathProblem::DrivePrefix));
//! assert_eq!(check_file_mode(0o100_755), Ok(FileType::Regular));
//! assert_eq!(check_file_mode(0o120_777), Err(ModeProblem::NotRegular(FileType::Symlink)));
//! assert_eq!(check_file_mode(0o104_755), Err(ModeProblem::SpecialBits(0o4000)));
//! ```

use std::fmt;

/// Why a path is not acceptable as a member of a package (or of the devel
/// tree).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathProblem {
    /// Nothing at all.
    #[error("empty path")]
    Empty,
    /// Starts with `/`.
    #[error("absolute path")]
    Absolute,
    /// Starts with a Windows drive (`C:`), absolute or drive-relative there.
    #[error("a Windows drive prefix")]
    DrivePrefix,
    /// Holds `\` (a separator on Windows).
    #[error("backslash in path")]
    Backslash,
    /// Holds a control character or a Unicode line separator (RECORD is
    /// line based).
    #[error("control character in path")]
    ControlCharacter,
    /// A doubled or trailing `/`.
    #[error("empty segment (doubled or trailing `/`)")]
    EmptySegment,
    /// A `.` or `..` segment.
    #[error("`.` or `..` segment")]
    DotSegment,
    /// Not the devel tree's root (named here) nor below it.
    #[error("outside {0}/")]
    OutsideDevelRoot(String),
}

/// Checks one name (a file or directory name, one segment of a member
/// path) for what no package may hold, whatever the platform: a control
/// character (U+0000–U+001F, U+007F–U+009F) or a Unicode line or paragraph
/// separator (U+2028, U+2029: `str.splitlines` ends a line there, and
/// readers of RECORD split it so). RECORD, the installers and
/// `rocm-sdk test` read paths line by line, so a newline in a name ships a
/// file no installation can account for. The rule of every package: the
/// artifacts are refused with such a name before anything is planned
/// (docs/behaviour.md#inputs), member paths ([`check_relpath`]) and the
/// devel tarball's links are checked with it, and the install side refuses
/// a tarball member that breaks it.
///
/// ```
/// use pypa_formats::member::{PathProblem, check_file_name};
/// assert_eq!(check_file_name("libfoo.so"), Ok(()));
/// assert_eq!(check_file_name("lib\nfoo.so"), Err(PathProblem::ControlCharacter));
/// ```
pub fn check_file_name(name: &str) -> Result<(), PathProblem> {
    if name
        .chars()
        .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
    {
        return Err(PathProblem::ControlCharacter);
    }
    Ok(())
}

/// Checks that `relpath` is a clean relative path: non-empty `/`-separated
/// normal segments, no `.`/`..`, no leading or doubled `/`, no Windows
/// drive, no backslash, no control characters.
///
/// ```
/// use pypa_formats::member::{PathProblem, check_relpath};
/// assert_eq!(check_relpath("lib/libfoo.so"), Ok(()));
/// assert_eq!(check_relpath("lib/../x"), Err(PathProblem::DotSegment));
/// assert_eq!(check_relpath("..\\x"), Err(PathProblem::Backslash));
/// ```
pub fn check_relpath(relpath: &str) -> Result<(), PathProblem> {
    if relpath.is_empty() {
        return Err(PathProblem::Empty);
    }
    if relpath.starts_with('/') {
        return Err(PathProblem::Absolute);
    }
    if relpath.contains('\\') {
        return Err(PathProblem::Backslash);
    }
    check_file_name(relpath)?;
    // `C:x` is relative to drive C's current directory, `C:/x` absolute.
    let bytes = relpath.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(PathProblem::DrivePrefix);
    }
    for segment in relpath.split('/') {
        match segment {
            "" => return Err(PathProblem::EmptySegment),
            "." | ".." => return Err(PathProblem::DotSegment),
            _ => {}
        }
    }
    Ok(())
}

/// The file type in a Unix mode (`st_mode & S_IFMT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// A regular file, or no type recorded (zip entries made by tools that
    /// store permissions only).
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A character or block device.
    Device,
    /// A FIFO.
    Fifo,
    /// A socket.
    Socket,
    /// A type no file system has.
    Unknown(u32),
}

impl FileType {
    /// The type of `mode`.
    pub fn of_mode(mode: u32) -> Self {
        match mode & 0o170_000 {
            0 | 0o100_000 => Self::Regular,
            0o040_000 => Self::Directory,
            0o120_000 => Self::Symlink,
            0o020_000 | 0o060_000 => Self::Device,
            0o010_000 => Self::Fifo,
            0o140_000 => Self::Socket,
            other => Self::Unknown(other),
        }
    }
}

impl fmt::Display for FileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Regular => f.write_str("a regular file"),
            Self::Directory => f.write_str("a directory"),
            Self::Symlink => f.write_str("a symlink"),
            Self::Device => f.write_str("a device file"),
            Self::Fifo => f.write_str("a FIFO"),
            Self::Socket => f.write_str("a socket"),
            Self::Unknown(t) => write!(f, "of file type {t:#o}"),
        }
    }
}

/// Why a member's mode is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeProblem {
    /// Not a regular file or a directory.
    #[error("it is {0}; packages carry regular files only")]
    NotRegular(FileType),
    /// Setuid, setgid or sticky (the bits given).
    #[error("its mode has the setuid, setgid or sticky bits {0:#o}; packages carry none")]
    SpecialBits(u32),
}

/// Checks a member's Unix mode (type and permission bits): a regular file
/// or a directory, no setuid/setgid/sticky bit. Returns the type.
pub fn check_file_mode(mode: u32) -> Result<FileType, ModeProblem> {
    let kind = FileType::of_mode(mode);
    if !matches!(kind, FileType::Regular | FileType::Directory) {
        return Err(ModeProblem::NotRegular(kind));
    }
    match mode & 0o7000 {
        0 => Ok(kind),
        bits => Err(ModeProblem::SpecialBits(bits)),
    }
}

/// The key two member paths share when they are one file where an
/// installation may live: a file system that ignores case (Windows, macOS
/// by default) or one that normalises Unicode (macOS). The path is
/// compatibility-normalised (NFKC), lower-cased and normalised again, a
/// trailing `/` dropped: wider than any file system folds, so no two
/// paths a file system could confuse get two keys.
///
/// ```
/// use pypa_formats::member::collision_key;
/// assert_eq!(collision_key("Lib/Foo.py"), collision_key("lib/foo.py"));
/// assert_eq!(collision_key("caf\u{e9}.py"), collision_key("cafe\u{301}.py"));
/// assert_ne!(collision_key("a.py"), collision_key("b.py"));
/// ```
pub fn collision_key(path: &str) -> String {
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc();
    let path = path.strip_suffix('/').unwrap_or(path);
    let lower = nfkc.normalize(path).to_lowercase();
    nfkc.normalize(&lower).into_owned()
}

/// Member paths of one package that installers would not keep apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Collision {
    /// The same path given `count` times: an installer writes each, the
    /// last one winning, while RECORD vouches for one.
    Repeated {
        /// The path.
        path: String,
        /// How often it is given.
        count: usize,
    },
    /// Different paths that are one file after case folding and Unicode
    /// normalisation (in the order given).
    Folded {
        /// The paths.
        paths: Vec<String>,
    },
}

impl fmt::Display for Collision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Repeated { path, count } => {
                write!(f, "{path:?} is given {count} times")
            }
            Self::Folded { paths } => write!(
                f,
                "{} are one path after case folding and Unicode normalisation (one file on Windows and macOS)",
                paths
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }
}

/// Every [`Collision`] among `paths`, in the order of first appearance;
/// a directory entry `x/` and a file `x` are one path.
///
/// ```
/// use pypa_formats::member::{Collision, collisions};
/// let found = collisions(["a.py", "b.py", "a.py", "B.py"]);
/// assert_eq!(found, [
///     Collision::Repeated { path: "a.py".into(), count: 2 },
///     Collision::Folded { paths: vec!["b.py".into(), "B.py".into()] },
/// ]);
/// ```
pub fn collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<Collision> {
    let mut by_key: Vec<(String, Vec<&'a str>)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for path in paths {
        let key = collision_key(path);
        if let Some(&i) = index.get(&key) {
            by_key[i].1.push(path);
        } else {
            index.insert(key.clone(), by_key.len());
            by_key.push((key, vec![path]));
        }
    }
    let mut out = Vec::new();
    for (_, group) in by_key.into_iter().filter(|(_, g)| g.len() > 1) {
        let mut distinct: Vec<&str> = Vec::new();
        for &path in &group {
            let count = group.iter().filter(|&&p| p == path).count();
            if distinct.contains(&path) {
                continue;
            }
            distinct.push(path);
            if count > 1 {
                out.push(Collision::Repeated {
                    path: path.to_owned(),
                    count,
                });
            }
        }
        if distinct.len() > 1 {
            out.push(Collision::Folded {
                paths: distinct.into_iter().map(str::to_owned).collect(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        for good in [
            "_rocm_sdk_core/lib/libamdhip64.so.7",
            ".kpack/rand_lib_gfx90a:xnack+.kpack",
            "ab:c",
            "x/C:y",
        ] {
            assert_eq!(check_relpath(good), Ok(()), "{good:?}");
        }
        for (bad, problem) in [
            ("", PathProblem::Empty),
            ("/etc/passwd", PathProblem::Absolute),
            ("C:/evil", PathProblem::DrivePrefix),
            ("c:evil", PathProblem::DrivePrefix),
            ("C:\\evil", PathProblem::Backslash),
            ("a\\..\\..\\b", PathProblem::Backslash),
            ("a\0", PathProblem::ControlCharacter),
            ("a\nb", PathProblem::ControlCharacter),
            ("a\u{2028}b", PathProblem::ControlCharacter),
            ("a//b", PathProblem::EmptySegment),
            ("a/", PathProblem::EmptySegment),
            ("./a", PathProblem::DotSegment),
            ("../evil.txt", PathProblem::DotSegment),
            ("pkg/../../evil.txt", PathProblem::DotSegment),
        ] {
            assert_eq!(check_relpath(bad), Err(problem), "{bad:?}");
        }
    }

    #[test]
    fn only_plain_files_and_directories_pass() {
        assert_eq!(check_file_mode(0o644), Ok(FileType::Regular));
        assert_eq!(check_file_mode(0o100_644), Ok(FileType::Regular));
        assert_eq!(check_file_mode(0o040_755), Ok(FileType::Directory));
        for (mode, kind) in [
            (0o120_777, FileType::Symlink),
            (0o020_644, FileType::Device),
            (0o060_644, FileType::Device),
            (0o010_644, FileType::Fifo),
            (0o140_755, FileType::Socket),
            (0o170_644, FileType::Unknown(0o170_000)),
        ] {
            assert_eq!(check_file_mode(mode), Err(ModeProblem::NotRegular(kind)));
        }
        for bits in [0o4000, 0o2000, 0o1000, 0o6000] {
            assert_eq!(
                check_file_mode(0o100_755 | bits),
                Err(ModeProblem::SpecialBits(bits))
            );
        }
        assert_eq!(
            ModeProblem::NotRegular(FileType::Symlink).to_string(),
            "it is a symlink; packages carry regular files only"
        );
    }
}
