//! Just enough of Rust's lexical rules to read the workspace's own
//! sources: comments, string and character literals, and the items a
//! `#[cfg(test)]` keeps out of a library. No parser crate: xtask builds
//! nothing heavy, and these rules are all a source check needs.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A source file with its comments and literals blanked out (same byte
/// offsets, newlines kept), and the literals' values.
#[derive(Debug)]
pub(crate) struct RustText {
    /// The code: every comment and literal replaced by spaces.
    pub(crate) code: String,
    /// Every string literal: where it stands in `code`, and its value
    /// (escapes of quotes and line continuations resolved).
    pub(crate) strings: Vec<(Range<usize>, String)>,
}

impl RustText {
    pub(crate) fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let mut code = bytes.to_vec();
        let mut strings = Vec::new();
        let blank = |code: &mut Vec<u8>, range: Range<usize>| {
            for b in &mut code[range] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        };
        let mut i = 0;
        while i < bytes.len() {
            let rest = &bytes[i..];
            if rest.starts_with(b"//") {
                let end = rest
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p);
                blank(&mut code, i..end);
                i = end;
            } else if rest.starts_with(b"/*") {
                let mut depth = 0;
                let mut j = i;
                while j < bytes.len() {
                    if bytes[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if bytes[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut code, i..j);
                i = j;
            } else if let Some((end, value)) = string_at(bytes, i) {
                blank(&mut code, i..end);
                strings.push((i..end, value));
                i = end;
            } else if bytes[i] == b'\'' {
                // A character literal ('x', '\n', '\''), or a lifetime.
                let end = char_literal_end(bytes, i);
                if let Some(end) = end {
                    blank(&mut code, i..end);
                    i = end;
                } else {
                    i += 1;
                }
            } else if is_ident_byte(bytes[i]) {
                // Skip a whole identifier, so `br` or `r` inside one is not
                // taken for a literal's prefix.
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
            } else {
                i += 1;
            }
        }
        Self {
            code: String::from_utf8(code).expect("only ASCII bytes were replaced"),
            strings,
        }
    }

    /// The code with every item under `#[cfg(test)]` blanked too, and the
    /// names of the test-only modules kept in files of their own
    /// (`#[cfg(test)] mod name;`).
    pub(crate) fn without_tests(&self) -> (String, Vec<String>) {
        let mut code = self.code.clone().into_bytes();
        let mut test_modules = Vec::new();
        let marker = "#[cfg(test)]";
        let mut from = 0;
        while let Some(found) = self.code[from..].find(marker) {
            let start = from + found;
            let after = start + marker.len();
            let next_brace = self.code[after..].find('{').map(|p| after + p);
            let next_semicolon = self.code[after..].find(';').map(|p| after + p);
            let end = match (next_brace, next_semicolon) {
                (Some(brace), Some(semicolon)) if semicolon < brace => {
                    let item = self.code[after..semicolon].trim();
                    if let Some(name) = item.strip_prefix("mod ") {
                        test_modules.push(name.trim().to_owned());
                    }
                    semicolon + 1
                }
                (Some(brace), _) => {
                    matching(&self.code, brace, b'{', b'}').map_or(code.len(), |e| e + 1)
                }
                (None, Some(semicolon)) => semicolon + 1,
                (None, None) => code.len(),
            };
            for b in &mut code[start..end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
            from = end;
        }
        (
            String::from_utf8(code).expect("only ASCII bytes were replaced"),
            test_modules,
        )
    }

    /// The values of the string literals inside `range` of the code.
    pub(crate) fn strings_in(&self, range: &Range<usize>) -> impl Iterator<Item = &str> {
        self.strings
            .iter()
            .filter(move |(at, _)| at.start >= range.start && at.end <= range.end)
            .map(|(_, value)| value.as_str())
    }
}

/// The code range of each attribute `#[NAME(...)]` in `code`: from its
/// `#` to its closing `)`.
pub(crate) fn attributes(code: &str, name: &str) -> Vec<Range<usize>> {
    let opening = format!("#[{name}(");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(&opening) {
        let start = from + at;
        let paren = start + opening.len() - 1;
        let Some(end) = matching(code, paren, b'(', b')') else {
            break;
        };
        found.push(start..end + 1);
        from = end + 1;
    }
    found
}

/// Where the bracket opened at `open` closes, in blanked code.
pub(crate) fn matching(code: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in code.as_bytes().iter().enumerate().skip(open) {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A string literal starting at `i` (`"…"`, `b"…"`, `c"…"`, `r#"…"#`,
/// `br"…"`): where it ends and its value.
fn string_at(bytes: &[u8], i: usize) -> Option<(usize, String)> {
    let mut j = i;
    if matches!(bytes[j], b'b' | b'c') {
        j += 1;
    }
    let raw = bytes.get(j) == Some(&b'r') && matches!(bytes.get(j + 1), Some(b'"' | b'#'));
    if raw {
        j += 1;
        let hashes = bytes[j..].iter().take_while(|&&b| b == b'#').count();
        j += hashes;
        if bytes.get(j) != Some(&b'"') {
            return None;
        }
        let body = j + 1;
        let closing: Vec<u8> = std::iter::once(b'"')
            .chain(std::iter::repeat_n(b'#', hashes))
            .collect();
        let end = bytes[body..]
            .windows(closing.len())
            .position(|w| w == closing.as_slice())
            .map(|p| body + p)?;
        let value = String::from_utf8_lossy(&bytes[body..end]).into_owned();
        return Some((end + closing.len(), value));
    }
    if bytes.get(j) != Some(&b'"') {
        return None;
    }
    let mut value = Vec::new();
    let mut k = j + 1;
    while k < bytes.len() {
        match bytes[k] {
            b'"' => return Some((k + 1, String::from_utf8_lossy(&value).into_owned())),
            b'\\' if bytes.get(k + 1) == Some(&b'\n') => {
                // A line continuation: the newline and the next line's
                // leading whitespace are not part of the value.
                k += 2;
                while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                    k += 1;
                }
            }
            b'\\' => {
                if let Some(&escaped) = bytes.get(k + 1) {
                    value.push(match escaped {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                }
                k += 2;
            }
            b => {
                value.push(b);
                k += 1;
            }
        }
    }
    None
}

/// The end of a character literal starting at `i`, or `None` for a
/// lifetime (`'a`, `'static`).
fn char_literal_end(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i + 1) == Some(&b'\\') {
        let close = bytes[i + 2..].iter().position(|&b| b == b'\'')?;
        return Some(i + 2 + close + 1);
    }
    // One character of up to four UTF-8 bytes, then the closing quote.
    (2..=5)
        .find(|&len| bytes.get(i + len) == Some(&b'\''))
        .filter(|&len| {
            std::str::from_utf8(&bytes[i + 1..i + len]).is_ok_and(|s| s.chars().count() == 1)
        })
        .map(|len| i + len + 1)
}

/// Every `.rs` file below `dir`, sorted.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The library code of a crate's `src/`: each file with its test items
/// blanked, files of test-only modules left out.
pub(crate) fn library_code(src: &Path) -> Vec<(PathBuf, RustText, String)> {
    let files = rust_files(src);
    let mut read: Vec<(PathBuf, RustText, String)> = Vec::new();
    let mut test_only: Vec<PathBuf> = Vec::new();
    for file in &files {
        let text = RustText::new(&std::fs::read_to_string(file).unwrap());
        let (code, test_modules) = text.without_tests();
        // `mod x;` of `lib.rs`, `main.rs` or `mod.rs` is `x.rs` or `x/`
        // beside it; of `y.rs`, below `y/`.
        let stem = file.file_stem().unwrap();
        let dir = if ["lib", "main", "mod"].iter().any(|s| stem == *s) {
            file.parent().unwrap().to_owned()
        } else {
            file.with_extension("")
        };
        for name in test_modules {
            test_only.push(dir.join(format!("{name}.rs")));
            test_only.push(dir.join(name));
        }
        read.push((file.clone(), text, code));
    }
    read.retain(|(file, _, _)| !test_only.iter().any(|t| file.starts_with(t)));
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_comments_are_told_apart_from_code() {
        let text = RustText::new(
            "let a = \"x // y\"; // std::env::var\nlet b = r#\"q\"#; let c = '\"'; fn f<'a>() {}\n\
             let d = \"one \\\n      two\";",
        );
        assert!(!text.code.contains("env::var"), "{}", text.code);
        assert!(text.code.contains("fn f<'a>()"), "{}", text.code);
        let values: Vec<&str> = text.strings.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["x // y", "q", "one two"]);
    }

    #[test]
    fn test_items_are_left_out() {
        let text = RustText::new(
            "fn lib() {}\n#[cfg(test)]\nmod tests {\n    fn t() { let _ = \"}\"; std::env::var(\"X\"); }\n}\n\
             #[cfg(test)]\nmod golden;\nfn after() {}",
        );
        let (code, modules) = text.without_tests();
        assert!(!code.contains("env::var"), "{code}");
        assert!(
            code.contains("fn lib()") && code.contains("fn after()"),
            "{code}"
        );
        assert_eq!(modules, ["golden"]);
    }
}
