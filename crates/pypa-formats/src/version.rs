//! PEP 440 versions: parsing, canonical form, ordering, and the `.postN`
//! tolerance rule device links use (docs/behaviour.md#versions).
//!
//! The parser is small and ours: the build side must write canonical
//! versions, and the install side must compare a device wheel's version with
//! ours without any Python present.

mod canonical;

pub use canonical::{CanonicalVersion, CanonicalVersionError};

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A version string that is not valid PEP 440. Its message shows the
/// string with control characters escaped (`\n`, `\u{1b}`): a version
/// read from a file stays one line and cannot steer a terminal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "version `{}` is not a valid PEP 440 version: {}; \
     use a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`",
    escaped(input),
    escaped(reason)
)]
pub struct VersionError {
    /// The string as given.
    pub input: String,
    /// What was wrong with it.
    pub reason: String,
}

/// `text` with its control characters escaped as Rust writes them.
fn escaped(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The kind of a pre-release segment, in PEP 440 order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreKind {
    /// `a` (also spelled `alpha`).
    Alpha,
    /// `b` (also spelled `beta`).
    Beta,
    /// `rc` (also spelled `c`, `pre`, `preview`).
    Rc,
}

impl PreKind {
    /// The canonical spelling: `a`, `b` or `rc`.
    pub fn as_str(self) -> &'static str {
        match self {
            PreKind::Alpha => "a",
            PreKind::Beta => "b",
            PreKind::Rc => "rc",
        }
    }
}

/// One dot-separated segment of a local version label (`+abc.5`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LocalSegment {
    /// All digits; kept as a digit string without leading zeros so that a
    /// long all-digit segment (a git sha, say) never overflows.
    Number(String),
    /// Anything else, lower-cased.
    Text(String),
}

impl LocalSegment {
    fn parse(segment: &str) -> Self {
        if segment.bytes().all(|b| b.is_ascii_digit()) {
            let trimmed = segment.trim_start_matches('0');
            LocalSegment::Number(if trimmed.is_empty() { "0" } else { trimmed }.to_owned())
        } else {
            LocalSegment::Text(segment.to_owned())
        }
    }
}

impl fmt::Display for LocalSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalSegment::Number(s) | LocalSegment::Text(s) => f.write_str(s),
        }
    }
}

impl Ord for LocalSegment {
    /// PEP 440: numeric segments compare as integers and sort after
    /// alphanumeric ones; alphanumeric segments compare lexicographically.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (LocalSegment::Number(a), LocalSegment::Number(b)) => {
                a.len().cmp(&b.len()).then_with(|| a.cmp(b))
            }
            (LocalSegment::Number(_), LocalSegment::Text(_)) => Ordering::Greater,
            (LocalSegment::Text(_), LocalSegment::Number(_)) => Ordering::Less,
            (LocalSegment::Text(a), LocalSegment::Text(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for LocalSegment {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A parsed PEP 440 version.
///
/// `Display` writes the canonical form (the one `packaging.version.Version`
/// prints), so `v.to_string()` is what goes into wheel names and METADATA.
/// Equality and ordering follow PEP 440 (`1.0 == 1.0.0`).
///
/// ```
/// use pypa_formats::version::Version;
/// let v: Version = "v7.1-RC.1".parse().unwrap();
/// assert_eq!(v.to_string(), "7.1rc1");
/// ```
#[derive(Debug, Clone)]
pub struct Version {
    /// The epoch (`N!`), 0 when absent.
    pub epoch: u64,
    /// The release numbers (`7.1.0`); never empty.
    pub release: Vec<u64>,
    /// The pre-release segment (`rc1`).
    pub pre: Option<(PreKind, u64)>,
    /// The post-release number (`.post1`).
    pub post: Option<u64>,
    /// The development release number (`.dev0`).
    pub dev: Option<u64>,
    /// The local label segments (`+abc.1`); empty when absent.
    pub local: Vec<LocalSegment>,
}

impl Version {
    /// Parses any PEP 440 spelling (case, separators, `v` prefix, implicit
    /// numbers and the `-N` post form are accepted and normalised).
    pub fn parse(input: &str) -> Result<Self, VersionError> {
        Parser::new(input).parse()
    }

    /// This version with any `.postN` segment removed.
    #[must_use]
    pub fn without_post(&self) -> Self {
        Self {
            post: None,
            ..self.clone()
        }
    }

    /// True when this is a plain release (`X.Y.Z`, no other segment).
    pub fn is_plain_release(&self) -> bool {
        self.epoch == 0
            && self.pre.is_none()
            && self.post.is_none()
            && self.dev.is_none()
            && self.local.is_empty()
    }

    /// The release numbers without trailing zeros, for PEP 440 comparison.
    fn release_key(&self) -> &[u64] {
        let end = self
            .release
            .iter()
            .rposition(|&n| n != 0)
            .map_or(0, |i| i + 1);
        &self.release[..end]
    }
}

impl FromStr for Version {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.epoch != 0 {
            write!(f, "{}!", self.epoch)?;
        }
        for (i, n) in self.release.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{n}")?;
        }
        if let Some((kind, n)) = self.pre {
            write!(f, "{}{n}", kind.as_str())?;
        }
        if let Some(n) = self.post {
            write!(f, ".post{n}")?;
        }
        if let Some(n) = self.dev {
            write!(f, ".dev{n}")?;
        }
        for (i, seg) in self.local.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            write!(f, "{seg}")?;
        }
        Ok(())
    }
}

/// Where a segment sorts relative to its presence (PEP 440 ordering keys).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Bound<T> {
    NegInf,
    Value(T),
    PosInf,
}

impl Version {
    fn cmp_key(&self) -> impl Ord + '_ {
        // A bare `.devN` sorts before every pre-release of the same release.
        let pre = match (self.pre, self.post, self.dev) {
            (None, None, Some(_)) => Bound::NegInf,
            (None, _, _) => Bound::PosInf,
            (Some(p), _, _) => Bound::Value(p),
        };
        let post = self.post.map_or(Bound::NegInf, Bound::Value);
        let dev = self.dev.map_or(Bound::PosInf, Bound::Value);
        let local = if self.local.is_empty() {
            Bound::NegInf
        } else {
            Bound::Value(&self.local)
        };
        (self.epoch, self.release_key(), pre, post, dev, local)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_key().cmp(&other.cmp_key())
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

/// The canonical PEP 440 spelling of `input`.
///
/// ```
/// assert_eq!(pypa_formats::version::canonicalize("7.1.0-1").unwrap(), "7.1.0.post1");
/// ```
pub fn canonicalize(input: &str) -> Result<String, VersionError> {
    Version::parse(input).map(|v| v.to_string())
}

/// True when `input` is valid PEP 440 and already in canonical form.
pub fn is_canonical(input: &str) -> bool {
    input.parse::<CanonicalVersion>().is_ok()
}

/// True when the two versions are equal once a `.postN` segment is removed
/// from each (docs/behaviour.md#device-reconcile: a device wheel `7.1.0.post1` still serves a devel
/// `7.1.0`). Both sides are compared as PEP 440 versions; a string that is
/// not PEP 440 only matches an identical string.
///
/// ```
/// use pypa_formats::version::matches_ignoring_post;
/// assert!(matches_ignoring_post("7.1.0", "7.1.0.post2"));
/// assert!(!matches_ignoring_post("7.1.0", "7.1.1"));
/// ```
pub fn matches_ignoring_post(ours: &str, theirs: &str) -> bool {
    match (Version::parse(ours), Version::parse(theirs)) {
        (Ok(a), Ok(b)) => a.without_post() == b.without_post(),
        _ => ours == theirs,
    }
}

/// True when `version` is `release` or a post-release of it (equal once
/// the `.postN` segment is removed from both, and not older): a `rocm`
/// selector `7.14.0.post1` published over the packages of `7.14.0` belongs
/// to that release; `7.14.1` (a patch release), `7.14.0.1` or another
/// `.devN` does not.
///
/// ```
/// use pypa_formats::version::is_release_or_post_release;
/// assert!(is_release_or_post_release("7.14.0.post1", "7.14.0"));
/// assert!(!is_release_or_post_release("7.14.1", "7.14.0"));
/// assert!(!is_release_or_post_release("7.14.0.dev1", "7.14.0.dev0"));
/// ```
pub fn is_release_or_post_release(version: &str, release: &str) -> bool {
    if version == release {
        return true;
    }
    match (Version::parse(version), Version::parse(release)) {
        (Ok(v), Ok(r)) => v.without_post() == r.without_post() && v > r,
        _ => false,
    }
}

/// A hand-written scanner over the lower-cased, trimmed input.
struct Parser<'a> {
    input: &'a str,
    s: String,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Self {
            input,
            s: input.trim().to_ascii_lowercase(),
            pos: 0,
        }
    }

    fn error(&self, reason: impl Into<String>) -> VersionError {
        VersionError {
            input: self.input.to_owned(),
            reason: reason.into(),
        }
    }

    fn rest(&self) -> &str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, prefix: &str) -> bool {
        if self.rest().starts_with(prefix) {
            self.pos += prefix.len();
            true
        } else {
            false
        }
    }

    fn eat_separator(&mut self) -> bool {
        matches!(self.peek(), Some(b'.' | b'-' | b'_')) && {
            self.pos += 1;
            true
        }
    }

    fn digits(&mut self) -> Option<&str> {
        let len = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        Some(&self.s[start..self.pos])
    }

    fn number(&mut self) -> Result<Option<u64>, VersionError> {
        match self.digits() {
            None => Ok(None),
            Some(d) => {
                let d = d.to_owned();
                d.parse::<u64>()
                    .map(Some)
                    .map_err(|_| self.error(format!("number `{d}` is too large")))
            }
        }
    }

    /// Tries `[sep] word [sep] [N]` for one of `words`; restores the position
    /// when no word matches.
    fn keyword<T: Copy>(&mut self, words: &[(&str, T)]) -> Result<Option<(T, u64)>, VersionError> {
        let start = self.pos;
        self.eat_separator();
        // Longest spellings first so `rc` is not read as `r` + garbage.
        for &(word, value) in words {
            if self.eat(word) {
                let before_sep = self.pos;
                let had_sep = self.eat_separator();
                if let Some(n) = self.number()? {
                    return Ok(Some((value, n)));
                }
                if had_sep {
                    self.pos = before_sep;
                }
                return Ok(Some((value, 0)));
            }
        }
        self.pos = start;
        Ok(None)
    }

    fn parse(mut self) -> Result<Version, VersionError> {
        if self.s.is_empty() {
            return Err(self.error("it is empty"));
        }
        self.eat("v");
        let mut epoch = 0;
        let mut first = self
            .number()?
            .ok_or_else(|| self.error("it must start with a release number"))?;
        if self.eat("!") {
            epoch = first;
            first = self
                .number()?
                .ok_or_else(|| self.error("a release number must follow the epoch"))?;
        }
        let mut release = vec![first];
        while self.rest().starts_with('.')
            && self.rest()[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            self.pos += 1;
            release.push(self.number()?.unwrap_or_default());
        }
        let pre = self.keyword(&[
            ("preview", PreKind::Rc),
            ("alpha", PreKind::Alpha),
            ("beta", PreKind::Beta),
            ("pre", PreKind::Rc),
            ("rc", PreKind::Rc),
            ("a", PreKind::Alpha),
            ("b", PreKind::Beta),
            ("c", PreKind::Rc),
        ])?;
        let mut post = self
            .keyword(&[("post", ()), ("rev", ()), ("r", ())])?
            .map(|((), n)| n);
        if post.is_none() && self.rest().starts_with('-') {
            // The implicit post form `1.0-1`.
            let start = self.pos;
            self.pos += 1;
            post = self.number()?;
            if post.is_none() {
                self.pos = start;
            }
        }
        let dev = self.keyword(&[("dev", ())])?.map(|((), n)| n);
        let mut local = Vec::new();
        if self.eat("+") {
            let label = self.rest().to_owned();
            for segment in label.split(['.', '-', '_']) {
                if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return Err(self.error(format!(
                        "local label `+{label}` must be letters and digits separated by `.`"
                    )));
                }
                local.push(LocalSegment::parse(segment));
            }
            self.pos = self.s.len();
        }
        if !self.rest().is_empty() {
            let rest = self.rest().to_owned();
            return Err(self.error(format!("unexpected `{rest}`")));
        }
        Ok(Version {
            epoch,
            release,
            pre,
            post,
            dev,
            local,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        for (input, canonical) in [
            ("7.1.0", "7.1.0"),
            ("v7.1.0", "7.1.0"),
            ("  7.1.0\n", "7.1.0"),
            ("07.01.00", "7.1.0"),
            ("7.1.0RC1", "7.1.0rc1"),
            ("7.1.0-rc.1", "7.1.0rc1"),
            ("7.1.0c1", "7.1.0rc1"),
            ("7.1.0pre2", "7.1.0rc2"),
            ("7.1.0preview2", "7.1.0rc2"),
            ("7.1.0alpha", "7.1.0a0"),
            ("7.1.0.beta.3", "7.1.0b3"),
            ("7.1.0a20250101", "7.1.0a20250101"),
            ("7.1.0-1", "7.1.0.post1"),
            ("7.1.0post", "7.1.0.post0"),
            ("7.1.0.rev2", "7.1.0.post2"),
            ("7.1.0-r3", "7.1.0.post3"),
            ("7.1.0dev", "7.1.0.dev0"),
            ("7.1.0.dev0+ABCDEF0123", "7.1.0.dev0+abcdef0123"),
            ("7.1.0+local-build_007", "7.1.0+local.build.7"),
            ("1!2.0", "1!2.0"),
            ("0!2.0", "2.0"),
            ("7.1.0a20250101+bkc.20250301", "7.1.0a20250101+bkc.20250301"),
            ("1.0rc1.post2.dev3+x", "1.0rc1.post2.dev3+x"),
        ] {
            assert_eq!(canonicalize(input).as_deref(), Ok(canonical), "{input}");
            assert!(is_canonical(canonical), "{canonical}");
        }
    }

    #[test]
    fn invalid_versions() {
        for input in [
            "",
            "v",
            "abc",
            "7.1.0+",
            "7.1.0+a..b",
            "7.1.0+a/b",
            "7.1.0.",
            "7.1.0-",
            "7.1.0foo",
            "7.1.0 rc1",
            "1!",
            "99999999999999999999999.0",
        ] {
            let err = Version::parse(input).unwrap_err();
            assert_eq!(err.input, input);
            assert!(err.to_string().contains("PEP 440"), "{err}");
        }
        assert!(!is_canonical("7.1.0RC1"));
        assert!(!is_canonical("nope"));
    }

    #[test]
    fn ordering_follows_pep_440() {
        let ordered = [
            "1.0.dev0",
            "1.0a0.dev0",
            "1.0a0",
            "1.0a1",
            "1.0b0",
            "1.0rc1",
            "1.0rc1.post1",
            "1.0",
            "1.0+abc",
            "1.0+abc.1",
            "1.0+1",
            "1.0.post0.dev1",
            "1.0.post0",
            "1.0.1",
            "1!0.1",
        ];
        let parsed: Vec<Version> = ordered.iter().map(|s| s.parse().unwrap()).collect();
        for pair in parsed.windows(2) {
            assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(
            Version::parse("1.0").unwrap(),
            Version::parse("1.0.0").unwrap()
        );
        assert_ne!(
            Version::parse("1.0").unwrap(),
            Version::parse("1.0+x").unwrap()
        );
    }

    #[test]
    fn post_tolerance() {
        assert!(matches_ignoring_post("7.1.0", "7.1.0"));
        assert!(matches_ignoring_post("7.1.0", "7.1.0.post1"));
        assert!(matches_ignoring_post("7.1.0.post3", "7.1.0"));
        assert!(matches_ignoring_post("7.1.0.post1", "7.1.0.post2"));
        assert!(matches_ignoring_post("7.1.0", "7.1.0-1"));
        assert!(matches_ignoring_post("7.1.0rc1", "7.1.0rc1.post1"));
        assert!(matches_ignoring_post(
            "7.1.0.dev0+abc",
            "7.1.0.post1.dev0+abc"
        ));
        assert!(matches_ignoring_post("7.1", "7.1.0.post1"));
        assert!(!matches_ignoring_post("7.1.0", "7.1.1"));
        assert!(!matches_ignoring_post("7.1.0", "7.1.0rc1"));
        assert!(!matches_ignoring_post("7.1.0", "7.1.0.dev0"));
        assert!(!matches_ignoring_post("7.1.0", "7.1.0+local"));
        assert!(!matches_ignoring_post("7.1.0.post1", "7.1.1.post1"));
        // Not PEP 440: only identical strings match.
        assert!(matches_ignoring_post("weird", "weird"));
        assert!(!matches_ignoring_post("weird", "7.1.0"));
    }
}
