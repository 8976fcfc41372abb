//! A distribution's RECORD the way pip reads and writes it: appending one
//! CSV row `path,,` per file, in the RECORD's own line-ending style, each
//! path once; and reading the row of one file.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::error::Error;

/// Appends a `path,,` row for every path of `paths` that RECORD does not
/// list yet, in one `write` so a killed process leaves whole rows. Returns
/// how many rows were added.
pub(crate) fn append<'a>(
    record: &Path,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<usize, Error> {
    let existing = std::fs::read(record).map_err(|e| Error::read("read", record, e))?;
    let eol: &[u8] = if uses_crlf(&existing) { b"\r\n" } else { b"\n" };
    let mut listed: HashSet<String> = listed_paths(&existing).collect();
    let mut out = Vec::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        // A RECORD without a final newline: finish its last row first.
        out.extend_from_slice(eol);
    }
    let mut added = 0;
    for path in paths {
        if listed.insert(path.to_owned()) {
            out.extend_from_slice(csv_field(path).as_bytes());
            out.extend_from_slice(b",,");
            out.extend_from_slice(eol);
            added += 1;
        }
    }
    if added == 0 {
        return Ok(0);
    }
    let mut file = OpenOptions::new()
        .append(true)
        .open(record)
        .map_err(|e| Error::io("open for appending", record, e))?;
    file.write_all(&out)
        .map_err(|e| Error::io("append to", record, e))?;
    Ok(added)
}

/// The first fields (paths) of every row of a RECORD.
pub(crate) fn listed_paths(record: &[u8]) -> impl Iterator<Item = String> + '_ {
    rows(record).filter_map(|fields| fields.into_iter().next())
}

/// What a RECORD row says about one file (each field as written, possibly
/// empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// `algorithm=digest`.
    pub(crate) hash: String,
    /// The size in bytes.
    pub(crate) size: String,
}

/// The row of `path` in a RECORD, if it lists the path.
pub(crate) fn row_of(record: &[u8], path: &str) -> Option<Row> {
    rows(record).find_map(|fields| {
        let mut fields = fields.into_iter();
        (fields.next()? == path).then(|| Row {
            hash: fields.next().unwrap_or_default(),
            size: fields.next().unwrap_or_default(),
        })
    })
}

/// The CSV fields of every non-empty row.
fn rows(record: &[u8]) -> impl Iterator<Item = Vec<String>> + '_ {
    record
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.is_empty())
        .map(|line| fields(&String::from_utf8_lossy(line)))
}

/// True when the first line of `record` ends with CRLF.
fn uses_crlf(record: &[u8]) -> bool {
    record
        .iter()
        .position(|&b| b == b'\n')
        .is_some_and(|i| i > 0 && record[i - 1] == b'\r')
}

/// The fields of one CSV row (quotes removed, `""` unescaped), as Python's
/// `csv` reads them.
fn fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("never empty");
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => field.push(c),
        }
    }
    fields
}

/// A path as one CSV field, quoted only when it must be (as Python's `csv`).
fn csv_field(path: &str) -> String {
    if path.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", path.replace('"', "\"\""))
    } else {
        path.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_crlf_and_skips_listed() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n").unwrap();
        let added = append(&record, ["a/b.py", "c,d", "e\"f", "g", "g"]).unwrap();
        assert_eq!(added, 2);
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n\"e\"\"f\",,\r\ng,,\r\n"
        );
        assert_eq!(append(&record, ["g", "e\"f"]).unwrap(), 0);
    }

    #[test]
    fn the_row_of_one_path() {
        let record = b"\"a,b\",sha256=x,3\r\nrocm_sdk_devel/_devel.tar,sha256=abc,12\r\nc,,\r\n";
        assert_eq!(
            row_of(record, "rocm_sdk_devel/_devel.tar"),
            Some(Row {
                hash: "sha256=abc".into(),
                size: "12".into()
            })
        );
        assert_eq!(
            row_of(record, "a,b").map(|r| r.hash),
            Some("sha256=x".into())
        );
        assert_eq!(row_of(record, "c").map(|r| r.hash), Some(String::new()));
        assert_eq!(row_of(record, "d"), None);
        let paths: Vec<String> = listed_paths(record).collect();
        assert_eq!(paths, ["a,b", "rocm_sdk_devel/_devel.tar", "c"]);
    }

    #[test]
    fn lf_and_missing_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "x,,\ny,,").unwrap();
        append(&record, ["z"]).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "x,,\ny,,\nz,,\n");
    }
}
