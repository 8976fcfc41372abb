//! Runtime packages: no symlinks, only SONAME files, `$ORIGIN` search
//! paths and launchers (docs/behaviour.md#runtime through #device).

use std::collections::BTreeMap;

use artifacts::{Catalog, Entry, EntryKind, Resolution};
use dist_info::package::PackageKind;

use crate::plan::{Action, Dropped, PlannedFile, SonameAlias, SourceRef};
use crate::search_path::{self, search_path_entries};
use crate::survey::{FileClass, SourceSurvey};

/// The compute profiler's real program; `bin/rocprof-compute` launches it.
const COMPUTE: &str = "libexec/rocprofiler-compute/rocprof-compute";

/// How links are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// docs/behaviour.md#runtime-links: soname aliases, launchers for programs, copies otherwise.
    Runtime,
    /// docs/behaviour.md#device: device wheels dereference every link to a file.
    Dereference,
}

/// What a runtime package ships, relative to its platform package.
#[derive(Debug, Default)]
pub(crate) struct Runtime {
    /// relpath → how it is made and whether it is executable.
    pub(crate) shipped: BTreeMap<String, (Action, bool)>,
    pub(crate) aliases: Vec<SonameAlias>,
    pub(crate) dropped: Vec<Dropped>,
}

/// The package being planned.
pub(crate) struct Target<'a> {
    pub(crate) kind: PackageKind,
    pub(crate) platform: &'a str,
    pub(crate) core_platform: &'a str,
    pub(crate) links: Links,
    /// Whether launchers exist for the platform (Linux); elsewhere a link
    /// to a program ships a copy.
    pub(crate) launchers: bool,
    /// `--keep-absolute-search-paths`: absolute entries stay.
    pub(crate) keep_absolute: bool,
}

impl Runtime {
    /// Applies docs/behaviour.md#runtime to every selected entry of `catalog`, in sorted order.
    pub(crate) fn plan(catalog: &Catalog, survey: &SourceSurvey, target: &Target<'_>) -> Self {
        let mut rt = Self::default();
        // SONAME files that must exist because an alias names them; filled
        // from the aliased source when the tree has no file of that name.
        let mut wanted: BTreeMap<String, &Entry> = BTreeMap::new();
        for entry in catalog.entries() {
            match entry.kind() {
                EntryKind::Dir => {}
                EntryKind::File => {
                    rt.file(entry.relpath(), entry, survey, target, &mut wanted);
                }
                EntryKind::Symlink { resolution, .. } => {
                    rt.link(entry, resolution, catalog, survey, target, &mut wanted);
                }
            }
        }
        for (relpath, source) in wanted {
            if !rt.shipped.contains_key(&relpath) {
                tracing::debug!(
                    "{relpath}: no file has this SONAME's name; shipping its library under it"
                );
                rt.ship(&relpath, source, survey, target);
            }
        }
        rt.aliases.sort();
        rt.dropped.sort();
        rt
    }

    /// Rule 2 (and 4): a file, or a link's target under the link's name.
    fn file<'e>(
        &mut self,
        name: &str,
        source: &'e Entry,
        survey: &SourceSurvey,
        target: &Target<'_>,
        wanted: &mut BTreeMap<String, &'e Entry>,
    ) {
        if let Some(soname) = survey.of(source).and_then(FileClass::soname) {
            let (dir, base) = split(name);
            if base != soname {
                let soname_path = join(dir, soname);
                self.aliases.push(SonameAlias {
                    relpath: name.to_owned(),
                    soname: soname.to_owned(),
                });
                wanted.entry(soname_path).or_insert(source);
                return;
            }
        }
        self.ship(name, source, survey, target);
    }

    /// Rule 3: a symlink.
    fn link<'e>(
        &mut self,
        link: &Entry,
        resolution: &Resolution,
        catalog: &'e Catalog,
        survey: &SourceSurvey,
        target: &Target<'_>,
        wanted: &mut BTreeMap<String, &'e Entry>,
    ) {
        let relpath = link.relpath();
        let resolved = match resolution {
            Resolution::Dir(_) => return self.drop(relpath, "links to a directory"),
            Resolution::Dangling(why) => {
                return self.drop(relpath, &format!("dangling link ({why})"));
            }
            Resolution::File(path) => path,
        };
        let Some(file) = catalog.tree_get(resolved) else {
            return self.drop(relpath, "dangling link (target not in the tree)");
        };
        let class = survey.of(file);
        if target.links == Links::Dereference {
            return self.ship(relpath, file, survey, target);
        }
        if class.and_then(FileClass::soname).is_some() {
            return self.file(relpath, file, survey, target, wanted);
        }
        let program = target.launchers
            && class.is_some_and(FileClass::is_program)
            && file.mode() & 0o111 != 0;
        if program {
            if catalog.get(resolved).is_none() {
                return self.drop(
                    relpath,
                    &format!("links to the program {resolved}, which this package does not ship"),
                );
            }
            let target_text = relative(split(relpath).0, resolved);
            self.shipped.insert(
                relpath.to_owned(),
                (
                    Action::Launcher {
                        target: target_text,
                    },
                    true,
                ),
            );
            return;
        }
        self.ship(relpath, file, survey, target);
    }

    /// Ships `source`'s bytes at `relpath` (first one wins).
    fn ship(&mut self, relpath: &str, source: &Entry, survey: &SourceSurvey, target: &Target<'_>) {
        if self.shipped.contains_key(relpath) {
            return;
        }
        let Some(source_ref) = SourceRef::of(source) else {
            return;
        };
        let class = survey.of(source);
        let action = if class.is_some_and(FileClass::takes_search_path) {
            let dest = format!("{}/{relpath}", target.platform);
            Action::PatchSearchPath {
                source: source_ref,
                patch: search_path::patch(
                    search_path_entries(target.kind, &dest, target.core_platform),
                    removed_entries(survey, source, target.keep_absolute),
                ),
            }
        } else {
            if class == Some(&FileClass::StaticExecutable) {
                tracing::info!("{relpath}: static executable, no search path needed");
            }
            Action::Copy { source: source_ref }
        };
        let executable = source.mode() & 0o111 != 0;
        self.shipped
            .insert(relpath.to_owned(), (action, executable));
    }

    fn drop(&mut self, relpath: &str, reason: &str) {
        tracing::info!("{relpath}: dropped: {reason}");
        self.dropped.push(Dropped {
            relpath: relpath.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// Extra profiler names (docs/behaviour.md#profiler-contents): unversioned library names and
    /// the `bin/rocprof-compute` launcher, when missing.
    pub(crate) fn add_profiler_names(&mut self, launchers: bool) {
        let versioned: Vec<(String, (Action, bool))> = self
            .shipped
            .iter()
            .filter(|(r, _)| {
                let base = r.strip_prefix("lib/").unwrap_or("");
                (base.starts_with("librocprof-sys") || base.starts_with("libprofiler-hub"))
                    && base.contains(".so.")
            })
            .map(|(r, v)| (r.clone(), v.clone()))
            .collect();
        for (relpath, made) in versioned {
            let unversioned = format!(
                "{}.so",
                &relpath[..relpath.find(".so.").expect("filtered on .so.")]
            );
            self.shipped.entry(unversioned).or_insert(made);
        }
        if launchers && self.shipped.contains_key(COMPUTE) {
            self.shipped
                .entry("bin/rocprof-compute".to_owned())
                .or_insert((
                    Action::Launcher {
                        target: format!("../{COMPUTE}"),
                    },
                    true,
                ));
        }
    }

    /// The wheel files under `platform/`.
    pub(crate) fn files(&self, platform: &str) -> Vec<PlannedFile> {
        self.shipped
            .iter()
            .map(|(relpath, (action, executable))| PlannedFile {
                dest: format!("{platform}/{relpath}"),
                executable: *executable,
                action: action.clone(),
            })
            .collect()
    }
}

/// The absolute search-path entries of `source` that leave it: all of
/// them, unless they are kept (docs/behaviour.md#search-paths).
pub(crate) fn removed_entries(survey: &SourceSurvey, source: &Entry, keep: bool) -> Vec<String> {
    match survey.absolute_search_path(source) {
        Some(absolute) if !keep => absolute.entries.clone(),
        _ => Vec::new(),
    }
}

/// `("lib", "libx.so")` from `"lib/libx.so"`; `("", name)` at the top.
pub(crate) fn split(relpath: &str) -> (&str, &str) {
    relpath.rsplit_once('/').unwrap_or(("", relpath))
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The path of `to` relative to directory `from_dir` (both relpaths of one tree).
///
/// ```text
/// relative("bin", "libexec/x/tool") == "../libexec/x/tool"
/// ```
pub(crate) fn relative(from_dir: &str, to: &str) -> String {
    let from: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = to.split('/').collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative("bin", "libexec/x/tool"), "../libexec/x/tool");
        assert_eq!(relative("bin", "bin/tool"), "tool");
        assert_eq!(relative("", "bin/tool"), "bin/tool");
        assert_eq!(
            relative("lib/llvm/bin", "lib/llvm/bin/clang-20"),
            "clang-20"
        );
        assert_eq!(relative("lib/llvm/bin", "bin/hipcc"), "../../../bin/hipcc");
    }

    #[test]
    fn split_paths() {
        assert_eq!(split("lib/libx.so"), ("lib", "libx.so"));
        assert_eq!(split("top"), ("", "top"));
    }
}
