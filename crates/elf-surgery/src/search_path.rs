//! [`SearchPathEdit`]: the policy of a search-path edit — which entries,
//! in which order, under which tag — apart from how bytes change.

use object::elf;

use crate::error::{Error, ErrorKind, Result};
use crate::file::RawFacts;

/// What to do to a file's library search path; all of it happens in one
/// rewrite.
///
/// ```
/// let edit = elf_surgery::SearchPathEdit::append(["$ORIGIN/../../_rocm_sdk_core/lib"])
///     .force_rpath();
/// assert!(edit.force_rpath);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchPathEdit {
    /// Replace the existing search path with these entries (before appending).
    pub set: Option<Vec<String>>,
    /// Entries to add after the existing ones; entries already present are
    /// not added twice.
    pub append: Vec<String>,
    /// Entries taken out of the existing search path (every occurrence,
    /// compared byte for byte) before appending.
    pub remove: Vec<String>,
    /// Store the result as `DT_RPATH` (searched before `LD_LIBRARY_PATH`),
    /// turning a `DT_RUNPATH` into one and dropping any other `DT_RUNPATH`.
    pub force_rpath: bool,
}

impl SearchPathEdit {
    /// Appends `entries` after the existing search path.
    pub fn append<I, S>(entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            append: entries.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Replaces the search path with `entries`.
    pub fn set<I, S>(entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            set: Some(entries.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    /// Also stores the result as `DT_RPATH`.
    #[must_use]
    pub fn force_rpath(mut self) -> Self {
        self.force_rpath = true;
        self
    }

    /// Also takes `entries` out of the existing search path.
    ///
    /// ```
    /// let edit = elf_surgery::SearchPathEdit::append(["$ORIGIN"]).remove(["/home/builder/lib"]);
    /// assert_eq!(edit.remove, ["/home/builder/lib"]);
    /// ```
    #[must_use]
    pub fn remove<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.remove.extend(entries.into_iter().map(Into::into));
        self
    }

    fn validate(&self) -> Result<()> {
        let all = self.set.iter().flatten().chain(&self.append);
        for entry in all {
            if entry.is_empty() || entry.contains([':', '\0']) {
                return Err(Error::new(ErrorKind::InvalidSearchPath(entry.clone())));
            }
        }
        Ok(())
    }

    /// The search path and tag the file must end up with; `None` means no
    /// search-path entry at all.
    pub(crate) fn target(&self, raw: &RawFacts) -> Result<Option<Target>> {
        self.validate()?;
        // The loader ignores DT_RPATH when DT_RUNPATH exists: the effective
        // path is the one we extend.
        let existing = raw
            .runpath
            .as_ref()
            .map(|p| (elf::DT_RUNPATH, p))
            .or_else(|| raw.rpath.as_ref().map(|p| (elf::DT_RPATH, p)));
        let mut path: Vec<u8> = match (&self.set, existing) {
            (Some(set), _) => set.join(":").into_bytes(),
            (None, Some((_, p))) => p.clone(),
            (None, None) => Vec::new(),
        };
        if !self.remove.is_empty() {
            let kept: Vec<&[u8]> = path
                .split(|&b| b == b':')
                .filter(|entry| !self.remove.iter().any(|r| r.as_bytes() == *entry))
                .collect();
            path = kept.join(&b':');
        }
        for entry in &self.append {
            let present = path.split(|&b| b == b':').any(|c| c == entry.as_bytes());
            if !present {
                if !path.is_empty() {
                    path.push(b':');
                }
                path.extend_from_slice(entry.as_bytes());
            }
        }
        if path.is_empty() {
            return Ok(None);
        }
        let tag = if self.force_rpath {
            elf::DT_RPATH
        } else {
            existing.map_or(elf::DT_RUNPATH, |(tag, _)| tag)
        };
        Ok(Some(Target { tag, path }))
    }
}

/// The one search-path entry the edited file must have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) tag: u32,
    pub(crate) path: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(rpath: Option<&str>, runpath: Option<&str>) -> RawFacts {
        RawFacts {
            rpath: rpath.map(|s| s.as_bytes().to_vec()),
            runpath: runpath.map(|s| s.as_bytes().to_vec()),
            ..RawFacts::default()
        }
    }

    fn target(edit: &SearchPathEdit, facts: &RawFacts) -> Option<(u32, String)> {
        edit.target(facts)
            .unwrap()
            .map(|t| (t.tag, String::from_utf8(t.path).unwrap()))
    }

    #[test]
    fn existing_entries_stay_first_and_duplicates_are_skipped() {
        let edit = SearchPathEdit::append(["$ORIGIN/a", "/x"]).force_rpath();
        let t = target(&edit, &raw(None, Some("/x:/y")));
        assert_eq!(t, Some((elf::DT_RPATH, "/x:/y:$ORIGIN/a".into())));
    }

    #[test]
    fn runpath_wins_over_rpath_as_the_existing_path() {
        let edit = SearchPathEdit::append(["/n"]);
        let t = target(&edit, &raw(Some("/old"), Some("/eff")));
        assert_eq!(t, Some((elf::DT_RUNPATH, "/eff:/n".into())));
        let t = target(&edit, &raw(Some("/old"), None));
        assert_eq!(t, Some((elf::DT_RPATH, "/old:/n".into())));
        let t = target(&edit, &raw(None, None));
        assert_eq!(t, Some((elf::DT_RUNPATH, "/n".into())));
    }

    #[test]
    fn set_replaces_and_empty_means_none() {
        let edit = SearchPathEdit::set(["/a", "/b"]);
        assert_eq!(
            target(&edit, &raw(None, Some("/x"))),
            Some((elf::DT_RUNPATH, "/a:/b".into()))
        );
        let edit = SearchPathEdit::set(Vec::<String>::new());
        assert_eq!(target(&edit, &raw(None, Some("/x"))), None);
        assert_eq!(
            target(&SearchPathEdit::default().force_rpath(), &raw(None, None)),
            None
        );
    }

    #[test]
    fn removed_entries_leave_the_existing_path_before_appending() {
        let edit = SearchPathEdit::append(["$ORIGIN/a"])
            .remove(["/home/b/lib", "/x"])
            .force_rpath();
        let t = target(
            &edit,
            &raw(None, Some("/home/b/lib:$ORIGIN:/home/b/lib:/y")),
        );
        assert_eq!(t, Some((elf::DT_RPATH, "$ORIGIN:/y:$ORIGIN/a".into())));
        // Nothing left and nothing to append: no search path at all.
        let edit = SearchPathEdit::default().remove(["/only"]).force_rpath();
        assert_eq!(target(&edit, &raw(Some("/only"), None)), None);
    }

    #[test]
    fn bad_entries_are_rejected() {
        for bad in ["", "a:b", "a\0b"] {
            let err = SearchPathEdit::append([bad])
                .target(&raw(None, None))
                .unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::InvalidSearchPath(_)),
                "{bad:?}"
            );
        }
    }
}
