//! TheRock's `share/therock/dist_info.json`: the GPU targets a build was
//! configured for (`{"dist_amdgpu_targets": "gfx942;gfx1100"}`). It ships
//! in core's platform package; `rocm-sdk targets` prints it.
//!
//! The one reader of that document: the build parses the file it is about
//! to ship with it (and refuses one it cannot read), `verify` parses the
//! shipped one, and the install side reads the installed one, so the three
//! can never disagree about the same bytes (docs/behaviour.md#build-flags).
//!
//! ```
//! use dist_info::dist_targets::DistTargets;
//! let t = DistTargets::parse(br#"{"dist_amdgpu_targets": "gfx942; gfx942:xnack+,gfx1100"}"#)?;
//! assert_eq!(t.targets, ["gfx942", "gfx942:xnack+", "gfx1100"]);
//! assert!(DistTargets::parse(br#"{"dist_amdgpu_targets": ["gfx942"]}"#).is_err());
//! # Ok::<(), dist_info::dist_targets::DistTargetsError>(())
//! ```

use serde_json::Value;

use crate::families::split_list;

/// Where the document lives in the merged artifact tree, and so inside
/// core's platform package.
pub const RELPATH: &str = "share/therock/dist_info.json";

/// The key that holds the targets.
pub const TARGETS_KEY: &str = "dist_amdgpu_targets";

/// Why a `dist_info.json` cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DistTargetsError {
    /// The bytes are not JSON.
    #[error("it is not valid JSON")]
    NotJson(#[source] serde_json::Error),
    /// The document is JSON but not an object.
    #[error("it is {found}, not a JSON object")]
    NotAnObject {
        /// What it is instead (`an array`, `a string`, ...).
        found: &'static str,
    },
    /// The object has no targets.
    #[error("it has no \"{TARGETS_KEY}\"")]
    MissingTargets,
    /// The targets are not one string.
    #[error(
        "\"{TARGETS_KEY}\" is {found}, not a string of targets separated by `;` \
         (\"gfx942;gfx1100\")"
    )]
    TargetsNotAString {
        /// What it is instead.
        found: &'static str,
    },
    /// An item of the list is not a target name.
    #[error(
        "\"{TARGETS_KEY}\" holds {target:?}, which is not a GPU target name \
         (ASCII letters, digits and `:+-_`)"
    )]
    InvalidTarget {
        /// The item as written.
        target: String,
    },
}

/// The targets of a build, as the document records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistTargets {
    /// The value as written (`gfx942;gfx1100`).
    pub raw: String,
    /// The targets in file order, split on `;` or `,` (the rule of every
    /// target list of this project, [`split_list`]), trimmed, empty items
    /// dropped.
    pub targets: Vec<String>,
}

impl DistTargets {
    /// Parses the document: a JSON object whose `dist_amdgpu_targets` is a
    /// string of target names; other keys are ignored.
    pub fn parse(bytes: &[u8]) -> Result<Self, DistTargetsError> {
        let doc: Value = serde_json::from_slice(bytes).map_err(DistTargetsError::NotJson)?;
        let Value::Object(top) = &doc else {
            return Err(DistTargetsError::NotAnObject {
                found: kind_of(&doc),
            });
        };
        let raw = match top.get(TARGETS_KEY) {
            None => return Err(DistTargetsError::MissingTargets),
            Some(Value::String(raw)) => raw.clone(),
            Some(other) => {
                return Err(DistTargetsError::TargetsNotAString {
                    found: kind_of(other),
                });
            }
        };
        let targets = split_list(&raw)
            .map(|target| {
                if is_target_name(target) {
                    Ok(target.to_owned())
                } else {
                    Err(DistTargetsError::InvalidTarget {
                        target: target.to_owned(),
                    })
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { raw, targets })
    }
}

/// `gfx942`, `gfx942:xnack+`, `gfx94X-dcgpu`: what a target (or family) name
/// is made of.
fn is_target_name(item: &str) -> bool {
    item.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b":+-_".contains(&b))
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_helpers::error_chain::Chain;

    fn error(json: &str) -> String {
        Chain(&DistTargets::parse(json.as_bytes()).unwrap_err()).to_string()
    }

    #[test]
    fn targets_split_on_semicolons_and_commas_keeping_the_raw_value() {
        let t = DistTargets::parse(
            br#"{"dist_amdgpu_targets": "gfx942; gfx942:xnack+;;gfx1100,gfx1101 ", "x": 1}"#,
        )
        .unwrap();
        assert_eq!(t.raw, "gfx942; gfx942:xnack+;;gfx1100,gfx1101 ");
        assert_eq!(t.targets, ["gfx942", "gfx942:xnack+", "gfx1100", "gfx1101"]);
        let none = DistTargets::parse(br#"{"dist_amdgpu_targets": ""}"#).unwrap();
        assert!(none.targets.is_empty());
    }

    #[test]
    fn documents_rocm_sdk_could_not_read_are_refused_saying_why() {
        insta::assert_snapshot!(error("{"), @r#"it is not valid JSON: EOF while parsing an object at line 1 column 1"#);
        insta::assert_snapshot!(error(r#"["gfx942"]"#), @"it is an array, not a JSON object");
        insta::assert_snapshot!(error("{}"), @r#"it has no "dist_amdgpu_targets""#);
        insta::assert_snapshot!(error(r#"{"dist_amdgpu_targets": ["gfx942", "gfx1100"]}"#), @r#""dist_amdgpu_targets" is an array, not a string of targets separated by `;` ("gfx942;gfx1100")"#);
        insta::assert_snapshot!(error(r#"{"dist_amdgpu_targets": null}"#), @r#""dist_amdgpu_targets" is null, not a string of targets separated by `;` ("gfx942;gfx1100")"#);
        insta::assert_snapshot!(error(r#"{"dist_amdgpu_targets": "gfx942 gfx1100"}"#), @r#""dist_amdgpu_targets" holds "gfx942 gfx1100", which is not a GPU target name (ASCII letters, digits and `:+-_`)"#);
    }
}
