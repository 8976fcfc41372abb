//! Which artifacts and which relpaths a catalog takes.

use std::fmt;
use std::sync::Arc;

use crate::{ArtifactName, Glob};

/// Include / exclude / force-include globs over relpaths (directories included).
///
/// Order (docs/behaviour.md#filters): a force-include match accepts; otherwise, if includes
/// exist one must match; any exclude rejects; else accept.
///
/// ```
/// use artifacts::PathFilter;
/// let f = PathFilter::new().exclude("**/cmake/**").force_include("lib/cmake/keep/**");
/// assert!(f.matches("lib/libx.so"));
/// assert!(!f.matches("lib/cmake/hip/hip-config.cmake"));
/// assert!(f.matches("lib/cmake/keep/a.cmake"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathFilter {
    includes: Vec<Glob>,
    excludes: Vec<Glob>,
    force_includes: Vec<Glob>,
}

impl PathFilter {
    /// A filter that accepts every relpath.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an include pattern (once any exists, a relpath must match one).
    #[must_use]
    pub fn include(mut self, pattern: &str) -> Self {
        self.includes.push(Glob::new(pattern));
        self
    }

    /// Adds an exclude pattern.
    #[must_use]
    pub fn exclude(mut self, pattern: &str) -> Self {
        self.excludes.push(Glob::new(pattern));
        self
    }

    /// Adds a force-include pattern (accepts before includes and excludes).
    #[must_use]
    pub fn force_include(mut self, pattern: &str) -> Self {
        self.force_includes.push(Glob::new(pattern));
        self
    }

    /// Adds several include patterns.
    #[must_use]
    pub fn includes<'a>(self, patterns: impl IntoIterator<Item = &'a str>) -> Self {
        patterns.into_iter().fold(self, Self::include)
    }

    /// Adds several exclude patterns.
    #[must_use]
    pub fn excludes<'a>(self, patterns: impl IntoIterator<Item = &'a str>) -> Self {
        patterns.into_iter().fold(self, Self::exclude)
    }

    /// Whether the relpath is taken.
    pub fn matches(&self, relpath: &str) -> bool {
        if self.force_includes.iter().any(|g| g.matches(relpath)) {
            return true;
        }
        if !self.includes.is_empty() && !self.includes.iter().any(|g| g.matches(relpath)) {
            return false;
        }
        !self.excludes.iter().any(|g| g.matches(relpath))
    }

    /// Whether this filter accepts everything (no patterns at all).
    pub fn is_empty(&self) -> bool {
        self.includes.is_empty() && self.excludes.is_empty() && self.force_includes.is_empty()
    }
}

type Predicate = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// One alternative: all three field predicates must hold.
#[derive(Clone, Default)]
struct Clause {
    name: Option<Predicate>,
    component: Option<Predicate>,
    target: Option<Predicate>,
}

impl Clause {
    fn matches(&self, a: &ArtifactName) -> bool {
        let ok = |p: &Option<Predicate>, v: &str| p.as_ref().is_none_or(|p| p(v));
        ok(&self.name, a.name())
            && ok(&self.component, a.component())
            && ok(&self.target, a.target())
    }
}

/// Which artifacts a catalog takes: predicates on name, component and
/// target, and unions of such selections.
///
/// ```
/// use artifacts::{ArtifactFilter, ArtifactName};
/// // core: these names with lib/run, plus core-hip dev.
/// let core = ArtifactFilter::new()
///     .names(["base", "core-hip"])
///     .components(["lib", "run"])
///     .or(ArtifactFilter::new().names(["core-hip"]).components(["dev"]));
/// let n = |s| ArtifactName::parse(s).unwrap();
/// assert!(core.matches(&n("base_lib_generic")));
/// assert!(core.matches(&n("core-hip_dev_generic")));
/// assert!(!core.matches(&n("base_dev_generic")));
/// ```
#[derive(Clone)]
pub struct ArtifactFilter {
    clauses: Vec<Clause>,
}

impl Default for ArtifactFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl ArtifactFilter {
    /// A filter that takes every artifact.
    pub fn new() -> Self {
        Self {
            clauses: vec![Clause::default()],
        }
    }

    fn last(&mut self) -> &mut Clause {
        self.clauses
            .last_mut()
            .expect("a filter has at least one clause")
    }

    /// Restricts the name with a predicate.
    #[must_use]
    pub fn name_where(mut self, p: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.last().name = Some(Arc::new(p));
        self
    }

    /// Restricts the component with a predicate.
    #[must_use]
    pub fn component_where(mut self, p: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.last().component = Some(Arc::new(p));
        self
    }

    /// Restricts the target with a predicate.
    #[must_use]
    pub fn target_where(mut self, p: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.last().target = Some(Arc::new(p));
        self
    }

    /// Restricts the name to one of a list.
    #[must_use]
    pub fn names<S: Into<String>>(self, names: impl IntoIterator<Item = S>) -> Self {
        let set = into_set(names);
        self.name_where(move |v| set.iter().any(|s| s == v))
    }

    /// Restricts the component to one of a list.
    #[must_use]
    pub fn components<S: Into<String>>(self, components: impl IntoIterator<Item = S>) -> Self {
        let set = into_set(components);
        self.component_where(move |v| set.iter().any(|s| s == v))
    }

    /// Restricts the target to one of a list.
    #[must_use]
    pub fn targets<S: Into<String>>(self, targets: impl IntoIterator<Item = S>) -> Self {
        let set = into_set(targets);
        self.target_where(move |v| set.iter().any(|s| s == v))
    }

    /// Takes what either filter takes.
    #[must_use]
    pub fn or(mut self, other: Self) -> Self {
        self.clauses.extend(other.clauses);
        self
    }

    /// Whether the artifact is taken.
    pub fn matches(&self, artifact: &ArtifactName) -> bool {
        self.clauses.iter().any(|c| c.matches(artifact))
    }
}

fn into_set<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

impl fmt::Debug for ArtifactFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArtifactFilter")
            .field("clauses", &self.clauses.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_include_wins_then_includes_then_excludes() {
        let f = PathFilter::new()
            .include("lib/**")
            .exclude("lib/cmake/**")
            .force_include("bin/tool");
        assert!(f.matches("bin/tool"));
        assert!(!f.matches("bin/other"));
        assert!(f.matches("lib/x.so"));
        assert!(!f.matches("lib/cmake/a"));
        let forced = PathFilter::new()
            .exclude("lib/**")
            .force_include("lib/keep");
        assert!(forced.matches("lib/keep"));
        assert!(!forced.matches("lib/drop"));
    }

    #[test]
    fn empty_filter_accepts_everything() {
        assert!(PathFilter::new().is_empty());
        assert!(PathFilter::new().matches("anything/at/all"));
    }

    #[test]
    fn artifact_filter_predicates_and_union() {
        let n = |s| ArtifactName::parse(s).unwrap();
        let device = ArtifactFilter::new()
            .components(["lib"])
            .target_where(|t| t.split(':').next() == Some("gfx942"));
        assert!(device.matches(&n("blas_lib_gfx942:xnack+")));
        assert!(device.matches(&n("blas_lib_gfx942")));
        assert!(!device.matches(&n("blas_lib_generic")));
        assert!(!device.matches(&n("blas_dev_gfx942")));
        let both = device.or(ArtifactFilter::new().targets(["generic"]));
        assert!(both.matches(&n("blas_dev_generic")));
        assert!(ArtifactFilter::new().matches(&n("x_y_z")));
    }
}
