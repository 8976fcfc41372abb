//! The RECORD codec against Python's `csv` module, which pip uses to read
//! and write RECORD: what one writes, the other reads back field for field.

use std::io::Write;
use std::process::{Command, Stdio};

use pypa_formats::record::{RecordEntry, parse_record, render_record};

/// Paths that exercise every quoting rule.
const PATHS: &[&str] = &[
    "plain/file.py",
    "comma,in/name.so",
    "quote\"in/name",
    "\"starts/with/quote",
    "ends/with/quote\"",
    "line\nbreak",
    "carriage\rreturn",
    "both\r\nends",
    "space at end ",
    " leading space",
    "unicode/é名.txt",
    "../../bin/hipcc",
];

fn entries() -> Vec<RecordEntry> {
    PATHS
        .iter()
        .enumerate()
        .map(|(i, path)| RecordEntry {
            path: (*path).to_owned(),
            hash: (i % 2 == 0).then(|| format!("sha256=h{i},x")),
            size: (i % 3 != 0).then_some(i as u64 * 1000),
        })
        .collect()
}

fn python(script: &str, stdin: &str) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs (installed by `cargo xtask setup`)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The rows as JSON, by Python's reader.
const READ: &str = r#"
import csv, io, json, sys
text = sys.stdin.buffer.read().decode("utf-8")
rows = list(csv.reader(io.StringIO(text, newline="")))
sys.stdout.buffer.write(json.dumps(rows, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
"#;

/// The rows of a JSON list written by Python's writer, as pip writes
/// RECORD (`newline=""`, the default `\r\n` line terminator).
const WRITE: &str = r#"
import csv, io, json, sys
rows = json.loads(sys.stdin.read())
out = io.StringIO(newline="")
csv.writer(out).writerows(rows)
sys.stdout.buffer.write(out.getvalue().encode("utf-8"))
"#;

fn as_fields(entries: &[RecordEntry]) -> Vec<[String; 3]> {
    entries
        .iter()
        .map(|e| {
            [
                e.path.clone(),
                e.hash.clone().unwrap_or_default(),
                e.size.map(|s| s.to_string()).unwrap_or_default(),
            ]
        })
        .collect()
}

fn json_rows(rows: &[[String; 3]]) -> String {
    let quoted: Vec<String> = rows
        .iter()
        .map(|r| {
            let fields: Vec<String> = r.iter().map(|f| json_string(f)).collect();
            format!("[{}]", fields.join(","))
        })
        .collect();
    format!("[{}]", quoted.join(","))
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn python_reads_what_we_write() {
    let entries = entries();
    let read_back = python(READ, &render_record(&entries));
    assert_eq!(read_back.trim_end(), json_rows(&as_fields(&entries)));
}

#[test]
fn we_read_what_python_writes() {
    let entries = entries();
    let written = python(WRITE, &json_rows(&as_fields(&entries)));
    assert!(
        written.contains("\r\n"),
        "pip's RECORD ends lines with CRLF"
    );
    assert_eq!(parse_record(&written).unwrap(), entries);
}
