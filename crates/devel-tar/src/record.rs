//! A distribution's RECORD the way pip reads and writes it (the codec is
//! `pypa_formats::record`): appending one `path,,` row per file, in the
//! RECORD's own line-ending style, each path once; and reading its rows.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use pypa_formats::installer::InstallCommand;
use pypa_formats::record::{RecordEntry, parse_record, push_row, uses_crlf};

use crate::error::Error;

/// The RECORD at `path`: its text and its rows.
fn read(path: &Path) -> Result<(String, Vec<RecordEntry>), Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read("read", path, e))?;
    let malformed = |reason: String| Error::MalformedRecord {
        install: InstallCommand::default(),
        path: path.to_path_buf(),
        reason,
    };
    let text = String::from_utf8(bytes).map_err(|_| malformed("it is not UTF-8".into()))?;
    let rows = parse_record(&text).map_err(|e| malformed(e.to_string()))?;
    Ok((text, rows))
}

/// Every row of the RECORD at `path`.
pub(crate) fn rows(path: &Path) -> Result<Vec<RecordEntry>, Error> {
    read(path).map(|(_, rows)| rows)
}

/// What [`append`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Appended {
    /// Rows added.
    pub(crate) rows: usize,
    /// RECORD's length before: [`truncate`] to it takes the rows back.
    pub(crate) previous_len: u64,
}

/// Appends a `path,,` row for every path of `paths` that RECORD does not
/// list yet, in one `write` so a killed process leaves whole rows.
pub(crate) fn append<'a>(
    record: &Path,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<Appended, Error> {
    let (existing, rows) = read(record)?;
    let eol = if uses_crlf(&existing) { "\r\n" } else { "\n" };
    let mut listed: HashSet<String> = rows.into_iter().map(|row| row.path).collect();
    let mut out = String::new();
    if !existing.is_empty() && !existing.ends_with('\n') {
        // A RECORD without a final newline: finish its last row first.
        out.push_str(eol);
    }
    let mut appended = Appended {
        rows: 0,
        previous_len: existing.len() as u64,
    };
    for path in paths {
        if listed.insert(path.to_owned()) {
            push_row(&mut out, &RecordEntry::unhashed(path), eol);
            appended.rows += 1;
        }
    }
    if appended.rows == 0 {
        return Ok(appended);
    }
    let mut file = OpenOptions::new()
        .append(true)
        .open(record)
        .map_err(|e| Error::io("open for appending", record, e))?;
    file.write_all(out.as_bytes())
        .map_err(|e| Error::io("append to", record, e))?;
    Ok(appended)
}

/// Cuts RECORD back to `len` bytes, what it was before an [`append`].
pub(crate) fn truncate(record: &Path, len: u64) -> Result<(), Error> {
    OpenOptions::new()
        .write(true)
        .open(record)
        .and_then(|file| file.set_len(len))
        .map_err(|e| Error::io("restore", record, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_crlf_and_skips_listed() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n").unwrap();
        let before = std::fs::metadata(&record).unwrap().len();
        let appended = append(&record, ["a/b.py", "c,d", "e\"f", "g", "g"]).unwrap();
        assert_eq!(
            appended,
            Appended {
                rows: 2,
                previous_len: before
            }
        );
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n\"e\"\"f\",,\r\ng,,\r\n"
        );
        assert_eq!(append(&record, ["g", "e\"f"]).unwrap().rows, 0);
        truncate(&record, before).unwrap();
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n"
        );
    }

    #[test]
    fn lf_and_missing_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "x,,\ny,,").unwrap();
        append(&record, ["z"]).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "x,,\ny,,\nz,,\n");
    }

    #[test]
    fn a_malformed_record_is_an_error_naming_it_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "x,,\ny,,not-a-size\n").unwrap();
        let err = append(&record, ["z"]).unwrap_err().to_string();
        assert!(
            err.contains("RECORD is not a valid RECORD (line 2: the size is not a number)"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "x,,\ny,,not-a-size\n"
        );
    }
}
