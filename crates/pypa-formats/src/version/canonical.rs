//! A version that is already in its canonical PEP 440 spelling, checked
//! once where it enters (file names, METADATA, the packages a build writes).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use super::Version;

/// A string that is not a PEP 440 version in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "version {version:?} is not a canonical PEP 440 version (for example `7.0.0`, \
     `7.0.0rc1`, `7.0.0.dev0+abc`){}; normalise it before packaging",
    canonical.as_ref().map(|c| format!(", its canonical spelling is `{c}`")).unwrap_or_default()
)]
pub struct CanonicalVersionError {
    /// The version as given.
    pub version: String,
    /// Its canonical spelling, when it is valid PEP 440 at all.
    pub canonical: Option<String>,
}

/// A PEP 440 version spelled canonically (`str(packaging.version.Version(v))
/// == v`): `[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`, lower case, no
/// leading zeros, no zero epoch. Parsing refuses every other spelling
/// instead of normalising it, so the string written into file names and
/// metadata is exactly the one given; [`Version`] gives the parsed value.
///
/// Equal when the spellings are equal; ordered as PEP 440 orders the
/// versions (`7.9.0 < 7.10.0`), two spellings of one version (`1.0` and
/// `1.0.0`, both canonical) by their text.
///
/// ```
/// use pypa_formats::version::CanonicalVersion;
///
/// let v: CanonicalVersion = "7.1.0rc1".parse()?;
/// assert_eq!(v.to_string(), "7.1.0rc1");
/// assert!("7.1.0-RC1".parse::<CanonicalVersion>().is_err());
/// # Ok::<(), pypa_formats::version::CanonicalVersionError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CanonicalVersion {
    text: String,
    version: Version,
}

impl CanonicalVersion {
    /// The canonical spelling.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed version.
    pub fn version(&self) -> &Version {
        &self.version
    }
}

impl From<&Version> for CanonicalVersion {
    fn from(version: &Version) -> Self {
        Self {
            text: version.to_string(),
            version: version.clone(),
        }
    }
}

impl PartialEq for CanonicalVersion {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for CanonicalVersion {}

impl Hash for CanonicalVersion {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl Ord for CanonicalVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.version
            .cmp(&other.version)
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl PartialOrd for CanonicalVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for CanonicalVersion {
    type Err = CanonicalVersionError;

    fn from_str(version: &str) -> Result<Self, Self::Err> {
        let parsed = Version::parse(version).ok();
        match parsed.as_ref().map(Version::to_string) {
            Some(canonical) if canonical == version => Ok(Self {
                text: canonical,
                version: parsed.expect("it parsed"),
            }),
            canonical => Err(CanonicalVersionError {
                version: version.to_owned(),
                canonical,
            }),
        }
    }
}

impl fmt::Display for CanonicalVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_refused;

    #[test]
    fn canonical_versions_are_accepted() {
        for v in [
            "7.0.0",
            "1",
            "7.0.0rc1",
            "7.0.0a20250101",
            "7.0.0.dev0",
            "7.0.0.dev0+0123abc",
            "7.0.0a20250101+bkc.20250102",
            "1!2.0",
            "1.0.post3",
            "1.0b2.post3.dev4",
            "7.0.0+local.7",
        ] {
            let parsed: CanonicalVersion = v.parse().unwrap();
            assert_eq!(parsed.to_string(), v);
            assert_eq!(CanonicalVersion::from(parsed.version()), parsed);
        }
    }

    #[test]
    fn other_spellings_are_refused_naming_the_canonical_one() {
        for (v, canonical) in [
            ("", None),
            ("7.0.0-rc1", Some("7.0.0rc1")),
            ("7.0.0RC1", Some("7.0.0rc1")),
            ("07.0", Some("7.0")),
            ("v1.0", Some("1.0")),
            ("1.0.", None),
            ("1..0", None),
            ("0!1.0", Some("1.0")),
            ("1.0c1", Some("1.0rc1")),
            ("1.0alpha1", Some("1.0a1")),
            ("1.0-1", Some("1.0.post1")),
            ("1.0_dev0", Some("1.0.dev0")),
            ("1.0.dev", Some("1.0.dev0")),
            ("1.0+", None),
            ("1.0+A", Some("1.0+a")),
            ("1.0+01", Some("1.0+1")),
            ("1.0rc", Some("1.0rc0")),
            ("1.0 ", Some("1.0")),
            ("1.0.post1rc1", None),
            ("1.0.dev1.post1", None),
        ] {
            let rule = canonical.map(|c| format!("`{c}`")).unwrap_or_default();
            let err = assert_refused::<CanonicalVersion>(v, &rule);
            assert_eq!(err.version, v);
            assert_eq!(err.canonical.as_deref(), canonical, "{v:?}");
        }
    }

    /// Canonicalising any accepted spelling gives a string that parses as
    /// canonical and means the same version.
    #[test]
    fn canonical_spellings_round_trip() {
        for input in ["7.1.0-RC.1", "v1.0.0", "1.0-1", "1.0+Abc-01", "2!1.0a.dev"] {
            let version = Version::parse(input).unwrap();
            let canonical: CanonicalVersion = version.to_string().parse().unwrap();
            assert_eq!(canonical.version(), &version);
        }
    }

    /// Ordered as PEP 440 orders versions, not as their text sorts
    /// (`"7.10.0" < "7.9.0"` as strings); equal only when spelled alike.
    #[test]
    fn canonical_versions_order_as_pep_440() {
        let ordered = [
            "7.9.0",
            "7.10.0.dev0",
            "7.10.0a20250101",
            "7.10.0rc1",
            "7.10.0",
            "7.10.0+local",
            "7.10.0.post1",
            "7.10.1",
        ];
        let parsed: Vec<CanonicalVersion> = ordered.iter().map(|v| v.parse().unwrap()).collect();
        for pair in parsed.windows(2) {
            assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
        }
        let mut shuffled = parsed.clone();
        shuffled.reverse();
        shuffled.sort();
        assert_eq!(shuffled, parsed);
        // Two canonical spellings of one version: distinct, ordered by text.
        let (short, long): (CanonicalVersion, CanonicalVersion) =
            ("1.0".parse().unwrap(), "1.0.0".parse().unwrap());
        assert_eq!(short.version(), long.version());
        assert_ne!(short, long);
        assert!(short < long);
    }
}
