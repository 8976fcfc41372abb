//! `RPATH`/`RUNPATH` entries as the loader reads them, expanded for a file
//! at a known place in the tree.

/// One search-path entry, expanded for a file in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "kind", content = "dir", rename_all = "snake_case")
)]
pub enum SearchDir {
    /// A directory inside the tree (relative, `/`-separated; `""` is the root).
    Tree(String),
    /// An `$ORIGIN` entry that climbs above the root of the tree, or an
    /// absolute directory: outside what the packages control, never counted.
    Outside(String),
    /// An entry the loader expands from the running system (`$LIB`,
    /// `$PLATFORM`, empty or relative to the working directory): never counted.
    Unsupported(String),
}

/// Expands every entry of a `:`-separated search path for a file whose
/// directory in the tree is `file_dir` (relative, `/`-separated).
///
/// ```
/// use link_check::{SearchDir, expand_search_path};
/// assert_eq!(
///     expand_search_path("$ORIGIN/../../_rocm_sdk_core/lib:/opt/rocm/lib", "_rocm_sdk_libraries/lib"),
///     [SearchDir::Tree("_rocm_sdk_core/lib".into()), SearchDir::Outside("/opt/rocm/lib".into())]
/// );
/// ```
pub fn expand_search_path(search_path: &str, file_dir: &str) -> Vec<SearchDir> {
    search_path
        .split(':')
        .map(|entry| expand_entry(entry, file_dir))
        .collect()
}

fn expand_entry(entry: &str, file_dir: &str) -> SearchDir {
    let rest = if let Some(rest) = entry.strip_prefix("$ORIGIN") {
        rest
    } else if let Some(rest) = entry.strip_prefix("${ORIGIN}") {
        rest
    } else if entry.starts_with('/') {
        return SearchDir::Outside(entry.to_owned());
    } else {
        return SearchDir::Unsupported(entry.to_owned());
    };
    // `$ORIGINAL/x` is not `$ORIGIN` followed by `AL/x`.
    if !(rest.is_empty() || rest.starts_with('/')) || rest.contains('$') {
        return SearchDir::Unsupported(entry.to_owned());
    }
    match normalize(&format!("{file_dir}/{rest}")) {
        Some(dir) => SearchDir::Tree(dir),
        None => SearchDir::Outside(entry.to_owned()),
    }
}

/// Normalises a relative `/`-separated path lexically (drops `.` and empty
/// segments, applies `..`); `None` when it climbs above the root.
///
/// ```
/// assert_eq!(link_check::normalize("a/b/../c/./d/"), Some("a/c/d".into()));
/// assert_eq!(link_check::normalize("a/../.."), None);
/// ```
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The directory part of a relative path (`""` for a file at the root).
pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `dir/name`, or `name` at the root.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_forms() {
        let d = "_rocm_sdk_core/lib/llvm/bin";
        assert_eq!(
            expand_search_path(
                "$ORIGIN:${ORIGIN}/../lib:$ORIGIN/../../../../_rocm_sdk_core/lib",
                d
            ),
            [
                SearchDir::Tree(d.into()),
                SearchDir::Tree("_rocm_sdk_core/lib/llvm/lib".into()),
                SearchDir::Tree("_rocm_sdk_core/lib".into()),
            ]
        );
    }

    #[test]
    fn escapes_and_unsupported() {
        assert_eq!(
            expand_search_path("$ORIGIN/../../..:$LIB:lib:$ORIGINAL/x:", "a/b"),
            [
                SearchDir::Outside("$ORIGIN/../../..".into()),
                SearchDir::Unsupported("$LIB".into()),
                SearchDir::Unsupported("lib".into()),
                SearchDir::Unsupported("$ORIGINAL/x".into()),
                SearchDir::Unsupported(String::new()),
            ]
        );
    }

    #[test]
    fn origin_at_root() {
        assert_eq!(
            expand_search_path("$ORIGIN/_rocm_sdk_core/lib", ""),
            [SearchDir::Tree("_rocm_sdk_core/lib".into())]
        );
        assert_eq!(parent("x.so"), "");
        assert_eq!(join("", "x.so"), "x.so");
        assert_eq!(join("a", "x.so"), "a/x.so");
    }
}
