//! The glob language of include/exclude patterns over relpaths (docs/behaviour.md#filters).
//!
//! It is the reference's language, kept exactly: a pattern is compiled by
//! the same text passes the reference applies to its regular expression,
//! in the same order, so the odd corners agree too:
//! 1. `/**/` anywhere (non-overlapping, left to right) matches `/` plus any
//!    run of whole directories, including none (`a/**/b` matches `a/b`);
//! 2. a leading `**/` matches any run of leading directories, including none;
//! 3. a trailing `/**` matches the directory itself and everything below it;
//! 4. every other `*` matches a run of non-`/` characters, and so does `?`
//!    (the reference's quirk: `?` is not "one character").
//!
//! So a lone `**` matches one path segment only, as in the reference. Like
//! the reference's regex (`.` and `$` in Python), the directory runs of
//! rules 1–3 do not cross a newline and one trailing newline is tolerated.
//!
//! It is the language of artifact filters only. The library table's
//! file-name patterns are read as Python's `fnmatch` reads them (`?` one
//! character), everywhere, by `dist_info::library::Library::matches`.

use std::fmt;

/// One compiled glob pattern.
///
/// ```
/// use artifacts::Glob;
/// let g = Glob::new("share/**/rocprofiler-systems/**");
/// assert!(g.matches("share/rocprofiler-systems"));
/// assert!(g.matches("share/doc/rocprofiler-systems/a/b.txt"));
/// assert!(!g.matches("share/doc/other"));
/// assert!(Glob::new("lib/libfoo?.so").matches("lib/libfoo-1.2.so"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// One literal character.
    Lit(char),
    /// `[^/]*`
    Segment,
    /// `(.*/)?`: any run of whole directories, possibly empty.
    Dirs,
    /// `(/.*)?`: nothing, or `/` and anything (only ever last).
    Tail,
}

/// Before the passes: `*` and `?` are kept apart from literals.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Raw {
    Lit(char),
    Star,
    Question,
    Done(Token),
}

impl Glob {
    /// Compiles a pattern; every string is a valid pattern.
    pub fn new(pattern: &str) -> Self {
        let raw: Vec<Raw> = pattern
            .chars()
            .map(|c| match c {
                '*' => Raw::Star,
                '?' => Raw::Question,
                c => Raw::Lit(c),
            })
            .collect();
        let raw = replace_inner_double_stars(&raw);
        let raw = replace_leading_double_star(raw);
        let raw = replace_trailing_double_star(raw);
        let tokens = raw
            .into_iter()
            .map(|r| match r {
                Raw::Lit(c) => Token::Lit(c),
                Raw::Star | Raw::Question => Token::Segment,
                Raw::Done(t) => t,
            })
            .collect();
        Self {
            pattern: pattern.to_owned(),
            tokens,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the whole relpath matches (relpaths use `/`, no leading `/`).
    pub fn matches(&self, relpath: &str) -> bool {
        let n = self.tokens.len();
        // `at[i]`: positioned before token i; `inside[i]`: within the run of
        // a `Dirs` or `Tail` token i.
        let mut at = vec![false; n + 1];
        let mut inside = vec![false; n + 1];
        at[0] = true;
        self.close(&mut at, &inside);
        let chars: Vec<char> = relpath.chars().collect();
        for (pos, &c) in chars.iter().enumerate() {
            if self.accepts(&at, &inside) && pos + 1 == chars.len() && c == '\n' {
                return true;
            }
            let mut next_at = vec![false; n + 1];
            let mut next_inside = vec![false; n + 1];
            for i in 0..n {
                let (here, within) = (at[i], inside[i]);
                if !here && !within {
                    continue;
                }
                match self.tokens[i] {
                    Token::Lit(l) => {
                        if here && l == c {
                            next_at[i + 1] = true;
                        }
                    }
                    Token::Segment => {
                        if here && c != '/' {
                            next_at[i] = true;
                        }
                    }
                    Token::Dirs => {
                        if c != '\n' {
                            next_inside[i] = true;
                            if c == '/' {
                                next_at[i + 1] = true;
                            }
                        }
                    }
                    Token::Tail => {
                        if (here && c == '/') || (within && c != '\n') {
                            next_inside[i] = true;
                        }
                    }
                }
            }
            self.close(&mut next_at, &next_inside);
            at = next_at;
            inside = next_inside;
            if !at.iter().any(|&b| b) && !inside.iter().any(|&b| b) {
                return false;
            }
        }
        self.accepts(&at, &inside)
    }

    /// Epsilon moves: optional tokens may be skipped, a `Tail` run may end.
    fn close(&self, at: &mut [bool], inside: &[bool]) {
        for i in 0..self.tokens.len() {
            let skippable = matches!(self.tokens[i], Token::Segment | Token::Dirs | Token::Tail);
            if (at[i] && skippable) || (inside[i] && self.tokens[i] == Token::Tail) {
                at[i + 1] = true;
            }
        }
    }

    fn accepts(&self, at: &[bool], _inside: &[bool]) -> bool {
        at[self.tokens.len()]
    }
}

/// Pass 1: `/**/` → `/` + `Dirs`, non-overlapping, left to right.
fn replace_inner_double_stars(raw: &[Raw]) -> Vec<Raw> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i..].starts_with(&[Raw::Lit('/'), Raw::Star, Raw::Star, Raw::Lit('/')]) {
            out.extend([Raw::Lit('/'), Raw::Done(Token::Dirs)]);
            i += 4;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    out
}

/// Pass 2: a leading `**/` → `Dirs`.
fn replace_leading_double_star(mut raw: Vec<Raw>) -> Vec<Raw> {
    if raw.starts_with(&[Raw::Star, Raw::Star, Raw::Lit('/')]) {
        raw.splice(0..3, [Raw::Done(Token::Dirs)]);
    }
    raw
}

/// Pass 3: a trailing `/**` → `Tail`.
fn replace_trailing_double_star(mut raw: Vec<Raw>) -> Vec<Raw> {
    if raw.ends_with(&[Raw::Lit('/'), Raw::Star, Raw::Star]) {
        let start = raw.len() - 3;
        raw.splice(start.., [Raw::Done(Token::Tail)]);
    }
    raw
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Glob").field(&self.pattern).finish()
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Glob::new(p).matches(s)
    }

    #[test]
    fn literal_and_star() {
        assert!(m("bin/rocprof-*", "bin/rocprof-sys-run"));
        assert!(!m("bin/rocprof-*", "bin/rocprof-x/y"));
        assert!(!m("bin/rocprof-*", "xbin/rocprof-a"));
        assert!(m("lib/librocprof-sys*", "lib/librocprof-sys.so.1"));
        assert!(!m("lib/librocprof-sys*", "lib/librocprof-sys/x"));
    }

    #[test]
    fn inner_double_star_crosses_zero_or_more_dirs() {
        for s in ["a/b", "a/x/b", "a/x/y/b"] {
            assert!(m("a/**/b", s), "{s}");
        }
        assert!(!m("a/**/b", "a/xb"));
        assert!(!m("a/**/b", "ab"));
    }

    #[test]
    fn leading_and_trailing_double_star() {
        assert!(m("**/cmake/**", "cmake"));
        assert!(m("**/cmake/**", "lib/cmake"));
        assert!(m("**/cmake/**", "lib/cmake/hip/hip-config.cmake"));
        assert!(!m("**/cmake/**", "lib/cmakefiles"));
        assert!(!m("**/cmake/**", "lib/xcmake/a"));
        assert!(m(
            "include/rocprofiler-systems/**",
            "include/rocprofiler-systems"
        ));
        assert!(!m(
            "include/rocprofiler-systems/**",
            "include/rocprofiler-systems2"
        ));
    }

    #[test]
    fn question_mark_matches_a_run_within_a_segment() {
        assert!(m("lib/lib?.so", "lib/libfoo.so"));
        assert!(m("lib/lib?.so", "lib/lib.so"));
        assert!(!m("lib/lib?.so", "lib/x/y.so"));
    }

    #[test]
    fn lone_double_star_matches_one_segment_like_the_reference() {
        assert!(m("**", "abc"));
        assert!(!m("**", "a/b"));
        assert!(m("**/**", "a/b/c"));
    }

    #[test]
    fn overlapping_inner_double_stars_follow_the_reference_passes() {
        // `a/**/**/b` → `a/(.*/)?[^/]*[^/]*/b`: needs a segment before `/b`.
        assert!(m("a/**/**/b", "a/x/b"));
        assert!(m("a/**/**/b", "a/x/y/b"));
        assert!(!m("a/**/**/b", "a/b"));
    }

    #[test]
    fn regex_metacharacters_are_literal() {
        assert!(m("a.b", "a.b"));
        assert!(!m("a.b", "axb"));
        assert!(m("[x]+", "[x]+"));
        assert!(!m("[x]+", "x"));
    }

    #[test]
    fn newline_corners_follow_python() {
        assert!(m("a", "a\n"));
        assert!(!m("a/**", "a/x\ny"));
        assert!(m("a*", "a\nb"));
    }
}
