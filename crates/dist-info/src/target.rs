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
