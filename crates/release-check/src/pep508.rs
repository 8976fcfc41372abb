//! `Requires-Dist` lines as PEP 508 defines them (parsed by `pep508_rs`),
//! and their markers evaluated for one target environment: a wheel
//! platform tag and a Python version.
//!
//! Every marker variable gets the value the target would give it. The two
//! that no platform tag decides (`platform_release`, `platform_version`:
//! the running kernel), a comparison PEP 508 does not define (`extra >
//! "a"`, ordering two strings, a version that is not PEP 440) and the PEP
//! 345 spellings (`os.name`) are errors, never silently true or false.

use std::str::FromStr;

use dist_info::requirement::Platform;
use pep508_rs::{
    ExtraName, MarkerEnvironment, MarkerOperator, MarkerTree, MarkerValue, MarkerValueString,
    StringVersion, VersionOrUrl,
};

/// The Python versions a release serves (the `rocm` sdist requires
/// Python 3.9 or newer); markers are evaluated for each.
pub(crate) const PYTHON_VERSIONS: &[&str] = &["3.9", "3.10", "3.11", "3.12", "3.13", "3.14"];

/// One `Requires-Dist` line.
#[derive(Debug, Clone)]
pub(crate) struct Requirement {
    parsed: pep508_rs::Requirement,
    /// The PEP 503 normalised distribution name.
    pub name: String,
    /// The line as written.
    pub text: String,
}

/// Where a requirement is evaluated: one installation target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Env<'a> {
    /// A concrete wheel platform tag (`linux_x86_64`, `win_amd64`).
    pub platform_tag: &'a str,
    /// `python_version` (`3.12`).
    pub python: &'a str,
    /// The extra being installed, if any.
    pub extra: Option<&'a str>,
}

impl Env<'_> {
    /// The platform family of the tag.
    pub(crate) fn platform(&self) -> Platform {
        if Platform::is_windows_tag(self.platform_tag) {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }

    /// The marker environment of CPython `python` on `platform_tag`.
    fn markers(&self) -> Result<MarkerEnvironment, String> {
        let windows = self.platform() == Platform::Windows;
        let machine = machine_of_tag(self.platform_tag)?;
        let version =
            |v: &str| StringVersion::from_str(v).map_err(|e| format!("Python version {v:?}: {e}"));
        Ok(MarkerEnvironment {
            implementation_name: "cpython".into(),
            implementation_version: version(&format!("{}.0", self.python))?,
            os_name: if windows { "nt" } else { "posix" }.into(),
            platform_machine: machine.into(),
            platform_python_implementation: "CPython".into(),
            // Refused before evaluation (`undecidable`); never read.
            platform_release: String::new(),
            platform_system: if windows { "Windows" } else { "Linux" }.into(),
            platform_version: String::new(),
            python_full_version: version(&format!("{}.0", self.python))?,
            python_version: version(self.python)?,
            sys_platform: if windows { "win32" } else { "linux" }.into(),
        })
    }
}

/// What `pep508_rs` 0.8 would panic on or read from the environment,
/// found first (the fuzz target found the panics): a name or an extra that
/// ends in `-`, `.` or `_` (it validates them only at the end of the
/// input), a character outside ASCII (it slices strings at byte offsets
/// counted as characters), and a URL requirement (`name @ ...`: a path in
/// it is made absolute against the working directory and `$VAR`s are
/// expanded). A release's requirements are ASCII and never name a URL.
fn refused_before_parsing(text: &str) -> Option<String> {
    if let Some(c) = text.chars().find(|c| !c.is_ascii()) {
        return Some(format!(
            "it holds {c:?}; the requirements of a release are ASCII"
        ));
    }
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    let ends_badly = |name: &str| name.ends_with(['-', '.', '_']);
    let rest = text.trim_start();
    let name_end = rest.find(|c| !is_name_char(c)).unwrap_or(rest.len());
    let name = &rest[..name_end];
    if ends_badly(name) {
        return Some(format!("the name {name:?} must end with a letter or digit"));
    }
    let mut rest = rest[name_end..].trim_start();
    if let Some(extras) = rest.strip_prefix('[') {
        let (body, after) = extras.split_once(']').unwrap_or((extras, ""));
        if let Some(extra) = body
            .split(',')
            .map(str::trim)
            .find(|e| e.chars().all(is_name_char) && ends_badly(e))
        {
            return Some(format!(
                "the extra {extra:?} must end with a letter or digit"
            ));
        }
        rest = after.trim_start();
    }
    rest.starts_with('@')
        .then(|| "a URL requirement; a release depends only on versions".to_owned())
}

/// `platform_machine` on a platform tag, as CPython reports it there.
fn machine_of_tag(tag: &str) -> Result<&'static str, String> {
    let known = [
        ("win_amd64", "AMD64"),
        ("win_arm64", "ARM64"),
        ("_x86_64", "x86_64"),
        ("_aarch64", "aarch64"),
    ];
    known
        .iter()
        .find(|(suffix, _)| tag == *suffix || tag.ends_with(suffix))
        .map(|(_, machine)| *machine)
        .ok_or_else(|| format!("platform tag {tag:?} names no machine this check knows"))
}

impl Requirement {
    /// Parses one `Requires-Dist` value; the error is one line.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if let Some(problem) = refused_before_parsing(text) {
            return Err(format!("{text:?} is not a PEP 508 requirement: {problem}"));
        }
        let parsed = pep508_rs::Requirement::from_str(text)
            .map_err(|e| format!("{text:?} is not a PEP 508 requirement: {}", e.message))?;
        if let Some(marker) = &parsed.marker
            && let Some(variable) = undecidable(marker)
        {
            return Err(format!(
                "{text:?}: its marker reads {variable}, which differs between machines of one \
                 platform, so nothing can check what it requires"
            ));
        }
        Ok(Self {
            name: parsed.name.to_string(),
            parsed,
            text: text.to_owned(),
        })
    }

    /// Whether the marker holds in `env` (no marker: always); an error
    /// when the marker makes a comparison PEP 508 does not define.
    pub(crate) fn applies(&self, env: Env<'_>) -> Result<bool, String> {
        let Some(marker) = &self.parsed.marker else {
            return Ok(true);
        };
        let extra = match env.extra {
            Some(e) => Some(ExtraName::from_str(e).map_err(|e| e.to_string())?),
            None => None,
        };
        evaluate(marker, &env.markers()?, extra.as_ref())
            .map_err(|message| format!("{:?}: {message}", self.text))
    }

    /// Whether `version` satisfies the version specifiers (a URL
    /// requirement is never satisfied by a package of the set).
    pub(crate) fn admits(&self, version: &str) -> bool {
        // Parsed as every version of the workspace is; the specifiers are
        // `pep508_rs`'s, over the same `pep440_rs` version.
        let Ok(version) = pypa_formats::version::Version::parse(version) else {
            return false;
        };
        match &self.parsed.version_or_url {
            None => true,
            Some(VersionOrUrl::VersionSpecifier(specifiers)) => {
                specifiers.contains(version.as_pep440())
            }
            Some(VersionOrUrl::Url(_)) => false,
        }
    }
}

/// Evaluates `marker`; any comparison `pep508_rs` warns about is an error.
/// `extra` comparisons are evaluated here: `pep508_rs` 0.8 reads
/// `extra != "x"` (and `extra > "x"`) as `extra == "x"`.
fn evaluate(
    marker: &MarkerTree,
    env: &MarkerEnvironment,
    extra: Option<&ExtraName>,
) -> Result<bool, String> {
    match marker {
        MarkerTree::And(all) => {
            for m in all {
                if !evaluate(m, env, extra)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        MarkerTree::Or(any) => {
            for m in any {
                if evaluate(m, env, extra)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        MarkerTree::Expression(e) => {
            let undefined = |why: &str| format!("the marker `{e}` cannot be evaluated: {why}");
            let named = match (&e.l_value, &e.r_value) {
                (MarkerValue::Extra, MarkerValue::QuotedString(name))
                | (MarkerValue::QuotedString(name), MarkerValue::Extra) => Some(name),
                (MarkerValue::Extra, _) | (_, MarkerValue::Extra) => {
                    return Err(undefined("`extra` compares only with a quoted name"));
                }
                _ => None,
            };
            if let Some(name) = named {
                let name = ExtraName::from_str(name).map_err(|e| undefined(&e.to_string()))?;
                let equal = extra == Some(&name);
                return match e.operator {
                    MarkerOperator::Equal => Ok(equal),
                    MarkerOperator::NotEqual => Ok(!equal),
                    _ => Err(undefined("`extra` compares only with `==` or `!=`")),
                };
            }
            let extras: Vec<ExtraName> = extra.cloned().into_iter().collect();
            let (holds, warnings) = marker.evaluate_collect_warnings(env, &extras);
            match warnings.first() {
                None => Ok(holds),
                Some((_, message, _)) => Err(undefined(message)),
            }
        }
    }
}

/// The first marker variable whose value no platform tag decides.
fn undecidable(marker: &MarkerTree) -> Option<String> {
    match marker {
        MarkerTree::Expression(e) => [&e.l_value, &e.r_value].into_iter().find_map(|v| match v {
            MarkerValue::MarkerEnvString(
                key @ (MarkerValueString::PlatformRelease
                | MarkerValueString::PlatformVersion
                | MarkerValueString::PlatformVersionDeprecated),
            ) => Some(key.to_string()),
            _ => None,
        }),
        MarkerTree::And(all) | MarkerTree::Or(all) => all.iter().find_map(undecidable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(platform_tag: &'a str, extra: Option<&'a str>) -> Env<'a> {
        Env {
            platform_tag,
            python: "3.12",
            extra,
        }
    }

    #[test]
    fn names_and_extras_ending_in_a_separator_are_errors_not_panics() {
        for text in [
            "rocm-sdk-de-\0vice==7.1",
            "rocm_.;x",
            "a_ ==1",
            "rocm-",
            "f1[m-]sdk-",
            "f1[ok, m_ ]",
            "f1 [m.,x]",
        ] {
            let error = Requirement::parse(text).unwrap_err();
            assert!(error.contains("must end with a letter or digit"), "{error}");
        }
        assert!(Requirement::parse("f1[a-b, c]==1").is_ok());
    }

    #[test]
    fn non_ascii_is_an_error_not_a_panic() {
        let text = "foo[bar] (>=1.0, <2) ; (sys_platform == 'wi\x0032'\u{390}V";
        let error = Requirement::parse(text).unwrap_err();
        assert!(
            error.contains("the requirements of a release are ASCII"),
            "{error}"
        );
    }

    #[test]
    fn url_requirements_are_refused() {
        for text in ["x @ ./${HOME}", "x[y] @ https://example.com/x.whl", "x@/"] {
            let error = Requirement::parse(text).unwrap_err();
            assert!(error.contains("a URL requirement"), "{error}");
        }
    }

    #[test]
    fn pins_with_extra_and_platform() {
        let r = Requirement::parse(
            r#"rocm-sdk-device-gfx942==7.1.0; extra == "device-gfx942" and sys_platform == "linux""#,
        )
        .unwrap();
        assert_eq!(r.name, "rocm-sdk-device-gfx942");
        assert!(r.admits("7.1.0") && !r.admits("7.1.1"));
        assert_eq!(
            r.applies(env("linux_x86_64", Some("device_gfx942"))),
            Ok(true)
        );
        assert_eq!(
            r.applies(env("win_amd64", Some("device-gfx942"))),
            Ok(false)
        );
        assert_eq!(r.applies(env("linux_x86_64", None)), Ok(false));
    }

    #[test]
    fn extra_comparisons_follow_their_operator() {
        let r = Requirement::parse(r#"foo; extra != "device" and 'libraries' != extra"#).unwrap();
        assert_eq!(r.applies(env("linux_x86_64", Some("device"))), Ok(false));
        assert_eq!(r.applies(env("linux_x86_64", Some("libraries"))), Ok(false));
        assert_eq!(r.applies(env("linux_x86_64", Some("other"))), Ok(true));
        assert_eq!(r.applies(env("linux_x86_64", None)), Ok(true));
    }

    #[test]
    fn every_variable_takes_the_target_value() {
        let holds = |marker: &str, tag: &str, python: &str| {
            Requirement::parse(&format!("foo; {marker}"))
                .unwrap()
                .applies(Env {
                    platform_tag: tag,
                    python,
                    extra: None,
                })
                .unwrap()
        };
        assert!(holds(
            r#"platform_machine == "x86_64""#,
            "linux_x86_64",
            "3.12"
        ));
        assert!(holds(r#"platform_machine == "AMD64""#, "win_amd64", "3.12"));
        assert!(holds(
            r#"platform_machine == "aarch64""#,
            "manylinux_2_28_aarch64",
            "3.12"
        ));
        assert!(holds(
            r#"os_name == "nt" and platform_system == "Windows""#,
            "win_amd64",
            "3.9"
        ));
        assert!(holds(r#"python_version >= "3.10""#, "linux_x86_64", "3.12"));
        assert!(!holds(r#"python_version >= "3.10""#, "linux_x86_64", "3.9"));
        assert!(holds(
            r#"python_full_version < "3.13""#,
            "linux_x86_64",
            "3.12"
        ));
        assert!(holds(
            r#"implementation_name == "cpython""#,
            "win_amd64",
            "3.12"
        ));
        assert!(holds(r#""linux" in sys_platform"#, "linux_x86_64", "3.12"));
    }

    #[test]
    fn or_parentheses_and_ranges() {
        let r = Requirement::parse(
            r#"foo[bar] (>=1.0, <2) ; (sys_platform == 'win32' or os_name == "posix") and python_version >= "3.9""#,
        )
        .unwrap();
        assert!(r.admits("1.5") && !r.admits("2.0") && !r.admits("0.9"));
        assert_eq!(r.applies(env("linux_x86_64", None)), Ok(true));
        assert_eq!(r.applies(env("win_amd64", None)), Ok(true));
        assert!(Requirement::parse("; x").is_err());
        assert!(Requirement::parse("foo; sys_platform ==").is_err());
        assert!(Requirement::parse("foo; (sys_platform == 'linux'").is_err());
    }

    #[test]
    fn unknown_variables_and_undefined_comparisons_are_errors() {
        // Unknown variable: refused when parsing.
        let err = Requirement::parse(r#"foo; gpu_vendor == "amd""#).unwrap_err();
        assert!(err.contains("gpu_vendor"), "{err}");
        // No platform tag decides the kernel release.
        let err = Requirement::parse(r#"foo; platform_release >= "6""#).unwrap_err();
        assert!(err.contains("platform_release"), "{err}");
        // Ordering strings, ordering extras: undefined, so not true.
        for marker in [
            r#"sys_platform < "win32""#,
            r#"extra > "device""#,
            r#"python_version == "three""#,
            r#""a" == "a""#,
        ] {
            let r = Requirement::parse(&format!("foo; {marker}")).unwrap();
            let err = r.applies(env("linux_x86_64", Some("device"))).unwrap_err();
            assert!(err.contains("cannot be evaluated"), "{marker}: {err}");
        }
    }
}
