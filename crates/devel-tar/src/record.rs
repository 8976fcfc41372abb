//! A distribution's RECORD the way pip reads and writes it (the codec is
//! `pypa_formats::record`): appending one `path,,` row per file, in the
//! RECORD's own line-ending style, each path once; and reading its rows.
//! The RECORD is reached through its dist-info directory's confined handle
//! and read only when it is a regular file of at most [`RECORD_LIMIT`]
//! bytes.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use fs_helpers::confined::Dir;
use pypa_formats::installer::InstallCommand;
use pypa_formats::record::{RecordEntry, parse_record, push_row, uses_crlf};

use crate::error::Error;

/// The most bytes a RECORD may have: the devel distribution's lists every
/// path of the tree (a few MiB for a whole release).
pub(crate) const RECORD_LIMIT: u64 = 64 << 20;

/// The `RECORD` of one installed distribution.
#[derive(Debug)]
pub(crate) struct RecordFile {
    dir: Dir,
}

impl RecordFile {
    /// The RECORD in the dist-info directory `dir`.
    pub(crate) fn new(dir: Dir) -> Self {
        Self { dir }
    }

    /// The dist-info directory.
    pub(crate) fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.display_path("RECORD")
    }

    /// Its text and rows.
    fn read(&self) -> Result<(String, Vec<RecordEntry>), Error> {
        let path = self.path();
        let bytes = self
            .dir
            .read("RECORD", RECORD_LIMIT)
            .map_err(|e| Error::read("read", &path, e))?;
        let malformed = |reason: String| Error::MalformedRecord {
            install: InstallCommand::default(),
            path: path.clone(),
            reason,
        };
        let text = String::from_utf8(bytes).map_err(|_| malformed("it is not UTF-8".into()))?;
        let rows = parse_record(&text).map_err(|e| malformed(e.to_string()))?;
        Ok((text, rows))
    }

    /// Every row.
    pub(crate) fn rows(&self) -> Result<Vec<RecordEntry>, Error> {
        self.read().map(|(_, rows)| rows)
    }

    /// Appends a `path,,` row for every path of `paths` that RECORD does
    /// not list yet, in one `write` so a killed process leaves whole rows.
    pub(crate) fn append<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a str>,
    ) -> Result<Appended, Error> {
        let (existing, rows) = self.read()?;
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
        let record = self.path();
        let mut file = self
            .dir
            .cursor()
            .open_append("RECORD")
            .map_err(|e| Error::io("open for appending", &record, e))?;
        file.write_all(out.as_bytes())
            .map_err(|e| Error::io("append to", &record, e))?;
        Ok(appended)
    }

    /// Checks that RECORD can be appended to, before anything changes.
    pub(crate) fn check_appendable(&self) -> Result<(), Error> {
        self.dir
            .cursor()
            .open_append("RECORD")
            .map(drop)
            .map_err(|e| Error::io("open for appending", self.path(), e))
    }

    /// Cuts RECORD back to `len` bytes, what it was before an
    /// [`append`](Self::append).
    pub(crate) fn truncate(&self, len: u64) -> Result<(), Error> {
        self.dir
            .cursor()
            .open_write("RECORD")
            .and_then(|file| file.set_len(len))
            .map_err(|e| Error::io("restore", self.path(), e))
    }

    /// Cuts the rows at RECORD's end whose path `stale` accepts (whole
    /// rows only; nothing when the last row is another's).
    pub(crate) fn cut_trailing(&self, stale: impl Fn(&str) -> bool) -> Result<(), Error> {
        let (text, _) = self.read()?;
        let mut len = text.len();
        while len > 0 {
            let body = text[..len].trim_end_matches(['\n', '\r']);
            let start = body.rfind('\n').map_or(0, |i| i + 1);
            // The rows cut are a writer's temporaries: plain names, no
            // quoting, so the path is the text before the first comma.
            let path = body[start..].split(',').next().unwrap_or_default();
            if body.len() == start || !stale(path) {
                break;
            }
            len = start;
        }
        if len < text.len() {
            self.truncate(len as u64)?;
        }
        Ok(())
    }
}

/// What [`RecordFile::append`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Appended {
    /// Rows added.
    pub(crate) rows: usize,
    /// RECORD's length before: [`RecordFile::truncate`] to it takes the
    /// rows back.
    pub(crate) previous_len: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_in(dir: &tempfile::TempDir) -> RecordFile {
        RecordFile::new(Dir::open(dir.path()).unwrap())
    }

    #[test]
    fn keeps_crlf_and_skips_listed() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n").unwrap();
        let before = std::fs::metadata(&record).unwrap().len();
        let appended = record_in(&dir)
            .append(["a/b.py", "c,d", "e\"f", "g", "g"])
            .unwrap();
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
        assert_eq!(record_in(&dir).append(["g", "e\"f"]).unwrap().rows, 0);
        record_in(&dir).truncate(before).unwrap();
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "a/b.py,sha256=x,3\r\n\"c,d\",,\r\n"
        );
    }

    #[test]
    fn cuts_only_the_trailing_rows_it_is_asked_to() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        let kept = "a/.x.tmp,,\r\nb,sha256=y,1\r\n";
        std::fs::write(&record, format!("{kept}t/.x.tmp,,\r\nt/.y.tmp,,\r\n")).unwrap();
        let stale = |p: &str| p.starts_with("t/.");
        record_in(&dir).cut_trailing(stale).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), kept);
        // The last row another's: nothing is cut.
        record_in(&dir).cut_trailing(stale).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), kept);
        std::fs::write(&record, "t/.x.tmp,,").unwrap();
        record_in(&dir).cut_trailing(stale).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "");
    }

    #[test]
    fn lf_and_missing_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "x,,\ny,,").unwrap();
        record_in(&dir).append(["z"]).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "x,,\ny,,\nz,,\n");
    }

    #[test]
    fn a_malformed_record_is_an_error_naming_it_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "x,,\ny,,not-a-size\n").unwrap();
        let err = record_in(&dir).append(["z"]).unwrap_err().to_string();
        assert!(
            err.contains("RECORD is not a valid RECORD (line 2: the size is not a number)"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "x,,\ny,,not-a-size\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_record_that_is_a_link_or_a_device_is_never_read_or_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "x,,\n").unwrap();
        let dist_info = dir.path().join("d.dist-info");
        std::fs::create_dir(&dist_info).unwrap();
        for target in [outside.as_path(), std::path::Path::new("/dev/zero")] {
            let _ = std::fs::remove_file(dist_info.join("RECORD"));
            std::os::unix::fs::symlink(target, dist_info.join("RECORD")).unwrap();
            let record = RecordFile::new(Dir::open(&dist_info).unwrap());
            let err = record.rows().unwrap_err();
            assert!(matches!(err, Error::Confined { .. }), "{err}");
            assert!(record.append(["y"]).is_err());
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x,,\n");
    }
}
