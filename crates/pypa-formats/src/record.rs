//! A distribution's `RECORD` (the wheel spec's CSV of `path,hash,size`
//! rows), read and written the way Python's `csv` module does, which is
//! what pip and uv use: a field is quoted only when it holds `,`, `"`, CR
//! or LF, and a `"` inside quotes is doubled. This is the one codec of the
//! workspace; the wheel writer, the devel unpacker and `rocm-sdk test`
//! all go through it.

use std::fmt;

/// One row of a `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEntry {
    /// The path as written: relative to site-packages, `/`-separated
    /// (script rows of some installers start with `../`).
    pub path: String,
    /// `algorithm=digest` (`sha256=` and URL-safe base64 without padding),
    /// when the row has one.
    pub hash: Option<String>,
    /// The size in bytes, when the row has one.
    pub size: Option<u64>,
}

impl RecordEntry {
    /// A row without hash and size: how installers list files they create
    /// (`RECORD` itself, `.pyc` files, an unpacked tree).
    pub fn unhashed(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            hash: None,
            size: None,
        }
    }

    /// The digest of a `sha256=` hash, without its prefix.
    pub fn sha256(&self) -> Option<&str> {
        self.hash.as_deref()?.strip_prefix("sha256=")
    }
}

/// A `RECORD` line that is not three CSV fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct RecordSyntaxError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: &'static str,
}

/// Renders rows with the given line end (`"\n"` for a wheel's RECORD).
pub fn render_record(entries: &[RecordEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        push_row(&mut out, entry, "\n");
    }
    out
}

/// Appends one row and `eol` to `out`.
pub fn push_row(out: &mut String, entry: &RecordEntry, eol: &str) {
    push_field(out, &entry.path);
    out.push(',');
    if let Some(hash) = &entry.hash {
        push_field(out, hash);
    }
    out.push(',');
    if let Some(size) = entry.size {
        out.push_str(&size.to_string());
    }
    out.push_str(eol);
}

fn push_field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// Whether a `RECORD`'s first line ends with CRLF (pip on Windows writes
/// them so; rows appended later keep the file's style).
pub fn uses_crlf(text: &str) -> bool {
    text.find('\n').is_some_and(|i| text[..i].ends_with('\r'))
}

/// Parses `RECORD` text (LF or CRLF line ends, quoted fields that may span
/// lines). Blank lines are skipped; every other row must have exactly three
/// fields, a non-empty path and a numeric or empty size.
pub fn parse_record(text: &str) -> Result<Vec<RecordEntry>, RecordSyntaxError> {
    let mut entries = Vec::new();
    each_row(text, |entry| {
        entries.push(entry);
        Ok(())
    })?;
    Ok(entries)
}

/// Why the `RECORD` of a package is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PackageRecordError {
    /// Bytes or characters no metadata file of a package may hold (a
    /// carriage return alone, a control character or a line separator,
    /// where Python's `splitlines` would cut a row).
    #[error(transparent)]
    Characters(#[from] crate::core_metadata::MetadataError),
    /// A row that is not three CSV fields.
    #[error(transparent)]
    Syntax(#[from] RecordSyntaxError),
    /// More rows than the package has members.
    #[error("it has more than {0} rows, more than the package has members")]
    TooManyRows(usize),
}

/// Parses the `RECORD` of a package this process did not write: UTF-8,
/// the characters of every metadata file
/// ([`check_characters`](crate::core_metadata::check_characters)), and
/// at most `max_rows` rows (a package's member count: so a `RECORD` of
/// millions of tiny rows is refused before they are held in memory).
pub fn parse_package_record(
    bytes: &[u8],
    max_rows: usize,
) -> Result<Vec<RecordEntry>, PackageRecordError> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| crate::core_metadata::MetadataError::NotUtf8)?;
    crate::core_metadata::check_characters(text)?;
    let mut entries = Vec::new();
    let mut too_many = false;
    each_row(text, |entry| {
        if entries.len() == max_rows {
            too_many = true;
            return Err(RecordSyntaxError {
                line: 0,
                reason: "too many rows",
            });
        }
        entries.push(entry);
        Ok(())
    })
    .map_err(|e| {
        if too_many {
            PackageRecordError::TooManyRows(max_rows)
        } else {
            PackageRecordError::Syntax(e)
        }
    })?;
    Ok(entries)
}

/// Calls `row` for each row of `text`, in order.
fn each_row(
    text: &str,
    mut row: impl FnMut(RecordEntry) -> Result<(), RecordSyntaxError>,
) -> Result<(), RecordSyntaxError> {
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut row_line = 1;
    let mut row_started = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => {
                quoted = true;
                row_started = true;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                row_started = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                if row_started || !field.is_empty() {
                    fields.push(std::mem::take(&mut field));
                    row(entry(std::mem::take(&mut fields), row_line)?)?;
                }
                row_started = false;
                line += 1;
                row_line = line;
            }
            c => {
                field.push(c);
                row_started = true;
            }
        }
    }
    if quoted {
        return Err(RecordSyntaxError {
            line: row_line,
            reason: "a quoted field is not closed",
        });
    }
    if row_started || !field.is_empty() {
        fields.push(field);
        row(entry(fields, row_line)?)?;
    }
    Ok(())
}

fn entry(fields: Vec<String>, line: usize) -> Result<RecordEntry, RecordSyntaxError> {
    let error = |reason| RecordSyntaxError { line, reason };
    let [path, hash, size]: [String; 3] = fields
        .try_into()
        .map_err(|_| error("expected three fields: path, hash, size"))?;
    if path.is_empty() {
        return Err(error("the path is empty"));
    }
    let size = if size.is_empty() {
        None
    } else {
        Some(
            size.parse()
                .map_err(|_| error("the size is not a number"))?,
        )
    };
    Ok(RecordEntry {
        path,
        hash: (!hash.is_empty()).then_some(hash),
        size,
    })
}

impl fmt::Display for RecordEntry {
    /// The row as `RECORD` holds it, without its line end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut row = String::new();
        push_row(&mut row, self, "");
        f.write_str(&row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, hash: Option<&str>, size: Option<u64>) -> RecordEntry {
        RecordEntry {
            path: path.into(),
            hash: hash.map(Into::into),
            size,
        }
    }

    #[test]
    fn quoting_round_trips_in_both_line_ends() {
        let entries = vec![
            row("a,b/\"c\".txt", Some("sha256=x"), Some(3)),
            row("line\nbreak", None, None),
            row("x.dist-info/RECORD", None, None),
        ];
        let text = render_record(&entries);
        assert_eq!(
            text,
            "\"a,b/\"\"c\"\".txt\",sha256=x,3\n\"line\nbreak\",,\nx.dist-info/RECORD,,\n"
        );
        assert_eq!(parse_record(&text).unwrap(), entries);
        let crlf = text.replace(",\n", ",\r\n").replace("3\n", "3\r\n");
        assert!(uses_crlf(&crlf) && !uses_crlf(&text));
        assert_eq!(parse_record(&crlf).unwrap(), entries);
    }

    #[test]
    fn blank_lines_and_a_missing_final_newline() {
        assert_eq!(
            parse_record("\na,,\n\r\nb,sha256=y,1").unwrap(),
            [row("a", None, None), row("b", Some("sha256=y"), Some(1))]
        );
    }

    #[test]
    fn malformed_rows_name_their_line() {
        let err = |text| parse_record(text).unwrap_err();
        assert_eq!(err("a,b\n").line, 1);
        assert_eq!(err("a,,\nb,,x\n").reason, "the size is not a number");
        assert_eq!(err("a,,\n,,\n").reason, "the path is empty");
        assert_eq!(err("a,,\n\"b,,\n").line, 2);
        assert_eq!(err("\"x\ny\",,\nz,,,\n").line, 3);
    }

    #[test]
    fn a_package_record_is_bounded_and_plain() {
        assert_eq!(parse_package_record(b"a,,\nb,,\n", 2).unwrap().len(), 2);
        assert_eq!(
            parse_package_record(b"a,,\nb,,\nc,,\n", 2),
            Err(PackageRecordError::TooManyRows(2))
        );
        // Blank lines are no rows.
        assert!(
            parse_package_record(&b"\n".repeat(1000), 1)
                .unwrap()
                .is_empty()
        );
        assert!(matches!(
            parse_package_record(b"a,,\rb,,\n", 5),
            Err(PackageRecordError::Characters(_))
        ));
    }

    #[test]
    fn sha256_strips_its_prefix() {
        assert_eq!(row("a", Some("sha256=abc"), None).sha256(), Some("abc"));
        assert_eq!(row("a", Some("md5=abc"), None).sha256(), None);
        assert_eq!(RecordEntry::unhashed("a").to_string(), "a,,");
    }
}
