//! Names Windows cannot hold (docs/windows.md#names), the rule the build
//! (planning a package for a Windows tag) and the install (unpacking the
//! devel tree on Windows) share, beside the devel tree's member rules
//! (`devel_tree`), which hold on every platform.
//!
//! The rules, in one place:
//! - no path segment is a DOS device name ([`DEVICE_NAMES`]: `CON`, `PRN`,
//!   `AUX`, `NUL`, `COM1`-`COM9`, `LPT1`-`LPT9`, the superscripts
//!   `COM¹²³`/`LPT¹²³`, `CONIN$`, `CONOUT$`), in any case, with or without
//!   an extension (`aux.txt`, `nul.tar.gz`, `con .h`): Windows opens the
//!   device instead of a file, and a read of `AUX` waits forever;
//! - no segment ends in a dot or a space (Windows strips them, so `a.` and
//!   `a` are one file);
//! - no segment holds `< > : " / \ | ? *` or a control character
//!   (U+0000-U+001F); a `:` makes NTFS write an alternate data stream of
//!   the name before it (`k_gfx90a:xnack+.kpack` becomes a stream of
//!   `k_gfx90a`);
//! - no two paths installed together differ only in case ([`fold_case`],
//!   [`case_collisions`]): on Windows one overwrites the other, and
//!   uninstalling one removes the other's file;
//! - an installed path longer than [`MAX_PATH`] below a typical
//!   site-packages ([`TYPICAL_SITE_PACKAGES`]) is worth a warning
//!   ([`installed_length`]): without long paths enabled, installers fail
//!   on it (or drop it).
//!
//! These are the rules of Python's `os.path.isreserved` (Python 3.13) and
//! of Microsoft's "Naming Files, Paths, and Namespaces". Pure: paths are
//! `/`-separated and relative to site-packages.
//!
//! ```
//! use dist_info::windows_names::{case_collisions, check_path};
//! assert!(check_path("_rocm_sdk_core/bin/amdhip64_7.dll").is_ok());
//! assert!(check_path("_rocm_sdk_core/bin/aux.txt").is_err());
//! assert!(check_path("_rocm_sdk_core/share/CON/x").is_err());
//! assert_eq!(
//!     case_collisions(["lib/Foo.dll", "lib/foo.dll", "lib/bar.dll"]),
//!     [("lib/Foo.dll".to_owned(), "lib/foo.dll".to_owned())]
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet};

/// DOS device names, upper case: a path segment whose part before the
/// first `.` is one of these (trailing spaces ignored, any case) names the
/// device on Windows.
pub const DEVICE_NAMES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "CONIN$",
    "CONOUT$",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// Characters no Windows file name may hold, besides the control
/// characters U+0000-U+001F.
pub const RESERVED_CHARACTERS: &[char] = &['<', '>', ':', '"', '/', '\\', '|', '?', '*'];

/// Windows' `MAX_PATH`: a path must be shorter (the count includes the
/// terminating NUL), in UTF-16 code units, unless long paths are enabled
/// (`LongPathsEnabled`) and the program opted in.
pub const MAX_PATH: usize = 260;

/// A typical site-packages of a Windows user: the per-user install of
/// python.org's Python 3.12 for the user `username` (75 characters, 76
/// with the `\` that follows). Installed paths are judged below it; a virtual
/// environment in a project directory is often longer.
pub const TYPICAL_SITE_PACKAGES: &str =
    r"C:\Users\username\AppData\Local\Programs\Python\Python312\Lib\site-packages";

/// Why Windows cannot hold a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameProblem {
    /// A segment names a DOS device.
    #[error(
        "`{segment}` is the device {device} to Windows, which opens the device instead of a file"
    )]
    DeviceName {
        /// The segment (`aux.txt`).
        segment: String,
        /// The device it names (`AUX`).
        device: &'static str,
    },
    /// A segment ends in a dot or a space, which Windows strips.
    #[error("`{segment}` ends in a dot or a space, which Windows strips from names")]
    TrailingDotOrSpace {
        /// The segment.
        segment: String,
    },
    /// A segment holds `:`: NTFS writes an alternate data stream of the
    /// name before it.
    #[error("`{segment}` holds `:`, which NTFS takes as a stream of `{stream_of}`")]
    Colon {
        /// The segment (`k_gfx90a:xnack+.kpack`).
        segment: String,
        /// The name before the first `:` (`k_gfx90a`).
        stream_of: String,
    },
    /// A segment holds another character Windows reserves.
    #[error("`{}` holds {}, which Windows does not allow in names", .segment.escape_debug(), describe(*.character))]
    ReservedCharacter {
        /// The segment.
        segment: String,
        /// The character.
        character: char,
    },
}

fn describe(character: char) -> String {
    if character.is_control() {
        format!("the control character U+{:04X}", u32::from(character))
    } else {
        format!("`{character}`")
    }
}

/// Checks one path segment (a file or directory name) against the name
/// rules. `.` and `..` pass (the member rules of `devel_tree` judge them).
///
/// ```
/// use dist_info::windows_names::{NameProblem, check_segment};
/// assert_eq!(check_segment("hipcc.exe"), Ok(()));
/// assert_eq!(
///     check_segment("Nul.tar.gz"),
///     Err(NameProblem::DeviceName { segment: "Nul.tar.gz".into(), device: "NUL" })
/// );
/// assert!(check_segment("LPT\u{b9}").is_err());
/// assert!(check_segment("COM10").is_ok());
/// ```
pub fn check_segment(segment: &str) -> Result<(), NameProblem> {
    if segment.is_empty() || segment == "." || segment == ".." {
        return Ok(());
    }
    if let Some(character) = segment
        .chars()
        .find(|c| u32::from(*c) < 0x20 || RESERVED_CHARACTERS.contains(c))
    {
        return Err(if character == ':' {
            NameProblem::Colon {
                segment: segment.to_owned(),
                stream_of: segment.split(':').next().unwrap_or_default().to_owned(),
            }
        } else {
            NameProblem::ReservedCharacter {
                segment: segment.to_owned(),
                character,
            }
        });
    }
    if segment.ends_with(['.', ' ']) {
        return Err(NameProblem::TrailingDotOrSpace {
            segment: segment.to_owned(),
        });
    }
    let stem = segment
        .split('.')
        .next()
        .unwrap_or_default()
        .trim_end_matches(' ');
    if let Some(device) = DEVICE_NAMES
        .iter()
        .find(|d| stem.chars().map(upper).eq(d.chars()))
    {
        return Err(NameProblem::DeviceName {
            segment: segment.to_owned(),
            device,
        });
    }
    Ok(())
}

/// Checks every segment of the `/`-separated path `path`; the first
/// problem found, from the root down.
pub fn check_path(path: &str) -> Result<(), NameProblem> {
    path.split('/').try_for_each(check_segment)
}

/// The first segment of `path` Windows cannot hold: the path down to it
/// and why. Every path below a bad directory has the same answer, so a
/// caller reports the directory once.
///
/// ```
/// use dist_info::windows_names::first_bad_name;
/// assert_eq!(first_bad_name("share/CON/a.txt").map(|(at, _)| at), Some("share/CON"));
/// assert_eq!(first_bad_name("share/doc/a.txt"), None);
/// ```
pub fn first_bad_name(path: &str) -> Option<(&str, NameProblem)> {
    let mut end = 0;
    for segment in path.split('/') {
        end += segment.len();
        if let Err(problem) = check_segment(segment) {
            return Some((&path[..end], problem));
        }
        end += 1;
    }
    None
}

/// A character as Windows compares names: NTFS upper-cases each UTF-16
/// code unit by its table (simple case mapping), so a character whose
/// upper case is several characters (`ß`) and one outside the Basic
/// Multilingual Plane stay as they are.
fn upper(c: char) -> char {
    if u32::from(c) > 0xFFFF {
        return c;
    }
    let mut mapped = c.to_uppercase();
    match (mapped.next(), mapped.next()) {
        (Some(single), None) => single,
        _ => c,
    }
}

/// `path` as Windows compares it: two paths with the same fold name one
/// file.
///
/// ```
/// use dist_info::windows_names::fold_case;
/// assert_eq!(fold_case("include/HIP/hip.h"), fold_case("include/hip/HIP.H"));
/// assert_ne!(fold_case("a/b"), fold_case("a/c"));
/// ```
pub fn fold_case(path: &str) -> String {
    path.chars().map(upper).collect()
}

/// The pairs of `paths` (`/`-separated, installed together) that Windows
/// takes for one path, each pair sorted and named where the spellings
/// first differ: the directories of the paths count too, so `include/HIP/a.h`
/// beside `include/hip/b.h` gives the pair (`include/HIP`, `include/hip`)
/// and not one pair per file below them. The same spelling twice is no
/// collision. Sorted.
pub fn case_collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut spellings: BTreeSet<&str> = BTreeSet::new();
    for path in paths {
        spellings.insert(path);
        spellings.extend(path.match_indices('/').map(|(i, _)| &path[..i]));
    }
    let mut by_fold: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for spelling in spellings {
        by_fold
            .entry(fold_case(spelling))
            .or_default()
            .push(spelling);
    }
    let mut pairs = Vec::new();
    for same in by_fold.values().filter(|s| s.len() > 1) {
        for (i, first) in same.iter().enumerate() {
            // Spellings whose parents already differ collide at the parent.
            for second in same[i + 1..].iter().filter(|s| parent(s) == parent(first)) {
                pairs.push(((*first).to_owned(), (*second).to_owned()));
            }
        }
    }
    pairs.sort();
    pairs
}

/// The directory of a `/`-separated path (`""` at the top).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The length of the installed path of `relpath` (relative to
/// site-packages) below [`TYPICAL_SITE_PACKAGES`], in UTF-16 code units as
/// Windows counts; it is too long for Windows when it is [`MAX_PATH`] or
/// more.
///
/// ```
/// use dist_info::windows_names::{MAX_PATH, installed_length};
/// assert_eq!(installed_length("a"), 77);
/// assert!(installed_length(&"x/".repeat(100)) >= MAX_PATH);
/// ```
pub fn installed_length(relpath: &str) -> usize {
    TYPICAL_SITE_PACKAGES.encode_utf16().count() + 1 + relpath.encode_utf16().count()
}

/// The installed paths among `relpaths` that reach [`MAX_PATH`] below a
/// typical site-packages: how many, and the longest (the first of equals
/// in the order given) with its installed length.
pub fn over_max_path<'a>(
    relpaths: impl IntoIterator<Item = &'a str>,
) -> Option<(usize, &'a str, usize)> {
    let mut found: Option<(usize, &str, usize)> = None;
    for path in relpaths {
        let length = installed_length(path);
        if length < MAX_PATH {
            continue;
        }
        found = Some(match found {
            None => (1, path, length),
            Some((n, longest, most)) if most >= length => (n + 1, longest, most),
            Some((n, _, _)) => (n + 1, path, length),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_windows_cannot_hold() {
        let device = |segment: &str, device| {
            Err(NameProblem::DeviceName {
                segment: segment.to_owned(),
                device,
            })
        };
        let table: &[(&str, Result<(), NameProblem>)] = &[
            ("amdhip64_7.dll", Ok(())),
            ("hipcc.exe", Ok(())),
            (".kpack", Ok(())),
            ("..", Ok(())),
            ("CON", device("CON", "CON")),
            ("con", device("con", "CON")),
            ("aux.txt", device("aux.txt", "AUX")),
            ("nul.dll", device("nul.dll", "NUL")),
            ("Nul.tar.gz", device("Nul.tar.gz", "NUL")),
            ("PRN .h", device("PRN .h", "PRN")),
            ("COM1", device("COM1", "COM1")),
            ("com9.x", device("com9.x", "COM9")),
            ("LPT9.log", device("LPT9.log", "LPT9")),
            ("COM\u{b2}", device("COM\u{b2}", "COM\u{b2}")),
            ("lpt\u{b3}.txt", device("lpt\u{b3}.txt", "LPT\u{b3}")),
            ("conin$", device("conin$", "CONIN$")),
            ("CONOUT$.x", device("CONOUT$.x", "CONOUT$")),
            // Near misses Windows holds.
            ("COM10", Ok(())),
            ("LPT0x", Ok(())),
            ("console", Ok(())),
            ("x.con", Ok(())),
            ("auxiliary.txt", Ok(())),
            ("_CON", Ok(())),
            (
                "name.",
                Err(NameProblem::TrailingDotOrSpace {
                    segment: "name.".into(),
                }),
            ),
            (
                "name ",
                Err(NameProblem::TrailingDotOrSpace {
                    segment: "name ".into(),
                }),
            ),
            (
                "k_gfx90a:xnack+.kpack",
                Err(NameProblem::Colon {
                    segment: "k_gfx90a:xnack+.kpack".into(),
                    stream_of: "k_gfx90a".into(),
                }),
            ),
        ];
        for (segment, expected) in table {
            assert_eq!(&check_segment(segment), expected, "{segment:?}");
        }
        for character in ['<', '>', '"', '|', '?', '*', '\\', '\n', '\0', '\u{1f}'] {
            let segment = format!("a{character}b");
            assert_eq!(
                check_segment(&segment),
                Err(NameProblem::ReservedCharacter {
                    segment: segment.clone(),
                    character
                }),
                "{segment:?}"
            );
        }
        // DEL and the C1 controls are names Windows holds (the general
        // member rules refuse control characters on every platform).
        assert_eq!(check_segment("a\u{7f}b"), Ok(()));
    }

    #[test]
    fn every_segment_of_a_path_is_judged() {
        assert_eq!(check_path("_rocm_sdk_devel/include/hip/hip.h"), Ok(()));
        for bad in [
            "share/CON/x",
            "CON/x",
            "bin/aux.txt",
            "a/b./c",
            "a/b/c ",
            "lib/x:y",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn messages_say_what_windows_does() {
        let text = |s: &str| check_segment(s).unwrap_err().to_string();
        insta::assert_snapshot!(text("aux.txt"), @"`aux.txt` is the device AUX to Windows, which opens the device instead of a file");
        insta::assert_snapshot!(text("a. "), @"`a. ` ends in a dot or a space, which Windows strips from names");
        insta::assert_snapshot!(text("rand_lib_gfx90a:xnack+.kpack"), @"`rand_lib_gfx90a:xnack+.kpack` holds `:`, which NTFS takes as a stream of `rand_lib_gfx90a`");
        insta::assert_snapshot!(text("a?b"), @"`a?b` holds `?`, which Windows does not allow in names");
        insta::assert_snapshot!(text("a\nb"), @r"`a\nb` holds the control character U+000A, which Windows does not allow in names");
    }

    #[test]
    fn case_collisions_are_named_where_the_spellings_first_differ() {
        assert_eq!(
            case_collisions([
                "include/HIP/a.h",
                "include/hip/a.h",
                "include/hip/b.h",
                "lib/Foo.dll",
                "lib/foo.dll",
                "lib/foo.dll",
                "lib/bar.dll",
                "share/\u{e9}t\u{e9}",
                "share/\u{c9}T\u{c9}",
                "share/stra\u{df}e",
                "share/STRASSE",
            ]),
            [
                ("include/HIP".to_owned(), "include/hip".to_owned()),
                ("lib/Foo.dll".to_owned(), "lib/foo.dll".to_owned()),
                (
                    "share/\u{c9}T\u{c9}".to_owned(),
                    "share/\u{e9}t\u{e9}".to_owned()
                ),
            ]
        );
        // A file and a directory spelled alike collide too.
        assert_eq!(
            case_collisions(["a/Readme", "a/README/x"]),
            [("a/README".to_owned(), "a/Readme".to_owned())]
        );
        assert!(case_collisions(["a/b", "a/c", "b/a"]).is_empty());
    }

    #[test]
    fn long_paths_are_counted_below_a_typical_site_packages() {
        assert_eq!(TYPICAL_SITE_PACKAGES.len(), 75);
        let fits = "x".repeat(MAX_PATH - 77);
        let reaches = "x".repeat(MAX_PATH - 76);
        let longer = "y".repeat(MAX_PATH);
        assert_eq!(installed_length(&fits), MAX_PATH - 1);
        assert_eq!(over_max_path([fits.as_str()]), None);
        assert_eq!(
            over_max_path([fits.as_str(), reaches.as_str(), longer.as_str(), "z"]),
            Some((2, longer.as_str(), 76 + MAX_PATH))
        );
        // Windows counts UTF-16 code units: one for `é`, two for an emoji.
        assert_eq!(installed_length("\u{e9}"), 77);
        assert_eq!(installed_length("\u{1f600}"), 78);
    }
}
