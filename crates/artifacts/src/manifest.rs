//! `artifact_manifest.txt`: the base directories of an artifact, checked.
//!
//! What a manifest line is (docs/artifacts.md, "Manifests"): the file is
//! UTF-8 text, and a UTF-8 byte-order mark at its very start is not part
//! of the first line (editors on Windows write one); lines end at `\n`,
//! with an optional `\r` before it; a line that is empty or holds only
//! whitespace names nothing and is skipped; any other line is exactly one
//! relative path, as the directory is named. A line that starts or ends
//! with whitespace, or holds a control character, is refused naming the
//! artifact and the line: trimming it could read a directory other than
//! the one the build staged, and skipping it would drop the artifact's
//! files without a word.

use pypa_formats::member::check_file_name;

use crate::{Error, Result};

/// The file that lists an artifact's base directories.
pub const MANIFEST_FILE: &str = "artifact_manifest.txt";

/// The UTF-8 byte-order mark, as a character.
const BYTE_ORDER_MARK: char = '\u{feff}';

/// Parses a manifest: one relative path per line, empty lines ignored.
///
/// A leading byte-order mark is dropped. Lines are normalised (`.`
/// segments, repeated and trailing `/` removed); a line with leading or
/// trailing whitespace or a control character, an absolute line, or one
/// with a `..` segment is an error naming the artifact and the line.
pub fn parse_manifest(artifact: &str, text: &str) -> Result<Vec<String>> {
    let text = text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text);
    let mut prefixes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let refused = |problem| Error::BadManifestLine {
            artifact: artifact.to_owned(),
            line_number: index + 1,
            line: line.to_owned(),
            problem,
        };
        if line.starts_with(char::is_whitespace) || line.ends_with(char::is_whitespace) {
            return Err(refused("starts or ends with whitespace"));
        }
        if line
            .split(['/', '\\'])
            .any(|name| check_file_name(name).is_err())
        {
            return Err(refused("holds a control character"));
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
    fn a_leading_byte_order_mark_and_whitespace_only_lines_name_nothing() {
        let p = parse_manifest("a_b_c", "\u{feff}core/clr/stage\r\n \t\nx\n").unwrap();
        assert_eq!(p, ["core/clr/stage", "x"]);
    }

    #[test]
    fn whitespace_around_a_path_and_control_characters_are_refused_naming_the_line() {
        let error = |text| {
            parse_manifest("core-hip_lib_generic", text)
                .unwrap_err()
                .to_string()
        };
        insta::assert_snapshot!(error("core/clr/stage \n"), @r#"core-hip_lib_generic: artifact_manifest.txt line 1 ("core/clr/stage ") starts or ends with whitespace; a manifest line is one path, exactly as the directory is named: fix the line"#);
        insta::assert_snapshot!(error("a\n\tcore/clr/stage\n"), @r#"core-hip_lib_generic: artifact_manifest.txt line 2 ("\tcore/clr/stage") starts or ends with whitespace; a manifest line is one path, exactly as the directory is named: fix the line"#);
        insta::assert_snapshot!(error("core/\u{7}clr\n"), @r#"core-hip_lib_generic: artifact_manifest.txt line 1 ("core/\u{7}clr") holds a control character; a manifest line is one path, exactly as the directory is named: fix the line"#);
        // A mark that is not at the very start is part of the line: no
        // directory has that name, so the line is skipped (and the
        // artifact, if it then contributes nothing, is warned about).
        assert_eq!(
            parse_manifest("a", "x\n\u{feff}y").unwrap(),
            ["x", "\u{feff}y"]
        );
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
