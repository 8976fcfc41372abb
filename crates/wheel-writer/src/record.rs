//! The `RECORD` file: one CSV row per member with its hash and size.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What a sink learned about a member while writing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemberDigest {
    /// SHA-256 of the uncompressed bytes.
    pub sha256: [u8; 32],
    /// Uncompressed size in bytes.
    pub size: u64,
}

impl MemberDigest {
    /// The `RECORD` hash field: `sha256=` and URL-safe base64 without padding.
    pub fn record_hash(&self) -> String {
        format!("sha256={}", URL_SAFE_NO_PAD.encode(self.sha256))
    }
}

/// One row of `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEntry {
    /// The member path.
    pub path: String,
    /// `algorithm=urlsafe-b64-digest`, absent for `RECORD` itself.
    pub hash: Option<String>,
    /// Size in bytes, absent for `RECORD` itself.
    pub size: Option<u64>,
}

impl RecordEntry {
    /// The row for a written member.
    pub fn for_member(path: &str, digest: &MemberDigest) -> Self {
        Self {
            path: path.to_owned(),
            hash: Some(digest.record_hash()),
            size: Some(digest.size),
        }
    }
}

/// Renders rows as CSV the way Python's `csv` module writes them, with LF
/// line ends (fields quoted only when they hold `,`, `"`, CR or LF).
pub fn render_record(entries: &[RecordEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        push_field(&mut out, &entry.path);
        out.push(',');
        if let Some(hash) = &entry.hash {
            push_field(&mut out, hash);
        }
        out.push(',');
        if let Some(size) = entry.size {
            out.push_str(&size.to_string());
        }
        out.push('\n');
    }
    out
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

/// A `RECORD` line that is not three CSV fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSyntaxError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: &'static str,
}

impl fmt::Display for RecordSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Parses `RECORD` text (LF or CRLF line ends, Python `csv` quoting).
pub fn parse_record(text: &str) -> Result<Vec<RecordEntry>, RecordSyntaxError> {
    let mut entries = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut chars = text.chars().peekable();
    let mut row_started = false;
    let finish_row = |fields: &mut Vec<String>, line: usize| -> Result<Option<RecordEntry>, _> {
        let row = std::mem::take(fields);
        let [path, hash, size]: [String; 3] = row.try_into().map_err(|_| RecordSyntaxError {
            line,
            reason: "expected three fields: path, hash, size",
        })?;
        if path.is_empty() {
            return Err(RecordSyntaxError {
                line,
                reason: "the path is empty",
            });
        }
        let size = if size.is_empty() {
            None
        } else {
            Some(size.parse().map_err(|_| RecordSyntaxError {
                line,
                reason: "the size is not a number",
            })?)
        };
        Ok(Some(RecordEntry {
            path,
            hash: (!hash.is_empty()).then_some(hash),
            size,
        }))
    };
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    quoted = false;
                }
            } else {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
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
                    entries.extend(finish_row(&mut fields, line)?);
                }
                row_started = false;
                line += 1;
            }
            c => {
                field.push(c);
                row_started = true;
            }
        }
    }
    if quoted {
        return Err(RecordSyntaxError {
            line,
            reason: "a quoted field is not closed",
        });
    }
    if row_started || !field.is_empty() {
        fields.push(field);
        entries.extend(finish_row(&mut fields, line)?);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        let entries = vec![
            RecordEntry {
                path: "a,b/\"c\".txt".into(),
                hash: Some("sha256=x".into()),
                size: Some(3),
            },
            RecordEntry {
                path: "x.dist-info/RECORD".into(),
                hash: None,
                size: None,
            },
        ];
        let text = render_record(&entries);
        assert_eq!(
            text,
            "\"a,b/\"\"c\"\".txt\",sha256=x,3\nx.dist-info/RECORD,,\n"
        );
        assert_eq!(parse_record(&text).unwrap(), entries);
        assert_eq!(parse_record(&text.replace('\n', "\r\n")).unwrap(), entries);
    }

    #[test]
    fn malformed_rows_are_reported() {
        assert_eq!(parse_record("a,b\n").unwrap_err().line, 1);
        assert_eq!(parse_record("a,,\nb,,x\n").unwrap_err().line, 2);
    }
}
