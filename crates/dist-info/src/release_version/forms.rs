//! The version forms TheRock computes (docs/behaviour.md#version-forms).

use pypa_formats::version::{Version, VersionError};

/// How a build's version is formed from the ROCm version `X.Y.Z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionForm {
    /// `X.Y.Z`.
    Release,
    /// CI/dev: `X.Y.Z.dev0+{full git sha}`.
    Dev {
        /// The commit, lower-case hexadecimal.
        git_sha: String,
    },
    /// Nightly: `X.Y.ZaYYYYMMDD`.
    Nightly {
        /// The build date, `YYYYMMDD`.
        date: String,
    },
    /// Prerelease: `X.Y.ZrcN`.
    Prerelease {
        /// The candidate number.
        rc: u64,
    },
    /// Nightly built from a "best known configuration":
    /// `X.Y.ZaBASEDATE+bkc.YYYYMMDD`.
    NightlyBkc {
        /// The nightly the configuration is based on, `YYYYMMDD`.
        base_date: String,
        /// The configuration's date, `YYYYMMDD`.
        bkc_date: String,
    },
}

fn check_date(what: &str, date: &str, input: &str) -> Result<(), VersionError> {
    let ok = date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
        && (1..=12).contains(&date[4..6].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&date[6..8].parse::<u32>().unwrap_or(0));
    if ok {
        Ok(())
    } else {
        Err(VersionError {
            input: input.to_owned(),
            reason: format!("{what} `{date}` is not a YYYYMMDD date"),
        })
    }
}

/// Builds the version of `form` on top of `rocm_version` (a plain `X.Y.Z`),
/// then appends `custom_suffix` verbatim. The result is returned parsed, so
/// its `Display` is the canonical PEP 440 form every wheel uses.
///
/// ```
/// use dist_info::release_version::{compose, VersionForm};
/// let v = compose("7.1.0", &VersionForm::Nightly { date: "20250301".into() }, None).unwrap();
/// assert_eq!(v.to_string(), "7.1.0a20250301");
/// let v = compose("7.1.0", &VersionForm::Release, Some(".post1")).unwrap();
/// assert_eq!(v.to_string(), "7.1.0.post1");
/// ```
pub fn compose(
    rocm_version: &str,
    form: &VersionForm,
    custom_suffix: Option<&str>,
) -> Result<Version, VersionError> {
    let base = Version::parse(rocm_version)?;
    if !base.is_plain_release() {
        return Err(VersionError {
            input: rocm_version.to_owned(),
            reason: "the ROCm version must be a plain release like `7.1.0`".to_owned(),
        });
    }
    let base = base.to_string();
    let text = match form {
        VersionForm::Release => base,
        VersionForm::Dev { git_sha } => {
            if git_sha.is_empty() || !git_sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(VersionError {
                    input: git_sha.clone(),
                    reason: "the git sha must be hexadecimal".to_owned(),
                });
            }
            format!("{base}.dev0+{}", git_sha.to_ascii_lowercase())
        }
        VersionForm::Nightly { date } => {
            check_date("the nightly date", date, date)?;
            format!("{base}a{date}")
        }
        VersionForm::Prerelease { rc } => format!("{base}rc{rc}"),
        VersionForm::NightlyBkc {
            base_date,
            bkc_date,
        } => {
            check_date("the base date", base_date, base_date)?;
            check_date("the bkc date", bkc_date, bkc_date)?;
            format!("{base}a{base_date}+bkc.{bkc_date}")
        }
    };
    Version::parse(&format!("{text}{}", custom_suffix.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(form: &VersionForm, suffix: Option<&str>) -> String {
        compose("7.1.0", form, suffix).unwrap().to_string()
    }

    #[test]
    fn every_form() {
        let sha = "0123456789ABCDEF0123456789abcdef01234567";
        assert_eq!(c(&VersionForm::Release, None), "7.1.0");
        assert_eq!(
            c(
                &VersionForm::Dev {
                    git_sha: sha.into()
                },
                None
            ),
            "7.1.0.dev0+0123456789abcdef0123456789abcdef01234567"
        );
        assert_eq!(
            c(
                &VersionForm::Nightly {
                    date: "20251231".into()
                },
                None
            ),
            "7.1.0a20251231"
        );
        assert_eq!(c(&VersionForm::Prerelease { rc: 2 }, None), "7.1.0rc2");
        assert_eq!(
            c(
                &VersionForm::NightlyBkc {
                    base_date: "20250101".into(),
                    bkc_date: "20250215".into()
                },
                None
            ),
            "7.1.0a20250101+bkc.20250215"
        );
        assert_eq!(
            c(&VersionForm::Prerelease { rc: 1 }, Some(".post1")),
            "7.1.0rc1.post1"
        );
        assert_eq!(c(&VersionForm::Release, Some("+local-7")), "7.1.0+local.7");
    }

    #[test]
    fn bad_inputs() {
        assert!(compose("7.1.0rc1", &VersionForm::Release, None).is_err());
        assert!(compose("seven", &VersionForm::Release, None).is_err());
        for form in [
            VersionForm::Dev {
                git_sha: "xyz".into(),
            },
            VersionForm::Nightly {
                date: "2025011".into(),
            },
            VersionForm::Nightly {
                date: "20251301".into(),
            },
        ] {
            assert!(compose("7.1.0", &form, None).is_err(), "{form:?}");
        }
        let err = compose("7.1.0", &VersionForm::Release, Some("~custom")).unwrap_err();
        assert!(err.to_string().contains("7.1.0~custom"), "{err}");
    }
}
