//! Which version a build gets (docs/behaviour.md#versions): the version the
//! caller gives, else the version `therock_manifest.json` recorded, else an
//! error — never an invented number.

use pypa_formats::version::{Version, VersionError};

/// Where the chosen version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSource {
    /// The caller gave it (`therock-package`'s `--version`).
    Given,
    /// The top-level `"version"` of `therock_manifest.json`.
    Manifest,
}

/// The version a build uses, and its source (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenVersion {
    /// The parsed version; `to_string()` is canonical.
    pub version: Version,
    /// Where it came from.
    pub source: VersionSource,
}

/// No usable version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionChoiceError {
    /// Neither the caller nor the manifest gives one.
    #[error(
        "no package version: therock_manifest.json records none (top-level key \"version\"); \
         give the version to build, e.g. 7.1.0"
    )]
    Missing,
    /// The manifest's version is not PEP 440.
    #[error("therock_manifest.json \"version\" (give a version to build instead)")]
    InvalidManifest(#[source] VersionError),
}

/// Picks the build's version: `given` wins, else `manifest` (the
/// `"version"` recorded in `therock_manifest.json`, read by the caller; a
/// blank string counts as not recorded).
///
/// ```
/// use dist_info::release_version::{choose_version, VersionSource};
/// let v = choose_version(Some("7.1.0"), None).unwrap();
/// assert_eq!((v.version.to_string(), v.source), ("7.1.0".into(), VersionSource::Manifest));
/// let given = "7.2.0rc1".parse().unwrap();
/// assert_eq!(choose_version(Some("7.1.0"), Some(&given)).unwrap().source, VersionSource::Given);
/// assert!(choose_version(None, None).is_err());
/// ```
pub fn choose_version(
    manifest: Option<&str>,
    given: Option<&Version>,
) -> Result<ChosenVersion, VersionChoiceError> {
    if let Some(version) = given {
        return Ok(ChosenVersion {
            version: version.clone(),
            source: VersionSource::Given,
        });
    }
    match manifest.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => Version::parse(m)
            .map(|version| ChosenVersion {
                version,
                source: VersionSource::Manifest,
            })
            .map_err(VersionChoiceError::InvalidManifest),
        None => Err(VersionChoiceError::Missing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_errors() {
        let given = Version::parse("7.2.0rc1").unwrap();
        let v = choose_version(Some("7.1.0"), Some(&given)).unwrap();
        assert_eq!(v.version.to_string(), "7.2.0rc1");
        assert_eq!(v.source, VersionSource::Given);
        let v = choose_version(Some("7.1.0-RC1"), None).unwrap();
        assert_eq!(v.version.to_string(), "7.1.0rc1");
        assert_eq!(
            choose_version(Some("  "), None),
            Err(VersionChoiceError::Missing)
        );
        assert!(matches!(
            choose_version(Some("banana"), None),
            Err(VersionChoiceError::InvalidManifest(_))
        ));
        // A bad manifest value does not matter when a version is given.
        let given = Version::parse("7.1.0").unwrap();
        assert!(choose_version(Some("banana"), Some(&given)).is_ok());
        // The message names the source; the cause follows in the chain.
        let err = choose_version(Some("banana"), None).unwrap_err();
        assert_eq!(
            fs_helpers::error_chain::Chain(&err).to_string(),
            "therock_manifest.json \"version\" (give a version to build instead): version \
             `banana` is not a valid PEP 440 version: it must start with a release number; use \
             a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`"
        );
    }
}
