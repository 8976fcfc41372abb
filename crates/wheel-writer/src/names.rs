//! Names, versions and tags as the wheel and sdist file names need them.

use std::fmt;

use crate::Error;

/// Checks a PEP 508 distribution name (`rocm-sdk-core`, `rocm_sdk`).
pub fn validate_dist_name(name: &str) -> Result<(), Error> {
    let invalid = |reason| Error::InvalidName {
        name: name.to_owned(),
        reason,
    };
    let bytes = name.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return Err(invalid("it is empty"));
    };
    if !first.is_ascii_alphanumeric() || !last.is_ascii_alphanumeric() {
        return Err(invalid("it must start and end with a letter or digit"));
    }
    if !bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(invalid(
            "only ASCII letters, digits, `-`, `_` and `.` are allowed",
        ));
    }
    Ok(())
}

/// The escaped name used in wheel and sdist file names and in the
/// `.dist-info`/`.data` directories: lower-case, each run of `-_.` as `_`
/// (`rocm-sdk-libraries-gfx94X-dcgpu` → `rocm_sdk_libraries_gfx94x_dcgpu`).
pub fn escaped_dist_name(name: &str) -> String {
    separated_lowercase(name, '_')
}

/// The PEP 503 normalised form (`Foo.Bar_baz` → `foo-bar-baz`), the one
/// extra names (PEP 685) and index pages use.
pub fn normalized_name(name: &str) -> String {
    separated_lowercase(name, '-')
}

fn separated_lowercase(name: &str, separator: char) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_run {
                out.push(separator);
            }
            in_run = true;
        } else {
            out.push(c.to_ascii_lowercase());
            in_run = false;
        }
    }
    out
}

/// Checks that `version` is a PEP 440 version in its canonical string form
/// (`str(packaging.version.Version(v)) == v`): `[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`,
/// lower-case, no leading zeros, no zero epoch.
///
/// This crate writes versions verbatim into file names and metadata, so it
/// refuses anything a normaliser would still change.
pub fn validate_version(version: &str) -> Result<(), Error> {
    if is_canonical_version(version) {
        Ok(())
    } else {
        Err(Error::InvalidVersion {
            version: version.to_owned(),
        })
    }
}

fn is_canonical_version(version: &str) -> bool {
    let (public, local) = match version.split_once('+') {
        Some((p, l)) => (p, Some(l)),
        None => (version, None),
    };
    if let Some(local) = local {
        let ok = local.split('.').all(|seg| {
            !seg.is_empty()
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
                && (!seg.bytes().all(|b| b.is_ascii_digit()) || is_number(seg))
        });
        if !ok {
            return false;
        }
    }
    let mut rest = public;
    if let Some((epoch, after)) = rest.split_once('!') {
        if !is_number(epoch) || epoch == "0" {
            return false;
        }
        rest = after;
    }
    // Release: numbers separated by dots, then optional suffixes.
    let release_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (mut release, mut suffix) = rest.split_at(release_end);
    // A `.post`/`.dev` suffix leaves its dot at the end of the release part.
    if let Some(stripped) = release.strip_suffix('.') {
        release = stripped;
        suffix = &rest[release_end - 1..];
    }
    if release.is_empty() || !release.split('.').all(is_number) {
        return false;
    }
    for prefix in ["a", "b", "rc"] {
        if let Some(after) = suffix.strip_prefix(prefix) {
            let end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            if !is_number(&after[..end]) {
                return false;
            }
            suffix = &after[end..];
            break;
        }
    }
    for prefix in [".post", ".dev"] {
        if let Some(after) = suffix.strip_prefix(prefix) {
            let end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            if !is_number(&after[..end]) {
                return false;
            }
            suffix = &after[end..];
        }
    }
    suffix.is_empty()
}

/// A decimal number without leading zeros.
fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// The compatibility tag of a wheel: `{python}-{abi}-{platform}`, each part
/// possibly a compressed set (`py2.py3`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WheelTag {
    python: String,
    abi: String,
    platform: String,
}

impl WheelTag {
    /// Validates and builds a tag; parts hold ASCII letters, digits and `_`,
    /// with `.` separating the members of a compressed set.
    pub fn new(python: &str, abi: &str, platform: &str) -> Result<Self, Error> {
        for part in [python, abi, platform] {
            let ok = !part.is_empty()
                && part.split('.').all(|p| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            if !ok {
                return Err(Error::InvalidTag {
                    tag: format!("{python}-{abi}-{platform}"),
                    reason: "each part must be letters, digits and `_` (sets joined with `.`)",
                });
            }
        }
        Ok(Self {
            python: python.to_owned(),
            abi: abi.to_owned(),
            platform: platform.to_owned(),
        })
    }

    /// The pure-Python-interface tag this project uses for every package:
    /// `py3-none-{platform}`.
    pub fn py3_none(platform: &str) -> Result<Self, Error> {
        Self::new("py3", "none", platform)
    }

    /// The platform part (`linux_x86_64`).
    pub fn platform(&self) -> &str {
        &self.platform
    }

    /// Every expanded tag, in the order the compressed sets list them; each
    /// becomes one `Tag:` line in `WHEEL`.
    pub fn expanded(&self) -> Vec<String> {
        let mut out = Vec::new();
        for py in self.python.split('.') {
            for abi in self.abi.split('.') {
                for plat in self.platform.split('.') {
                    out.push(format!("{py}-{abi}-{plat}"));
                }
            }
        }
        out
    }
}

impl fmt::Display for WheelTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}", self.python, self.abi, self.platform)
    }
}

/// Checks a wheel build tag: digits first, then letters, digits or `_`.
pub fn validate_build_tag(build: &str) -> Result<(), Error> {
    let ok = build.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && build
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidTag {
            tag: build.to_owned(),
            reason: "a build tag starts with a digit and holds only letters, digits and `_`",
        })
    }
}

/// The wheel file name: `{name}-{version}[-{build}]-{tag}.whl`.
pub fn wheel_file_name(name: &str, version: &str, build: Option<&str>, tag: &WheelTag) -> String {
    let name = escaped_dist_name(name);
    match build {
        Some(build) => format!("{name}-{version}-{build}-{tag}.whl"),
        None => format!("{name}-{version}-{tag}.whl"),
    }
}

/// The sdist file name of PEP 625: `{name}-{version}.tar.gz`.
pub fn sdist_file_name(name: &str, version: &str) -> String {
    format!("{}.tar.gz", sdist_top_directory(name, version))
}

/// The single top directory inside an sdist: `{name}-{version}`.
pub fn sdist_top_directory(name: &str, version: &str) -> String {
    format!("{}-{version}", escaped_dist_name(name))
}

/// Checks that an extra name is already in its PEP 685 normalised form.
pub fn validate_extra(extra: &str) -> Result<(), Error> {
    if !extra.is_empty() && normalized_name(extra) == extra && validate_dist_name(extra).is_ok() {
        Ok(())
    } else {
        Err(Error::InvalidMetadata {
            field: "Provides-Extra",
            value: extra.to_owned(),
            reason: "extra names must be normalised (lower-case letters, digits, single `-`)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(is_canonical_version(v), "{v}");
        }
    }

    #[test]
    fn non_canonical_versions_are_refused() {
        for v in [
            "",
            "7.0.0-rc1",
            "7.0.0RC1",
            "07.0",
            "v1.0",
            "1.0.",
            "1..0",
            "0!1.0",
            "1.0c1",
            "1.0alpha1",
            "1.0-1",
            "1.0_dev0",
            "1.0.dev",
            "1.0+",
            "1.0+A",
            "1.0+01",
            "1.0rc",
            "1.0 ",
            "1.0.post1rc1",
            "1.0.dev1.post1",
        ] {
            assert!(!is_canonical_version(v), "{v:?}");
        }
    }

    #[test]
    fn escaped_names_follow_the_wheel_spec() {
        assert_eq!(
            escaped_dist_name("rocm-sdk-libraries-gfx94X-dcgpu"),
            "rocm_sdk_libraries_gfx94x_dcgpu"
        );
        assert_eq!(escaped_dist_name("A.-_b"), "a_b");
        assert_eq!(normalized_name("Foo.Bar__baz"), "foo-bar-baz");
    }

    #[test]
    fn dist_names_are_checked() {
        assert!(validate_dist_name("rocm-sdk-core").is_ok());
        assert!(validate_dist_name("-rocm").is_err());
        assert!(validate_dist_name("rocm sdk").is_err());
        assert!(validate_dist_name("").is_err());
    }

    #[test]
    fn tags_expand_and_name_files() {
        let tag = WheelTag::new("py2.py3", "none", "linux_x86_64").unwrap();
        assert_eq!(
            tag.expanded(),
            ["py2-none-linux_x86_64", "py3-none-linux_x86_64"]
        );
        let tag = WheelTag::py3_none("win_amd64").unwrap();
        assert_eq!(
            wheel_file_name("rocm-sdk-core", "7.0.0rc1", None, &tag),
            "rocm_sdk_core-7.0.0rc1-py3-none-win_amd64.whl"
        );
        assert_eq!(
            wheel_file_name("Foo", "1.0", Some("1_x"), &tag),
            "foo-1.0-1_x-py3-none-win_amd64.whl"
        );
        assert!(WheelTag::new("py3", "none", "linux-x86_64").is_err());
        assert!(validate_build_tag("x1").is_err());
        assert_eq!(sdist_file_name("rocm", "7.0.0"), "rocm-7.0.0.tar.gz");
    }

    #[test]
    fn extras_must_be_normalised() {
        assert!(validate_extra("device-gfx942").is_ok());
        assert!(validate_extra("device_gfx942").is_err());
        assert!(validate_extra("Device").is_err());
    }
}
