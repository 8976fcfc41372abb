//! All `rocm*` distributions of a release carry one version; a `rocm`
//! selector sdist may also be a post-release (`V.postN`) of it, published
//! over the packages at `V` (docs/releasing.md, "Post-releases of the
//! selector"). A patch release (`V.1`) or another `.dev` is another
//! release, and refused. Versions are listed as PEP 440 orders them.

use std::collections::BTreeMap;

use pypa_formats::version::{Version, is_release_or_post_release};

use super::Release;

/// The `rocm` selector's distribution name.
const SELECTOR: &str = "rocm";

/// Files grouped by version, in PEP 440 order (`7.9.0` before `7.10.0`;
/// a version that is not PEP 440, which the well-formed check refuses,
/// first).
type ByVersion<'a> = Vec<(&'a str, Vec<&'a str>)>;

fn by_version<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> ByVersion<'a> {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (version, display) in files {
        groups.entry(version).or_default().push(display);
    }
    let mut groups: ByVersion<'a> = groups.into_iter().collect();
    groups.sort_by_cached_key(|(version, _)| (Version::parse(version).ok(), *version));
    groups
}

/// One problem when two or more versions appear.
pub(crate) fn check(release: &Release) -> Vec<String> {
    let packages = by_version(
        release
            .files
            .iter()
            .filter(|f| f.name() != SELECTOR && f.name().starts_with("rocm"))
            .map(|f| (f.version(), f.display.as_str())),
    );
    let selectors = by_version(
        release
            .files
            .iter()
            .filter(|f| f.name() == SELECTOR)
            .map(|f| (f.version(), f.display.as_str())),
    );
    let listed = |by_version: &ByVersion<'_>| {
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
    // without packages the oldest selector's.
    let Some(release_version) = packages.iter().chain(&selectors).map(|(v, _)| *v).next() else {
        return problems;
    };
    let strays: ByVersion<'_> = selectors
        .into_iter()
        .filter(|(v, _)| !is_release_or_post_release(v, release_version))
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

    /// Versions are listed as PEP 440 orders them, not as their text sorts.
    #[test]
    fn versions_are_listed_in_pep_440_order() {
        let grouped = by_version(
            [
                ("7.10.0", "b.whl"),
                ("7.9.0", "a.whl"),
                ("7.10.0rc1", "c.whl"),
                ("7.10.0", "d.whl"),
            ]
            .into_iter(),
        );
        assert_eq!(
            grouped,
            [
                ("7.9.0", vec!["a.whl"]),
                ("7.10.0rc1", vec!["c.whl"]),
                ("7.10.0", vec!["b.whl", "d.whl"]),
            ]
        );
    }
}
