//! All `rocm*` distributions of a release carry one version; a `rocm`
//! selector sdist may also be a post-release (`V.postN`) of it, published
//! over the packages at `V` (docs/releasing.md, "Post-releases of the
//! selector"). A patch release (`V.1`) or another `.dev` is another
//! release, and refused.

use std::collections::BTreeMap;

use pypa_formats::version::is_release_or_post_release;

use super::Release;

/// The `rocm` selector's distribution name.
const SELECTOR: &str = "rocm";

/// One problem when two or more versions appear.
pub(crate) fn check(release: &Release) -> Vec<String> {
    let mut packages: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut selectors: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in &release.files {
        if f.name() == SELECTOR {
            selectors.entry(f.version()).or_default().push(&f.display);
        } else if f.name().starts_with("rocm") {
            packages.entry(f.version()).or_default().push(&f.display);
        }
    }
    let listed = |by_version: &BTreeMap<&str, Vec<&str>>| {
        by_version
            .iter()
            .map(|(v, files)| format!("{v} ({})", files.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut problems = Vec::new();
    if packages.len() > 1 {
        problems.push(format!(
            "the rocm* packages carry {} different versions: {}; rebuild every package with one --version",
            packages.len(),
            listed(&packages)
        ));
        return problems;
    }
    // The release the selectors must belong to: the packages' version, or
    // without packages the first selector's.
    let Some(release_version) = packages.keys().chain(selectors.keys()).next().copied() else {
        return problems;
    };
    let strays: BTreeMap<&str, Vec<&str>> = selectors
        .iter()
        .filter(|(v, _)| !is_release_or_post_release(v, release_version))
        .map(|(v, files)| (*v, files.clone()))
        .collect();
    if !strays.is_empty() {
        problems.push(format!(
            "the rocm selector is {} but the rocm* packages are {release_version}: a selector \
             must carry the packages' version or a post-release of it ({release_version}.postN); \
             rebuild it with `therock-package post-release` or with the packages' --version",
            listed(&strays)
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_releases_of_the_release_count_as_it() {
        assert!(is_release_or_post_release("7.14.0", "7.14.0"));
        assert!(is_release_or_post_release("7.14.0.post1", "7.14.0"));
        assert!(is_release_or_post_release("7.14.0.post2", "7.14.0.post1"));
        assert!(is_release_or_post_release("7.14.0rc1.post1", "7.14.0rc1"));
        assert!(!is_release_or_post_release("7.14.1", "7.14.0"));
        assert!(!is_release_or_post_release("7.14.0.1", "7.14.0"));
        assert!(!is_release_or_post_release("7.14.0.dev1", "7.14.0.dev0"));
        assert!(!is_release_or_post_release("7.14.0.post1", "7.14.0.post2"));
        assert!(!is_release_or_post_release("7.14.0", "7.14.0.post1"));
    }
}
