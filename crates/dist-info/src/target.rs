//! GPU targets and their base form (docs/behaviour.md#families, docs/behaviour.md#device-contents).
//!
//! A target may carry feature suffixes (`gfx942:xnack+`); its *base* is the
//! part before the first `:`. Device packages and selector extras are keyed
//! by base target, so xnack variants merge into one package.

use std::collections::BTreeSet;

/// The base of a target: everything before the first `:`.
///
/// ```
/// assert_eq!(dist_info::target::base_target("gfx942:xnack+"), "gfx942");
/// assert_eq!(dist_info::target::base_target("gfx1100"), "gfx1100");
/// ```
pub fn base_target(target: &str) -> &str {
    target.split_once(':').map_or(target, |(base, _)| base)
}

/// Whether `target` is a GPU target ID as TheRock names device artifacts:
/// a base target (`gfx` and lower-case letters or digits) followed by any
/// of the features `:xnack±` and `:sramecc±`.
///
/// ```
/// use dist_info::target::is_target_id;
/// assert!(is_target_id("gfx942:xnack+"));
/// assert!(is_target_id("gfx90a:sramecc-:xnack+"));
/// assert!(!is_target_id("gfx942:evil"));
/// assert!(!is_target_id("gfx94X-dcgpu"));
/// ```
pub fn is_target_id(target: &str) -> bool {
    let mut parts = target.split(':');
    let base = parts.next().unwrap_or_default();
    let stem = base.strip_prefix("gfx").unwrap_or_default();
    let base_ok = !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    base_ok
        && parts.all(|feature| {
            let name = feature.strip_suffix(['+', '-']).unwrap_or_default();
            matches!(name, "xnack" | "sramecc")
        })
}

/// The distinct base targets of `targets`, sorted (input order never matters).
///
/// ```
/// let t = dist_info::target::base_targets(["gfx942:xnack-", "gfx1100", "gfx942:xnack+"]);
/// assert_eq!(t, ["gfx1100", "gfx942"]);
/// ```
pub fn base_targets<I, S>(targets: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    targets
        .into_iter()
        .map(|t| base_target(t.as_ref().trim()).to_owned())
        .filter(|t| !t.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}
