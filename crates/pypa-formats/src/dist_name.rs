//! Distribution names (PEP 508), parsed once: the spelling a package was
//! given, its PEP 503 normalised form (index pages, comparisons, extras) and
//! its escaped form (wheel and sdist file names, `.dist-info` and `.data`
//! directories) (docs/dist-info.md, "Names, versions and wheel file names").
//!
//! ```
//! use pypa_formats::dist_name::DistName;
//!
//! let name: DistName = "rocm-sdk-libraries-gfx94X-dcgpu".parse()?;
//! assert_eq!(name.to_string(), "rocm-sdk-libraries-gfx94X-dcgpu");
//! assert_eq!(name.normalized(), "rocm-sdk-libraries-gfx94x-dcgpu");
//! assert_eq!(name.escaped(), "rocm_sdk_libraries_gfx94x_dcgpu");
//! # Ok::<(), pypa_formats::dist_name::DistNameError>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// A string that is not a valid PEP 508 distribution name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("distribution name {name:?} is not valid: {reason}")]
pub struct DistNameError {
    /// The name as given.
    pub name: String,
    /// The rule it breaks.
    pub reason: &'static str,
}

/// A valid PEP 508 distribution name (`rocm-sdk-core`, `rocm_sdk`): ASCII
/// letters, digits, `-`, `_` and `.`, starting and ending with a letter or
/// digit. `Display` writes the spelling it was given; equality is on that
/// spelling too (compare [`DistName::normalized`] for PEP 503 equality).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DistName(String);

impl DistName {
    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The PEP 503 normalised form: lower case, each run of `-_.` one `-`
    /// (`Foo.Bar_baz` → `foo-bar-baz`).
    pub fn normalized(&self) -> String {
        normalize(&self.0)
    }

    /// The escaped form of wheel and sdist file names and of the
    /// `.dist-info`/`.data` directories: lower case, each run of `-_.` one
    /// `_` (`rocm-sdk-libraries-gfx94X-dcgpu` → `rocm_sdk_libraries_gfx94x_dcgpu`).
    pub fn escaped(&self) -> String {
        fold_separators(&self.0, '_')
    }

    /// True when the name is already in its escaped form (as a wheel file
    /// name must spell it).
    pub fn is_escaped(&self) -> bool {
        self.escaped() == self.0
    }
}

impl FromStr for DistName {
    type Err = DistNameError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let invalid = |reason| DistNameError {
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
        Ok(Self(name.to_owned()))
    }
}

impl fmt::Display for DistName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The PEP 503 (and PEP 685, for extras) normalised form of any text, valid
/// name or not: lower case, each run of `-_.` one `-`. For names read from
/// documents that must be compared before (or without) being validated.
///
/// ```
/// assert_eq!(pypa_formats::dist_name::normalize("Device__GFX942"), "device-gfx942");
/// ```
pub fn normalize(name: &str) -> String {
    fold_separators(name, '-')
}

fn fold_separators(name: &str, separator: char) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_refused;

    fn name(s: &str) -> DistName {
        s.parse().unwrap()
    }

    #[test]
    fn forms_of_a_name() {
        let n = name("rocm-sdk-libraries-gfx94X-dcgpu");
        assert_eq!(n.to_string(), "rocm-sdk-libraries-gfx94X-dcgpu");
        assert_eq!(n.escaped(), "rocm_sdk_libraries_gfx94x_dcgpu");
        assert_eq!(n.normalized(), "rocm-sdk-libraries-gfx94x-dcgpu");
        assert!(!n.is_escaped());
        assert_eq!(name("A.-_b").escaped(), "a_b");
        assert_eq!(name("Foo.Bar__baz").normalized(), "foo-bar-baz");
        assert!(name("rocm_sdk_core").is_escaped());
    }

    #[test]
    fn invalid_names_say_which_rule_they_break() {
        for (input, rule) in [
            ("", "it is empty"),
            ("-rocm", "start and end"),
            ("rocm.", "start and end"),
            ("rocm sdk", "only ASCII letters"),
            ("röcm", "only ASCII letters"),
        ] {
            let err = assert_refused::<DistName>(input, rule);
            assert_eq!(err.name, input);
        }
    }

    /// Every escaped or normalised form is itself a valid name, a fixed
    /// point of both foldings, and the two differ only in the separator.
    #[test]
    fn forms_are_stable() {
        let alphabet = ['a', 'Z', '0', '-', '_', '.'];
        let mut checked = 0;
        for len in 1..=4 {
            for mut i in 0..alphabet.len().pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push(alphabet[i % alphabet.len()]);
                    i /= alphabet.len();
                }
                let Ok(n) = s.parse::<DistName>() else {
                    continue;
                };
                let escaped = name(&n.escaped());
                let normalized = name(&n.normalized());
                assert!(escaped.is_escaped(), "{s}");
                assert_eq!(normalized.normalized(), normalized.as_str(), "{s}");
                assert_eq!(escaped.normalized(), n.normalized(), "{s}");
                assert_eq!(n.normalized().replace('-', "_"), n.escaped(), "{s}");
                checked += 1;
            }
        }
        assert!(checked > 100);
    }
}
