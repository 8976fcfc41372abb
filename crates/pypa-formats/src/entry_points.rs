//! A distribution's `entry_points.txt`: INI sections of `name = value`
//! lines, from which installers write console scripts into the
//! environment's `bin/`.
//!
//! Readers disagree on INI: `importlib.metadata` (pip) strips each line
//! and splits it at `=`, `configparser` also splits at `:`, treats `;` as
//! a comment and indented lines as continuations, uv's parser rejects a
//! repeated key. And a script name is a file name: distlib (pip) joins
//! it to `bin/` as it is. [`EntryPoints::parse`] accepts what all of them
//! read alike (docs/verify.md#one-reading):
//!
//! - the characters of every metadata file
//!   ([`crate::core_metadata::check_characters`]);
//! - empty lines, `#` comments, `[group]` headers, and `name = value`
//!   lines, none of them indented;
//! - each name a script name ([`check_script_name`]: letters, digits and
//!   `-_.+`, not only dots), once per group; each value an object
//!   reference `package.module:attribute` ([`check_object_reference`]);
//!   each group once, and every entry inside one.
//!
//! The same two rules are what the wheel writer accepts.
//!
//! ```
//! use pypa_formats::entry_points::EntryPoints;
//!
//! let parsed = EntryPoints::parse(b"[console_scripts]\nhipcc = rocm_sdk_core._cli:hipcc\n").unwrap();
//! assert_eq!(parsed.group("console_scripts").unwrap()[0].name, "hipcc");
//! assert!(EntryPoints::parse(b"[console_scripts]\n../../evil = a:b\n").is_err());
//! ```

use crate::core_metadata::{MetadataError, check_characters};

/// One `name = value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPoint {
    /// The name (for a script, its file name in `bin/`).
    pub name: String,
    /// The object reference.
    pub value: String,
}

/// The groups of an `entry_points.txt`, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryPoints {
    groups: Vec<(String, Vec<EntryPoint>)>,
}

/// Why an `entry_points.txt` is refused. Line numbers count from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryPointsError {
    /// Bytes or characters every metadata file is refused for.
    #[error(transparent)]
    Characters(#[from] MetadataError),
    /// An indented line (a continuation to `configparser`).
    #[error("line {0} is indented, which configparser reads as part of the line before")]
    Indented(usize),
    /// A line that is no header, entry or comment.
    #[error(
        "line {line}: {text:?} is not a `[group]` header, a `name = value` entry or a `#` comment"
    )]
    Malformed {
        /// Where.
        line: usize,
        /// The line.
        text: String,
    },
    /// An entry before any group.
    #[error("line {0}: an entry before any `[group]` header")]
    NoGroup(usize),
    /// A group given twice.
    #[error("line {line}: the group [{group}] appears twice")]
    RepeatedGroup {
        /// Where.
        line: usize,
        /// The group.
        group: String,
    },
    /// A name given twice in a group.
    #[error("line {line}: {name:?} appears twice in [{group}]")]
    RepeatedName {
        /// Where.
        line: usize,
        /// The group.
        group: String,
        /// The name.
        name: String,
    },
    /// A name or value that breaks its rule.
    #[error("line {line}: {problem}")]
    Entry {
        /// Where.
        line: usize,
        /// What is wrong.
        problem: EntryPointProblem,
    },
}

/// What is wrong with one entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryPointProblem {
    /// The name is no script name.
    #[error(
        "the name {0:?} is not a script name: letters, digits and `-_.+` only, not only dots (it \
         becomes a file name in bin/)"
    )]
    Name(String),
    /// The value is no object reference.
    #[error("the value {0:?} is not `package.module:function`")]
    Value(String),
}

/// Checks a script (entry point) name: ASCII letters, digits and `-_.+`,
/// not empty and not only dots, so it is one plain file name everywhere.
///
/// ```
/// use pypa_formats::entry_points::check_script_name;
/// assert!(check_script_name("amdclang++").is_ok());
/// assert!(check_script_name("..").is_err());
/// assert!(check_script_name("a/b").is_err());
/// ```
pub fn check_script_name(name: &str) -> Result<(), EntryPointProblem> {
    let ok = !name.is_empty()
        && !name.bytes().all(|b| b == b'.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'));
    if ok {
        Ok(())
    } else {
        Err(EntryPointProblem::Name(name.to_owned()))
    }
}

/// Checks an object reference `package.module:attribute.path`: dotted
/// Python identifiers (ASCII) on both sides of one colon, no spaces, no
/// extras.
///
/// ```
/// use pypa_formats::entry_points::check_object_reference;
/// assert!(check_object_reference("rocm_sdk_core._cli:hipcc").is_ok());
/// assert!(check_object_reference("a-b:c").is_err());
/// ```
pub fn check_object_reference(value: &str) -> Result<(), EntryPointProblem> {
    let dotted = |s: &str| {
        !s.is_empty()
            && s.split('.').all(|part| {
                part.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                    && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
    };
    match value.split_once(':') {
        Some((module, attr)) if dotted(module) && dotted(attr) => Ok(()),
        _ => Err(EntryPointProblem::Value(value.to_owned())),
    }
}

impl EntryPoints {
    /// Reads `entry_points.txt` (the module documentation lists what is
    /// refused).
    pub fn parse(bytes: &[u8]) -> Result<Self, EntryPointsError> {
        let text = std::str::from_utf8(bytes).map_err(|_| MetadataError::NotUtf8)?;
        check_characters(text)?;
        let mut groups: Vec<(String, Vec<EntryPoint>)> = Vec::new();
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            let text = raw.strip_suffix('\r').unwrap_or(raw);
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            if text.starts_with([' ', '\t']) {
                return Err(EntryPointsError::Indented(line));
            }
            let malformed = || EntryPointsError::Malformed {
                line,
                text: text.to_owned(),
            };
            if let Some(group) = text.strip_prefix('[') {
                let group = group.strip_suffix(']').ok_or_else(malformed)?;
                let valid = !group.is_empty()
                    && group
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                if !valid {
                    return Err(malformed());
                }
                if groups.iter().any(|(g, _)| g == group) {
                    return Err(EntryPointsError::RepeatedGroup {
                        line,
                        group: group.to_owned(),
                    });
                }
                groups.push((group.to_owned(), Vec::new()));
                continue;
            }
            let (name, value) = text.split_once('=').ok_or_else(malformed)?;
            let (name, value) = (name.trim_end_matches(' '), value.trim_start_matches(' '));
            let entry = |problem| EntryPointsError::Entry { line, problem };
            check_script_name(name).map_err(entry)?;
            check_object_reference(value).map_err(entry)?;
            let Some((group, entries)) = groups.last_mut() else {
                return Err(EntryPointsError::NoGroup(line));
            };
            if entries.iter().any(|e| e.name == name) {
                return Err(EntryPointsError::RepeatedName {
                    line,
                    group: group.clone(),
                    name: name.to_owned(),
                });
            }
            entries.push(EntryPoint {
                name: name.to_owned(),
                value: value.to_owned(),
            });
        }
        Ok(Self { groups })
    }

    /// The entries of `group`, if it is there.
    pub fn group(&self, group: &str) -> Option<&[EntryPoint]> {
        self.groups
            .iter()
            .find(|(g, _)| g == group)
            .map(|(_, entries)| entries.as_slice())
    }

    /// Every group and its entries, in order.
    pub fn groups(&self) -> impl Iterator<Item = (&str, &[EntryPoint])> {
        self.groups.iter().map(|(g, e)| (g.as_str(), e.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_readers_read_alike_is_accepted() {
        let parsed = EntryPoints::parse(
            b"# made here\r\n[console_scripts]\r\nhipcc = rocm_sdk_core._cli:hipcc\r\nx=a:b\r\n\r\n[gui_scripts]\n",
        )
        .unwrap();
        assert_eq!(parsed.group("console_scripts").unwrap().len(), 2);
        assert_eq!(parsed.group("gui_scripts"), Some(&[][..]));
    }

    #[test]
    fn what_readers_read_differently_is_refused() {
        let err = |text: &str| EntryPoints::parse(text.as_bytes()).unwrap_err();
        assert_eq!(err("[c]\n  x = a:b\n"), EntryPointsError::Indented(2));
        assert!(matches!(
            err("[c]\n; x = a:b\n"),
            EntryPointsError::Entry { line: 2, .. }
        ));
        assert!(matches!(
            err("[c]\nx: a:b\n"),
            EntryPointsError::Malformed { line: 2, .. }
        ));
        assert_eq!(err("x = a:b\n"), EntryPointsError::NoGroup(1));
        assert!(matches!(
            err("[c]\nx = a:b\nx = a:c\n"),
            EntryPointsError::RepeatedName { line: 3, .. }
        ));
        assert!(matches!(
            err("[c]\n[c]\n"),
            EntryPointsError::RepeatedGroup { line: 2, .. }
        ));
        assert!(matches!(
            err("[c]\nx = a:b\rbin = a:c\n"),
            EntryPointsError::Characters(_)
        ));
        assert!(matches!(
            err("[c]\nx = a:b [extra]\n"),
            EntryPointsError::Entry { .. }
        ));
    }
}
