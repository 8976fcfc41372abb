//! The header block of core metadata (`METADATA`, `PKG-INFO`) and of a
//! wheel's `WHEEL` file: RFC 822-style `Name: value` lines up to the first
//! blank line, continuation lines (starting with a space or a tab) joined
//! to the header before them.
//!
//! ```
//! use pypa_formats::core_metadata::headers;
//!
//! let text = "Metadata-Version: 2.4\nName: rocm\nSummary: one\n  two\n\nName: body\n";
//! assert_eq!(headers(text), [
//!     ("Metadata-Version".to_owned(), "2.4".to_owned()),
//!     ("Name".to_owned(), "rocm".to_owned()),
//!     ("Summary".to_owned(), "one\ntwo".to_owned()),
//! ]);
//! ```

/// The headers of `text` in order, up to the body; names and values
/// trimmed, a line without `:` skipped.
pub fn headers(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut() {
                last.1.push('\n');
                last.1.push_str(line.trim());
            }
        } else if let Some((k, v)) = line.split_once(':') {
            out.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    out
}
