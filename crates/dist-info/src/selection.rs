//! Target selection at install time (docs/behaviour.md#target-choice): the caller's override
//! value (`ROCM_SDK_TARGET_FAMILY`, read by the caller), else detection from
//! `offload-arch` output, else the default.

use serde::{Deserialize, Serialize};

use crate::target::base_target;

/// The name of the environment override, for messages and callers.
pub const TARGET_ENV: &str = "ROCM_SDK_TARGET_FAMILY";

/// Family suffixes tried, in order, after `arch[:-1] + "X"`.
const FAMILY_SUFFIXES: [&str; 4] = ["-all", "-dgpu", "-igpu", "-dcgpu"];

/// Where a selected target came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetSource {
    /// The caller's override value (`ROCM_SDK_TARGET_FAMILY`).
    Environment,
    /// A GPU reported by `offload-arch`.
    Detected,
    /// Nothing requested or detected: the release default.
    Default,
}

/// A chosen target (base target in kpack mode, family in legacy mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The chosen unit, one of the available targets.
    pub target: String,
    /// How it was chosen.
    pub source: TargetSource,
}

/// A requested target the release does not offer. The message starts with
/// the reference's words, which callers match (docs/drop-in.md).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Requested {TARGET_ENV}={requested} is not available in the distribution (available: {}); \
     set {TARGET_ENV} to one of them or unset it",
    .available.join(", ")
)]
pub struct SelectionError {
    /// The value asked for.
    pub requested: String,
    /// What the release offers.
    pub available: Vec<String>,
}

/// The first available unit matching `offload-arch` output (one arch per
/// line, features like `:xnack-` allowed). For each line in order, tries
/// `arch[:-1] + "X"` with `-all`, `-dgpu`, `-igpu`, `-dcgpu`, then the arch
/// itself. Ours reads lines in output order (the reference used a set, so
/// a machine with two GPUs chose at random) and drops feature suffixes first.
///
/// ```
/// use dist_info::selection::detect_target;
/// let legacy = ["gfx110X-all".to_owned(), "gfx94X-dcgpu".to_owned()];
/// assert_eq!(detect_target("gfx942:sramecc+:xnack-\n", &legacy).as_deref(), Some("gfx94X-dcgpu"));
/// let kpack = ["gfx1100".to_owned(), "gfx942".to_owned()];
/// assert_eq!(detect_target("gfx1100\n", &kpack).as_deref(), Some("gfx1100"));
/// ```
pub fn detect_target(offload_arch_output: &str, available: &[String]) -> Option<String> {
    let has = |name: &str| available.iter().any(|a| a == name);
    for line in offload_arch_output.lines() {
        let arch = base_target(line.trim());
        let Some(last) = arch.chars().last() else {
            continue;
        };
        let stem = &arch[..arch.len() - last.len_utf8()];
        for suffix in FAMILY_SUFFIXES {
            let family = format!("{stem}X{suffix}");
            if has(&family) {
                return Some(family);
            }
        }
        if has(arch) {
            return Some(arch.to_owned());
        }
    }
    None
}

/// Chooses a target among `available`: `requested` (the override value;
/// blank counts as unset; in kpack mode a `:xnack±` suffix is dropped), else
/// the first match in `offload_arch_output`, else `default`. `Ok(None)` only
/// when nothing is available and nothing was requested.
pub fn select_target(
    available: &[String],
    default: Option<&str>,
    requested: Option<&str>,
    offload_arch_output: Option<&str>,
) -> Result<Option<Selection>, SelectionError> {
    if let Some(raw) = requested.map(str::trim).filter(|r| !r.is_empty()) {
        let found = [raw, base_target(raw)]
            .into_iter()
            .find(|c| available.iter().any(|a| a == c));
        return match found {
            Some(target) => Ok(Some(Selection {
                target: target.to_owned(),
                source: TargetSource::Environment,
            })),
            None => Err(SelectionError {
                requested: raw.to_owned(),
                available: available.to_vec(),
            }),
        };
    }
    if let Some(target) = offload_arch_output.and_then(|out| detect_target(out, available)) {
        return Ok(Some(Selection {
            target,
            source: TargetSource::Detected,
        }));
    }
    Ok(default.map(|d| Selection {
        target: d.to_owned(),
        source: TargetSource::Default,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn detection_order_and_suffixes() {
        let avail = v(&["gfx103X-dgpu", "gfx110X-all", "gfx1151"]);
        assert_eq!(
            detect_target("gfx1031", &avail).as_deref(),
            Some("gfx103X-dgpu")
        );
        // `-all` wins over `-dgpu` when both are offered.
        let both = v(&["gfx110X-dgpu", "gfx110X-all"]);
        assert_eq!(
            detect_target("gfx1100", &both).as_deref(),
            Some("gfx110X-all")
        );
        // The arch itself after the family forms.
        assert_eq!(
            detect_target("gfx1151\n", &avail).as_deref(),
            Some("gfx1151")
        );
        // Lines in order; unknown and blank lines skipped.
        assert_eq!(
            detect_target("\n  \ngfx9999\ngfx1151\ngfx1100\n", &avail).as_deref(),
            Some("gfx1151")
        );
        assert_eq!(detect_target("", &avail), None);
        assert_eq!(detect_target("gfx942\n", &avail), None);
    }

    #[test]
    fn selection_precedence() {
        let avail = v(&["gfx1100", "gfx942"]);
        let sel = select_target(
            &avail,
            Some("gfx1100"),
            Some("gfx942:xnack+"),
            Some("gfx1100"),
        )
        .unwrap();
        assert_eq!(
            sel,
            Some(Selection {
                target: "gfx942".into(),
                source: TargetSource::Environment
            })
        );
        let sel = select_target(&avail, Some("gfx1100"), Some("  "), Some("gfx942")).unwrap();
        assert_eq!(sel.unwrap().source, TargetSource::Detected);
        let sel = select_target(&avail, Some("gfx1100"), None, Some("gfx90a")).unwrap();
        assert_eq!(
            sel,
            Some(Selection {
                target: "gfx1100".into(),
                source: TargetSource::Default
            })
        );
        assert_eq!(
            select_target(&[], None, None, Some("gfx942")).unwrap(),
            None
        );
        let err = select_target(&avail, None, Some("gfx950"), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Requested ROCM_SDK_TARGET_FAMILY=gfx950 is not available in the distribution \
             (available: gfx1100, gfx942); set ROCM_SDK_TARGET_FAMILY to one of them or unset it"
        );
    }
}
