//! Wheel and sdist file names, wheel compatibility tags and the `.dist-info`
//! directory names that go with them, parsed once and written back the same
//! way (docs/dist-info.md, "Names, versions and wheel file names").
//!
//! ```
//! use pypa_formats::filename::WheelFilename;
//!
//! let wheel: WheelFilename = "rocm_sdk_core-7.1.0rc1-py3-none-linux_x86_64.whl".parse()?;
//! assert_eq!(wheel.name.normalized(), "rocm-sdk-core");
//! assert_eq!(wheel.version.as_str(), "7.1.0rc1");
//! assert_eq!(wheel.tag.platform(), "linux_x86_64");
//! assert_eq!(wheel.dist_info_dir().to_string(), "rocm_sdk_core-7.1.0rc1.dist-info");
//! assert_eq!(wheel.to_string(), "rocm_sdk_core-7.1.0rc1-py3-none-linux_x86_64.whl");
//! # Ok::<(), pypa_formats::filename::FilenameError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::dist_name::DistName;
use crate::version::CanonicalVersion;

/// A wheel tag or build tag that is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("wheel tag {tag:?} is not valid: {reason}")]
pub struct WheelTagError {
    /// The tag as given.
    pub tag: String,
    /// The rule it breaks.
    pub reason: &'static str,
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
    pub fn new(python: &str, abi: &str, platform: &str) -> Result<Self, WheelTagError> {
        for part in [python, abi, platform] {
            let ok = !part.is_empty()
                && part.split('.').all(|p| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            if !ok {
                return Err(WheelTagError {
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
    pub fn py3_none(platform: &str) -> Result<Self, WheelTagError> {
        Self::new("py3", "none", platform)
    }

    /// The platform part (`linux_x86_64`), a compressed set as written.
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

/// The platform part of a wheel tag (`linux_x86_64`, `win_amd64`,
/// `manylinux_2_28_x86_64`), checked as the tag `py3-none-{platform}` is:
/// what a build's `--platform-tag` takes.
///
/// ```
/// use pypa_formats::filename::PlatformTag;
///
/// let tag: PlatformTag = "win_amd64".parse()?;
/// assert_eq!(tag.as_str(), "win_amd64");
/// assert!("linux-x86_64".parse::<PlatformTag>().is_err());
/// # Ok::<(), pypa_formats::filename::WheelTagError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlatformTag(String);

impl PlatformTag {
    /// The tag as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PlatformTag {
    type Err = WheelTagError;

    /// The error names the whole tag `py3-none-{platform}` it would make.
    fn from_str(platform: &str) -> Result<Self, Self::Err> {
        WheelTag::py3_none(platform).map(|_| Self(platform.to_owned()))
    }
}

impl fmt::Display for PlatformTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for PlatformTag {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A wheel build tag (`1`, `2_abc`): a digit first, then letters, digits
/// or `_`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BuildTag(String);

impl BuildTag {
    /// The tag as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for BuildTag {
    type Err = WheelTagError;

    fn from_str(build: &str) -> Result<Self, Self::Err> {
        let ok = build.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && build
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if ok {
            Ok(Self(build.to_owned()))
        } else {
            Err(WheelTagError {
                tag: build.to_owned(),
                reason: "a build tag starts with a digit and holds only letters, digits and `_`",
            })
        }
    }
}

impl fmt::Display for BuildTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A string that is not a wheel or sdist file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{filename:?} is not {form}: {reason}")]
pub struct FilenameError {
    /// The file name as given.
    pub filename: String,
    /// The form it should have (`a wheel file name ({name}-…)`).
    pub form: &'static str,
    /// The rule it breaks (a part's own error, said here once).
    pub reason: String,
}

impl FilenameError {
    /// An error for `filename` that should have `form`, as a closure taking
    /// the reason (the parsers below report every rule through it).
    fn for_name(filename: &str, form: &'static str) -> impl Fn(String) -> Self {
        move |reason| Self {
            filename: filename.to_owned(),
            form,
            reason,
        }
    }
}

/// `{name}-{version}[-{build}]-{python}-{abi}-{platform}.whl`.
///
/// Parsing keeps the name as spelled in the file name (a well-formed wheel
/// spells it escaped, [`DistName::is_escaped`]); `Display` writes the
/// escaped name, so a well-formed file name round-trips byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WheelFilename {
    /// The distribution.
    pub name: DistName,
    /// Its version.
    pub version: CanonicalVersion,
    /// The optional build tag.
    pub build: Option<BuildTag>,
    /// The compatibility tag.
    pub tag: WheelTag,
}

impl WheelFilename {
    /// `{name}-{version}.dist-info`, the wheel's metadata directory.
    pub fn dist_info_dir(&self) -> DistInfoDir {
        DistInfoDir {
            name: self.name.clone(),
            version: self.version.to_string(),
        }
    }

    /// `{name}-{version}.data`, the wheel's directory of install schemes.
    pub fn data_dir(&self) -> String {
        format!("{}-{}.data", self.name.escaped(), self.version)
    }
}

/// One part of a file name, parsed; its error becomes the file name's.
fn part<T: FromStr>(
    text: &str,
    error: &impl Fn(String) -> FilenameError,
) -> Result<T, FilenameError>
where
    T::Err: fmt::Display,
{
    text.parse().map_err(|e: T::Err| error(e.to_string()))
}

impl WheelFilename {
    const FORM: &'static str =
        "a wheel file name ({name}-{version}[-{build}]-{python}-{abi}-{platform}.whl)";
}

impl FromStr for WheelFilename {
    type Err = FilenameError;

    fn from_str(filename: &str) -> Result<Self, Self::Err> {
        let error = FilenameError::for_name(filename, Self::FORM);
        let stem = filename
            .strip_suffix(".whl")
            .ok_or_else(|| error("it does not end in `.whl`".to_owned()))?;
        let parts: Vec<&str> = stem.split('-').collect();
        let (name, version, build, [python, abi, platform]) = match parts.as_slice() {
            [name, version, python, abi, platform] => {
                (*name, *version, None, [*python, *abi, *platform])
            }
            [name, version, build, python, abi, platform] => {
                (*name, *version, Some(*build), [*python, *abi, *platform])
            }
            _ => {
                return Err(error(format!(
                    "it has {} `-`-separated parts, not 5 or 6",
                    parts.len()
                )));
            }
        };
        Ok(Self {
            name: part(name, &error)?,
            version: part(version, &error)?,
            build: build.map(|build| part(build, &error)).transpose()?,
            tag: WheelTag::new(python, abi, platform).map_err(|e| error(e.to_string()))?,
        })
    }
}

impl fmt::Display for WheelFilename {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.name.escaped(), self.version)?;
        if let Some(build) = &self.build {
            write!(f, "-{build}")?;
        }
        write!(f, "-{}.whl", self.tag)
    }
}

/// `{name}-{version}.tar.gz` (PEP 625), whose one top directory is
/// `{name}-{version}`.
///
/// As with [`WheelFilename`], parsing keeps the name's spelling and
/// `Display` writes it escaped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SdistFilename {
    /// The distribution.
    pub name: DistName,
    /// Its version.
    pub version: CanonicalVersion,
}

impl SdistFilename {
    /// The single top directory inside the sdist: `{name}-{version}`.
    pub fn top_directory(&self) -> String {
        format!("{}-{}", self.name.escaped(), self.version)
    }
}

impl FromStr for SdistFilename {
    type Err = FilenameError;

    fn from_str(filename: &str) -> Result<Self, Self::Err> {
        let error =
            FilenameError::for_name(filename, "an sdist file name ({name}-{version}.tar.gz)");
        let (name, version) = filename
            .strip_suffix(".tar.gz")
            .ok_or_else(|| error("it does not end in `.tar.gz`".to_owned()))?
            .rsplit_once('-')
            .ok_or_else(|| error("no `-` separates the name from the version".to_owned()))?;
        Ok(Self {
            name: part(name, &error)?,
            version: part(version, &error)?,
        })
    }
}

impl fmt::Display for SdistFilename {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.tar.gz", self.top_directory())
    }
}

/// A string that is not a `.dist-info` directory name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{dir:?} is not a `{{name}}-{{version}}.dist-info` directory name")]
pub struct DistInfoDirError {
    /// The directory name as given.
    pub dir: String,
}

/// `{name}-{version}.dist-info`: where an installed (or packaged)
/// distribution keeps its metadata. The version is kept as the installer
/// wrote it (an escaped name has no `-`, so the last `-` separates them).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DistInfoDir {
    /// The distribution, as spelled in the directory name.
    pub name: DistName,
    /// The version, as spelled in the directory name.
    pub version: String,
}

impl DistInfoDir {
    /// The suffix every such directory name carries.
    pub const SUFFIX: &'static str = ".dist-info";
}

impl FromStr for DistInfoDir {
    type Err = DistInfoDirError;

    fn from_str(dir: &str) -> Result<Self, Self::Err> {
        let error = || DistInfoDirError {
            dir: dir.to_owned(),
        };
        let (name, version) = dir
            .strip_suffix(Self::SUFFIX)
            .and_then(|stem| stem.rsplit_once('-'))
            .ok_or_else(error)?;
        if version.is_empty() {
            return Err(error());
        }
        Ok(Self {
            name: name.parse().map_err(|_| error())?,
            version: version.to_owned(),
        })
    }
}

impl fmt::Display for DistInfoDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}{}",
            self.name.escaped(),
            self.version,
            Self::SUFFIX
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_refused;

    #[test]
    fn tags_expand() {
        let tag = WheelTag::new("py2.py3", "none", "linux_x86_64").unwrap();
        assert_eq!(
            tag.expanded(),
            ["py2-none-linux_x86_64", "py3-none-linux_x86_64"]
        );
        assert!(WheelTag::new("py3", "none", "linux-x86_64").is_err());
        assert!(WheelTag::new("py3", "", "any").is_err());
        assert!(WheelTag::new("py3", "none", "a..b").is_err());
        assert!("x1".parse::<BuildTag>().is_err());
        assert!("".parse::<BuildTag>().is_err());
        assert_eq!("1_x".parse::<BuildTag>().unwrap().as_str(), "1_x");
    }

    #[test]
    fn file_names_are_written_with_the_escaped_name() {
        let wheel = WheelFilename {
            name: "rocm-sdk-libraries-gfx94X-dcgpu".parse().unwrap(),
            version: "7.0.0rc1".parse().unwrap(),
            build: None,
            tag: WheelTag::py3_none("win_amd64").unwrap(),
        };
        assert_eq!(
            wheel.to_string(),
            "rocm_sdk_libraries_gfx94x_dcgpu-7.0.0rc1-py3-none-win_amd64.whl"
        );
        assert_eq!(
            wheel.dist_info_dir().to_string(),
            "rocm_sdk_libraries_gfx94x_dcgpu-7.0.0rc1.dist-info"
        );
        assert_eq!(
            wheel.data_dir(),
            "rocm_sdk_libraries_gfx94x_dcgpu-7.0.0rc1.data"
        );
        let built = WheelFilename {
            name: "Foo".parse().unwrap(),
            build: Some("1_x".parse().unwrap()),
            ..wheel
        };
        assert_eq!(built.to_string(), "foo-7.0.0rc1-1_x-py3-none-win_amd64.whl");
    }

    /// Every well-formed file name parses and is written back identically;
    /// parsing what was written gives the same value.
    #[test]
    fn file_names_round_trip() {
        let names = ["rocm", "rocm_sdk_core", "a", "x9_y"];
        let versions = ["7.1.0", "1!2.0rc1.post2.dev3+abc.7", "7.1.0.dev0+0123abc"];
        let builds = [None, Some("1"), Some("2_abc")];
        let tags = [
            ("py3", "none", "linux_x86_64"),
            ("py2.py3", "none", "any"),
            ("cp312", "abi3", "manylinux_2_28_x86_64.win_amd64"),
        ];
        for name in names {
            for version in versions {
                for build in builds {
                    for (python, abi, platform) in tags {
                        let text = match build {
                            Some(b) => {
                                format!("{name}-{version}-{b}-{python}-{abi}-{platform}.whl")
                            }
                            None => format!("{name}-{version}-{python}-{abi}-{platform}.whl"),
                        };
                        let parsed: WheelFilename = text.parse().unwrap();
                        assert_eq!(parsed.to_string(), text);
                        assert_eq!(parsed.to_string().parse::<WheelFilename>().unwrap(), parsed);
                        assert!(parsed.name.is_escaped());
                        let dir = parsed.dist_info_dir();
                        assert_eq!(dir.to_string().parse::<DistInfoDir>().unwrap(), dir);
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_file_names_say_what_is_wrong() {
        for (input, rule) in [
            ("rocm-7.1.0-py3-none-any.tar.gz", "does not end in `.whl`"),
            ("rocm-7.1.0-any.whl", "3 `-`-separated parts"),
            (
                "rocm-sdk-core-7.1.0-py3-none-any.whl",
                "7 `-`-separated parts",
            ),
            (
                "rocm-7.1.0RC1-py3-none-any.whl",
                "canonical spelling is `7.1.0rc1`",
            ),
            (
                "rocm-7.1.0-x1-py3-none-any.whl",
                "a build tag starts with a digit",
            ),
            ("rocm-7.1.0-py3-none-.whl", "each part must be"),
            (
                "_rocm-7.1.0-py3-none-any.whl",
                "start and end with a letter or digit",
            ),
        ] {
            let err = assert_refused::<WheelFilename>(input, rule);
            assert_eq!(err.filename, input);
        }
    }

    #[test]
    fn a_wheel_keeps_the_spelling_of_an_unescaped_name() {
        let wheel: WheelFilename = "Rocm.Sdk-7.1.0-py3-none-any.whl".parse().unwrap();
        assert_eq!(wheel.name.as_str(), "Rocm.Sdk");
        assert!(!wheel.name.is_escaped());
        assert_eq!(wheel.to_string(), "rocm_sdk-7.1.0-py3-none-any.whl");
    }

    #[test]
    fn sdist_file_names() {
        let sdist: SdistFilename = "rocm-7.1.0.tar.gz".parse().unwrap();
        assert_eq!(sdist.top_directory(), "rocm-7.1.0");
        assert_eq!(sdist.to_string(), "rocm-7.1.0.tar.gz");
        let sdist: SdistFilename = "Rocm.Sdk-7.1.0rc1.tar.gz".parse().unwrap();
        assert_eq!(sdist.name.as_str(), "Rocm.Sdk");
        assert_eq!(sdist.to_string(), "rocm_sdk-7.1.0rc1.tar.gz");
        for (input, rule) in [
            ("rocm-7.1.0.zip", "does not end in `.tar.gz`"),
            ("rocm.tar.gz", "no `-` separates"),
            ("rocm-7.1.0RC1.tar.gz", "canonical spelling is `7.1.0rc1`"),
            ("-7.1.0.tar.gz", "is empty"),
        ] {
            assert_refused::<SdistFilename>(input, rule);
        }
    }

    #[test]
    fn dist_info_directories() {
        let dir: DistInfoDir = "rocm_sdk_device_gfx942-7.1.0.post1.dist-info"
            .parse()
            .unwrap();
        assert_eq!(dir.name.as_str(), "rocm_sdk_device_gfx942");
        assert_eq!(dir.version, "7.1.0.post1");
        for bad in [
            "rocm_sdk_devel.dist-info",
            "rocm_sdk_devel-.dist-info",
            "-7.1.0.dist-info",
            "x-1",
        ] {
            assert_refused::<DistInfoDir>(bad, "{name}-{version}.dist-info");
        }
    }
}
