//! `artifact_manifest.txt`: the base directories of an artifact, checked.

use crate::{Error, Result};

/// The file that lists an artifact's base directories.
pub const MANIFEST_FILE: &str = "artifact_manifest.txt";

/// Parses a manifest: one relative path per line, empty lines ignored.
///
/// Lines are normalised (`.` segments, repeated and trailing `/` removed);
/// an absolute line or one with a `..` segment is an error naming the
/// artifact and the line, since it would reach outside the artifact.
pub fn parse_manifest(artifact: &str, text: &str) -> Result<Vec<String>> {
    let mut prefixes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let unsafe_line = || Error::UnsafeManifestLine {
            artifact: artifact.to_owned(),
            line_number: index + 1,
            line: line.to_owned(),
        };
        if line.starts_with('/') || line.starts_with('\\') || has_drive_prefix(line) {
            return Err(unsafe_line());
        }
        let mut segments = Vec::new();
        for segment in line.split('/') {
            match segment {
                "" | "." => {}
                ".." => return Err(unsafe_line()),
                s => segments.push(s),
            }
        }
        if segments.is_empty() {
            // `.` or `./`: the artifact root itself is a legal base directory.
            prefixes.push(String::new());
        } else {
            prefixes.push(segments.join("/"));
        }
    }
    Ok(prefixes)
}

/// `C:` style prefixes are absolute on Windows; refuse them everywhere.
fn has_drive_prefix(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_and_skips_empty_lines() {
        let p = parse_manifest("a_b_c", "core/hip/stage\n\n./x//y/\r\n.\n").unwrap();
        assert_eq!(p, ["core/hip/stage", "x/y", ""]);
    }

    #[test]
    fn refuses_absolute_and_parent_lines_naming_artifact_and_line() {
        for (text, line_number) in [
            ("ok\n/etc", 2),
            ("a/../../x", 1),
            ("ok\n\nC:/x", 3),
            ("..", 1),
        ] {
            let e = parse_manifest("base_lib_generic", text).unwrap_err();
            let Error::UnsafeManifestLine {
                artifact,
                line_number: n,
                ..
            } = &e
            else {
                panic!("{e}")
            };
            assert_eq!((artifact.as_str(), *n), ("base_lib_generic", line_number));
            assert!(e.to_string().contains("base_lib_generic"));
        }
    }
}
