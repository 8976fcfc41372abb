//! PEP 440 versions: parsing, canonical form, ordering, and the `.postN`
//! tolerance rule device links use (docs/behaviour.md#versions).
//!
//! One implementation for the whole workspace: [`Version`] is `pep440_rs`'s
//! version (the one `pep508_rs` uses for `Requires-Dist`), so parsing,
//! the canonical spelling and the order are PyPA's everywhere, with no
//! Python present. What is ours: the error text, the refusal of a local
//! number no 64-bit integer holds (the order would no longer be PEP 440's),
//! [`CanonicalVersion`] and the `.postN` tolerance rules.

mod canonical;

pub use canonical::{CanonicalVersion, CanonicalVersionError};

use std::fmt;
use std::str::FromStr;

use pep440_rs::LocalSegment;

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

/// A parsed PEP 440 version.
///
/// `Display` writes the canonical form (the one `packaging.version.Version`
/// prints), so `v.to_string()` is what goes into wheel names and METADATA.
/// Equality and ordering follow PEP 440 (`1.0 == 1.0.0`, `7.9.0 <
/// 7.10.0`, `.devN` before pre-releases, pre-releases before the release,
/// the release before its local versions and those before `.postN`).
///
/// ```
/// use pypa_formats::version::Version;
/// let v: Version = "v7.1-RC.1".parse().unwrap();
/// assert_eq!(v.to_string(), "7.1rc1");
/// assert!(v < "7.1".parse().unwrap());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pep440_rs::Version);

impl Version {
    /// Parses any PEP 440 spelling (case, separators, surrounding
    /// whitespace, `v` prefix, implicit numbers and the `-N` post form are
    /// accepted and normalised).
    pub fn parse(input: &str) -> Result<Self, VersionError> {
        let error = |reason: String| VersionError {
            input: input.to_owned(),
            reason,
        };
        // Python's `packaging` strips Unicode whitespace; `pep440_rs` only ASCII.
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(error("it is empty".to_owned()));
        }
        let unprefixed = trimmed.strip_prefix(['v', 'V']).unwrap_or(trimmed);
        if !unprefixed.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(error("it must start with a release number".to_owned()));
        }
        let version = pep440_rs::Version::from_str(trimmed).map_err(|e| error(e.to_string()))?;
        // A digit string too long for `u64` stays text in `pep440_rs`, which
        // would order it before letters and keep its leading zeros.
        if let Some(LocalSegment::String(digits)) = version
            .local()
            .iter()
            .find(|s| matches!(s, LocalSegment::String(t) if t.bytes().all(|b| b.is_ascii_digit())))
        {
            return Err(error(format!(
                "local number `{digits}` is larger than {}",
                u64::MAX
            )));
        }
        Ok(Self(version))
    }

    /// This version with any `.postN` segment removed.
    #[must_use]
    pub fn without_post(&self) -> Self {
        Self(self.0.clone().with_post(None))
    }

    /// True when this is a plain release (`X.Y.Z`, no other segment).
    pub fn is_plain_release(&self) -> bool {
        self.0.epoch() == 0
            && self.0.pre().is_none()
            && self.0.post().is_none()
            && self.0.dev().is_none()
            && self.0.local().is_empty()
    }

    /// The release numbers (`[7, 1, 0]` for `7.1.0rc1`); never empty.
    pub fn release(&self) -> &[u64] {
        self.0.release()
    }

    /// The `.postN` number, when there is one.
    pub fn post(&self) -> Option<u64> {
        self.0.post()
    }

    /// The `.devN` number, when there is one.
    pub fn dev(&self) -> Option<u64> {
        self.0.dev()
    }

    /// Whether a local label (`+abc.5`) follows the public version.
    pub fn is_local(&self) -> bool {
        self.0.is_local()
    }

    /// The same version as `pep440_rs` holds it, for its specifiers
    /// (`>=7.1,<8`).
    pub fn as_pep440(&self) -> &pep440_rs::Version {
        &self.0
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
        fmt::Display::fmt(&self.0, f)
    }
}

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

    /// The orders a release pipeline meets, as PEP 440 (and pip) sort them.
    #[test]
    fn release_versions_order_as_pep_440() {
        let ordered = [
            "7.9.0",
            "7.10.0.dev0",
            "7.10.0.dev0+abc",
            "7.10.0a20250101",
            "7.10.0b1",
            "7.10.0rc1",
            "7.10.0rc2",
            "7.10.0",
            "7.10.0+abc",
            "7.10.0+abc.2",
            "7.10.0+abc.10",
            "7.10.0.post1.dev0",
            "7.10.0.post1",
            "7.10.0.post2",
            "7.10.1",
            "7.11.0",
        ];
        let parsed: Vec<Version> = ordered.iter().map(|s| s.parse().unwrap()).collect();
        for (i, a) in parsed.iter().enumerate() {
            for (j, b) in parsed.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    /// Separators after a pre-, post- or dev-release word are part of the
    /// spelling, as in `packaging` (`7.1.0rc-` is `7.1.0rc0`).
    #[test]
    fn trailing_separators_are_read_as_packaging_reads_them() {
        for (input, canonical) in [
            ("9pre_", "9rc0"),
            ("7r-", "7.post0"),
            ("0dev-", "0.dev0"),
            ("1.alpha.", "1a0"),
            ("7.1.0rc-+abc", "7.1.0rc0+abc"),
        ] {
            assert_eq!(canonicalize(input).as_deref(), Ok(canonical), "{input}");
        }
    }

    /// A local number no `u64` holds would sort as text before letters
    /// (and keep its leading zeros): refused, as a release number is.
    #[test]
    fn local_numbers_beyond_u64_are_refused() {
        let err = Version::parse("7.1.0+00123456789012345678901").unwrap_err();
        assert_eq!(
            err.reason,
            "local number `00123456789012345678901` is larger than 18446744073709551615"
        );
        assert_eq!(
            canonicalize("7.1.0+18446744073709551615").as_deref(),
            Ok("7.1.0+18446744073709551615")
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
