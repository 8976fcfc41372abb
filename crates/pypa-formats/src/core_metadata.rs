//! The header block of core metadata (`METADATA`, `PKG-INFO`) and of a
//! wheel's `WHEEL` file: RFC 822-style `Name: value` lines up to the first
//! blank line, continuation lines (starting with a space or a tab) joined
//! to the header before them.
//!
//! [`HeaderBlock::parse`] reads a file of a package this process did not
//! write exactly as Python's email parser does (pip, `importlib.metadata`
//! and `packaging` all use it, with the `compat32` policy), and refuses
//! what other readers would read differently (docs/verify.md#one-reading):
//!
//! - bytes that are not UTF-8;
//! - a carriage return not followed by a line feed (Python ends a line
//!   there, a reader splitting on line feeds does not), any other control
//!   character but the tab, and U+2028/U+2029 (line ends to `str.splitlines`);
//! - in the header block: a header name that is not printable ASCII, a
//!   header without a name, a continuation line before the first header,
//!   and a line that is neither a header nor a continuation (Python starts
//!   the body there, silently: the headers after it exist for other
//!   readers only).
//!
//! Values are what `compat32` gives: the text after the colon with the
//! spaces and tabs before it removed, continuation lines appended with
//! their line ends, the final line end removed; trailing spaces kept.
//!
//! ```
//! use pypa_formats::core_metadata::HeaderBlock;
//!
//! let block = HeaderBlock::parse(b"Metadata-Version: 2.4\nName: rocm\nSummary: one\n  two\n\nbody\n").unwrap();
//! assert_eq!(block.get("name").unwrap(), Some("rocm"));
//! assert_eq!(block.get("Summary").unwrap(), Some("one\n  two"));
//! assert!(HeaderBlock::parse(b"Name: rocm\rRequires-Dist: evil\n").is_err());
//! ```

/// Why a metadata file is refused. Line numbers count from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// Not UTF-8.
    #[error("it is not UTF-8")]
    NotUtf8,
    /// A carriage return without a line feed after it.
    #[error(
        "line {0}: a carriage return not followed by a line feed, where Python's email parser \
         starts a new line and others do not"
    )]
    LoneCarriageReturn(usize),
    /// A control character other than the tab, or a Unicode line
    /// separator.
    #[error("line {line}: the control character {character:?}")]
    ControlCharacter {
        /// Where.
        line: usize,
        /// Which.
        character: char,
    },
    /// A header name outside printable ASCII.
    #[error("line {line}: the header name {name:?} is not printable ASCII")]
    HeaderName {
        /// Where.
        line: usize,
        /// The name as written.
        name: String,
    },
    /// A header line with nothing before its colon.
    #[error("line {0}: a header without a name")]
    EmptyHeaderName(usize),
    /// The block starts with a continuation line.
    #[error("line 1 starts with whitespace: a continuation of no header")]
    LeadingContinuation,
    /// A line in the header block that is no header: Python's parser ends
    /// the headers there without a blank line.
    #[error(
        "line {line}: {text:?} is neither a header nor a continuation line, and no blank line \
         comes before it (Python's email parser ends the headers there)"
    )]
    NotAHeader {
        /// Where.
        line: usize,
        /// The line.
        text: String,
    },
    /// A header that may appear once appears again.
    #[error("the header {name} appears {count} times")]
    Repeated {
        /// The header.
        name: String,
        /// How often.
        count: usize,
    },
    /// A header whose value spans several lines where one is expected.
    #[error("the header {0} is folded over several lines")]
    Folded(String),
}

/// The headers of a metadata file, as Python's email parser reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderBlock {
    headers: Vec<(String, String)>,
}

impl HeaderBlock {
    /// Reads the header block of `bytes` (the module documentation says
    /// what is refused); the body is checked for characters only.
    pub fn parse(bytes: &[u8]) -> Result<Self, MetadataError> {
        let text = std::str::from_utf8(bytes).map_err(|_| MetadataError::NotUtf8)?;
        check_characters(text)?;
        let mut headers: Vec<(String, String)> = Vec::new();
        for (index, (line, end)) in lines(text).enumerate() {
            let number = index + 1;
            if line.is_empty() {
                break;
            }
            if line.starts_with([' ', '\t']) {
                let Some((_, value)) = headers.last_mut() else {
                    return Err(MetadataError::LeadingContinuation);
                };
                value.push_str(line);
                value.push_str(end);
                continue;
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(not_a_header(number, line));
            };
            if name.is_empty() {
                return Err(MetadataError::EmptyHeaderName(number));
            }
            if !name.is_ascii() {
                return Err(MetadataError::HeaderName {
                    line: number,
                    name: name.to_owned(),
                });
            }
            if !name.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(not_a_header(number, line));
            }
            let mut value = value.trim_start_matches([' ', '\t']).to_owned();
            value.push_str(end);
            headers.push((name.to_owned(), value));
        }
        for (_, value) in &mut headers {
            let kept = value.trim_end_matches(['\r', '\n']).len();
            value.truncate(kept);
        }
        Ok(Self { headers })
    }

    /// Every header in order, names as written.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Every value of the header `name` (compared without case, as the
    /// email parser does), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The value of a header that may appear at most once (a second one is
    /// refused: readers differ on which they take).
    pub fn get(&self, name: &str) -> Result<Option<&str>, MetadataError> {
        let mut values = self
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str());
        let first = values.next();
        let more = values.count();
        if more > 0 {
            return Err(MetadataError::Repeated {
                name: name.to_owned(),
                count: more + 1,
            });
        }
        Ok(first)
    }

    /// [`HeaderBlock::get`] of a header whose value is one line.
    pub fn get_line(&self, name: &str) -> Result<Option<&str>, MetadataError> {
        match self.get(name)? {
            Some(value) if value.contains('\n') => Err(MetadataError::Folded(name.to_owned())),
            other => Ok(other),
        }
    }
}

fn not_a_header(line: usize, text: &str) -> MetadataError {
    MetadataError::NotAHeader {
        line,
        text: text.to_owned(),
    }
}

/// Refuses a carriage return without a line feed, control characters but
/// the tab, and Unicode line separators, naming the line.
pub fn check_characters(text: &str) -> Result<(), MetadataError> {
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => return Err(MetadataError::LoneCarriageReturn(line)),
            '\t' => {}
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                return Err(MetadataError::ControlCharacter { line, character: c });
            }
            _ => {}
        }
    }
    Ok(())
}

/// The lines of `text` (already checked: every CR is part of a CRLF) and
/// their line ends.
fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split_inclusive('\n').map(|line| {
        if let Some(body) = line.strip_suffix("\r\n") {
            (body, "\r\n")
        } else if let Some(body) = line.strip_suffix('\n') {
            (body, "\n")
        } else {
            (line, "")
        }
    })
}

/// The headers of `text` in order, up to the body; names and values
/// trimmed, a line without `:` skipped. A lenient reading for files an
/// installation wrote; a package's files are read with
/// [`HeaderBlock::parse`].
///
/// ```
/// use pypa_formats::core_metadata::headers;
///
/// let text = "Metadata-Version: 2.4\nName: rocm\nSummary: one\n  two\n\nName: body\n";
/// assert_eq!(headers(text), [
///     ("Metadata-Version".to_owned(), "2.4".to_owned()),
///     ("Name".to_owned(), "rocm".to_owned()),
///     ("Summary".to_owned(), "one\ntwo".to_owned()),
/// ]);
/// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<HeaderBlock, MetadataError> {
        HeaderBlock::parse(text.as_bytes())
    }

    #[test]
    fn values_are_what_compat32_gives() {
        let block = parse("Name:  rocm \r\nSummary:\tone\r\n two\r\n\r\nbody\r").unwrap_err();
        assert_eq!(block, MetadataError::LoneCarriageReturn(5));
        let block = parse("Name:  rocm \r\nSummary:\tone\r\n two\r\nEmpty:\n\nbody\n").unwrap();
        assert_eq!(
            block.headers(),
            [
                ("Name".to_owned(), "rocm ".to_owned()),
                ("Summary".to_owned(), "one\r\n two".to_owned()),
                ("Empty".to_owned(), String::new()),
            ]
        );
        assert_eq!(
            block.get_line("summary"),
            Err(MetadataError::Folded("summary".to_owned()))
        );
        assert_eq!(parse("Name: a").unwrap().get("Name").unwrap(), Some("a"));
    }

    #[test]
    fn what_python_reads_otherwise_is_refused() {
        assert_eq!(
            parse("Name: rocm\rRequires-Dist: evil\n"),
            Err(MetadataError::LoneCarriageReturn(1))
        );
        assert_eq!(
            parse("Name: rocm\ngarbage\nRequires-Dist: evil\n"),
            Err(MetadataError::NotAHeader {
                line: 2,
                text: "garbage".to_owned()
            })
        );
        assert!(matches!(
            parse("Name : rocm\n"),
            Err(MetadataError::NotAHeader { line: 1, .. })
        ));
        assert!(matches!(
            parse("\u{feff}Name: rocm\n"),
            Err(MetadataError::HeaderName { line: 1, .. })
        ));
        assert_eq!(parse(": x\n"), Err(MetadataError::EmptyHeaderName(1)));
        assert_eq!(parse(" x: y\n"), Err(MetadataError::LeadingContinuation));
        assert_eq!(
            parse("Name: a\x0bb\n"),
            Err(MetadataError::ControlCharacter {
                line: 1,
                character: '\x0b'
            })
        );
        assert_eq!(
            parse("Name: a\n\nbody \u{85}\n"),
            Err(MetadataError::ControlCharacter {
                line: 3,
                character: '\u{85}'
            })
        );
        assert_eq!(
            HeaderBlock::parse(b"Name: \xff\n"),
            Err(MetadataError::NotUtf8)
        );
        assert_eq!(
            parse("Name: a\nname: b\n").unwrap().get("NAME"),
            Err(MetadataError::Repeated {
                name: "NAME".to_owned(),
                count: 2
            })
        );
    }

    #[test]
    fn the_body_is_not_headers() {
        let block = parse("Name: a\n\nRequires-Dist: b\n").unwrap();
        assert_eq!(block.get_all("Requires-Dist").count(), 0);
    }
}
