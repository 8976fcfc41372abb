//! Names every supported installer and file system can hold
//! (docs/behaviour.md#name-lengths): the rule the build applies to every
//! path a package set installs (before anything is written) and `verify`
//! to every member of what was published, so a release never holds a path
//! that `pip install` fails on with `File name too long`.
//!
//! - no segment of an installed path is longer than [`NAME_MAX`] bytes of
//!   UTF-8: Linux file systems (ext4, XFS, Btrfs, tmpfs) hold names of at
//!   most 255 bytes, NTFS of at most 255 UTF-16 units (never more units
//!   than UTF-8 bytes), so one rule serves both;
//! - no installed path (relative to site-packages) is longer than
//!   [`MAX_INSTALLED_PATH`] bytes: below a site-packages of up to
//!   [`SITE_PACKAGES_ALLOWANCE`] bytes it stays within Linux's `PATH_MAX`
//!   of [`PATH_MAX`] bytes (the terminating NUL included), the longest
//!   path the kernel takes in one call; installers open every file by its
//!   full path. Windows' shorter `MAX_PATH` is only worth a warning
//!   (`windows_names`), because long paths can be enabled there.
//!
//! Pure: paths are `/`-separated and relative to site-packages.
//!
//! ```
//! use dist_info::name_lengths::{LengthProblem, check_path};
//! assert_eq!(check_path("_rocm_sdk_core/lib/libamdhip64.so.7"), Ok(()));
//! let long = format!("_rocm_sdk_core/share/{}", "x".repeat(256));
//! assert!(matches!(check_path(&long), Err(LengthProblem::LongName { bytes: 256, .. })));
//! ```

use std::fmt;

use fs_helpers::error_chain::escape_controls;

/// The longest name (one path segment) a file system holds, in bytes.
pub const NAME_MAX: usize = 255;

/// Linux's `PATH_MAX`: the longest path a system call takes, in bytes,
/// the terminating NUL included.
pub const PATH_MAX: usize = 4096;

/// The longest site-packages directory (absolute, in bytes) an installed
/// path must still fit below: a virtual environment deep in a project
/// tree, a `--target` directory or an installer's cache all fit in it.
pub const SITE_PACKAGES_ALLOWANCE: usize = 1024;

/// The longest installed path (relative to site-packages, in bytes): the
/// site-packages allowance, a `/` and the path, with the NUL, fit in
/// [`PATH_MAX`].
pub const MAX_INSTALLED_PATH: usize = PATH_MAX - 1 - SITE_PACKAGES_ALLOWANCE - 1;

/// How many characters of a long name a message shows.
const SHOWN: usize = 48;

/// Why an installed path cannot be held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LengthProblem {
    /// A segment is longer than [`NAME_MAX`] bytes.
    #[error(
        "the name `{}` is {bytes} bytes long, more than the {NAME_MAX} bytes a file system \
         holds in one name, so installers fail on it (File name too long)",
        Shown(segment)
    )]
    LongName {
        /// The segment.
        segment: String,
        /// Its length in bytes.
        bytes: usize,
    },
    /// The path is longer than [`MAX_INSTALLED_PATH`] bytes.
    #[error(
        "the installed path is {bytes} bytes long, more than the {MAX_INSTALLED_PATH} bytes that \
         stay within Linux's PATH_MAX of {PATH_MAX} below a site-packages of up to \
         {SITE_PACKAGES_ALLOWANCE} bytes, so installers fail on it (File name too long)"
    )]
    LongPath {
        /// Its length in bytes.
        bytes: usize,
    },
}

/// A long name as a message shows it: its start, control characters
/// escaped, and how it goes on.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let start: String = self.0.chars().take(SHOWN).collect();
        f.write_str(&escape_controls(&start, &[]))?;
        if self.0.chars().nth(SHOWN).is_some() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// How many characters of a path a message shows.
const SHOWN_PATH: usize = 200;

/// `path` as a message shows it: control characters escaped, and a path
/// of thousands of characters cut in the middle (saying how much), so a
/// message about a long path stays readable.
///
/// ```
/// use dist_info::name_lengths::shortened;
/// assert_eq!(shortened("lib/a\nb.so"), "lib/a\\nb.so");
/// let long = format!("pkg/{}", "x".repeat(1000));
/// assert!(shortened(&long).starts_with("pkg/xx") && shortened(&long).contains("…(854 characters)…"));
/// ```
pub fn shortened(path: &str) -> String {
    let count = path.chars().count();
    if count <= SHOWN_PATH {
        return escape_controls(path, &[]).into_owned();
    }
    let (head, tail) = (SHOWN_PATH / 2, SHOWN_PATH / 4);
    let head: String = path.chars().take(head).collect();
    let tail: String = path.chars().skip(count - tail).collect();
    format!(
        "{}…({} characters)…{}",
        escape_controls(&head, &[]),
        count - SHOWN_PATH / 2 - SHOWN_PATH / 4,
        escape_controls(&tail, &[])
    )
}

/// The problems of a set of installed paths (`(path, is a directory)`,
/// in any order): each segment longer than [`NAME_MAX`] once, where it
/// first appears (not once per path below a long directory), then each
/// file too long as a whole (a directory is as long as the files below
/// it, which say it). Each problem with the index of its path.
///
/// ```
/// use dist_info::name_lengths::problems;
/// let long = "n".repeat(300);
/// let paths = [(format!("a/{long}/x"), false), (format!("a/{long}/y"), false), ("a/ok".into(), false)];
/// let found = problems(paths.iter().map(|(p, dir)| (p.as_str(), *dir)));
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].0, 0);
/// ```
pub fn problems<'a>(
    paths: impl IntoIterator<Item = (&'a str, bool)>,
) -> Vec<(usize, LengthProblem)> {
    let mut judged = std::collections::BTreeSet::new();
    let mut found = Vec::new();
    for (index, (path, dir)) in paths.into_iter().enumerate() {
        let problem = match first_long_name(path) {
            Some((segment, down_to)) => {
                if !judged.insert(down_to) {
                    continue;
                }
                LengthProblem::LongName {
                    segment: segment.to_owned(),
                    bytes: segment.len(),
                }
            }
            None if dir => continue,
            None => match check_path(path) {
                Ok(()) => continue,
                Err(problem) => problem,
            },
        };
        found.push((index, problem));
    }
    found
}

/// Checks one installed path: every segment, then the whole. The first
/// problem found.
///
/// ```
/// use dist_info::name_lengths::{LengthProblem, MAX_INSTALLED_PATH, check_path};
/// let deep = "d/".repeat(MAX_INSTALLED_PATH / 2) + "file";
/// assert!(matches!(check_path(&deep), Err(LengthProblem::LongPath { .. })));
/// ```
pub fn check_path(path: &str) -> Result<(), LengthProblem> {
    if let Some((segment, _)) = first_long_name(path) {
        return Err(LengthProblem::LongName {
            segment: segment.to_owned(),
            bytes: segment.len(),
        });
    }
    if path.len() > MAX_INSTALLED_PATH {
        return Err(LengthProblem::LongPath { bytes: path.len() });
    }
    Ok(())
}

/// The first segment of `path` longer than [`NAME_MAX`] bytes, with the
/// path down to it (every path below a long directory name has the same
/// answer, so a caller reports the directory once).
///
/// ```
/// use dist_info::name_lengths::first_long_name;
/// let long = "n".repeat(300);
/// let path = format!("share/{long}/a.txt");
/// assert_eq!(first_long_name(&path), Some((long.as_str(), &path[..306])));
/// assert_eq!(first_long_name("share/doc/a.txt"), None);
/// ```
pub fn first_long_name(path: &str) -> Option<(&str, &str)> {
    let mut end = 0;
    for segment in path.split('/') {
        end += segment.len();
        if segment.len() > NAME_MAX {
            return Some((segment, &path[..end]));
        }
        end += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_are_bytes_of_utf8() {
        assert_eq!(MAX_INSTALLED_PATH, 3070);
        assert_eq!(check_path(&"a".repeat(NAME_MAX)), Ok(()));
        // 128 two-byte characters: 256 bytes, one too many.
        let wide = "é".repeat(128);
        assert_eq!(
            check_path(&format!("pkg/{wide}")),
            Err(LengthProblem::LongName {
                segment: wide.clone(),
                bytes: 256
            })
        );
        let mut at_limit = String::new();
        while at_limit.len() + 101 < MAX_INSTALLED_PATH {
            at_limit.push_str(&"p".repeat(100));
            at_limit.push('/');
        }
        at_limit.push_str(&"q".repeat(MAX_INSTALLED_PATH - at_limit.len()));
        assert_eq!(at_limit.len(), MAX_INSTALLED_PATH);
        assert_eq!(check_path(&at_limit), Ok(()));
        assert_eq!(
            check_path(&format!("{at_limit}x")),
            Err(LengthProblem::LongPath {
                bytes: MAX_INSTALLED_PATH + 1
            })
        );
    }

    #[test]
    fn a_long_name_is_named_before_the_long_path_it_makes() {
        let segment = "s".repeat(4300);
        assert!(matches!(
            check_path(&format!("pkg/{segment}")),
            Err(LengthProblem::LongName { bytes: 4300, .. })
        ));
    }

    #[test]
    fn messages_show_the_start_of_the_name_escaped() {
        let problem = check_path(&format!("pkg/\u{1b}[31m{}", "x".repeat(300))).unwrap_err();
        insta::assert_snapshot!(problem, @"the name `\\u{1b}[31mxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…` is 305 bytes long, more than the 255 bytes a file system holds in one name, so installers fail on it (File name too long)");
        let problem = check_path(&"d/".repeat(2000)).unwrap_err();
        insta::assert_snapshot!(problem, @"the installed path is 4000 bytes long, more than the 3070 bytes that stay within Linux's PATH_MAX of 4096 below a site-packages of up to 1024 bytes, so installers fail on it (File name too long)");
    }
}
