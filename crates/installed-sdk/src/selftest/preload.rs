//! Every library-table entry that an installed distribution records in its
//! `_libraries.json` is found and preloaded through the public Python API
//! (`rocm_sdk.find_libraries`, `rocm_sdk.preload_libraries`), each in a
//! fresh process, as PyTorch and others use it.
//!
//! Entries the build did not produce are not in any record and are listed
//! as skipped (the API says "not part of this ROCm build" for them). A
//! recorded entry whose file is missing, a record that is missing or
//! unreadable, and an API call that raises are failures.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use dist_info::libraries_record::{self, LibrariesRecord};
use dist_info::package::PackageKind;
use pypa_formats::installer::InstallCommand;

use super::Context;
use crate::distributions::Distribution;
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

/// One recorded file of one short name.
struct Recorded<'a> {
    distribution: &'a Distribution,
    /// The record, relative to site-packages, for messages.
    record: String,
    /// The file, absolute.
    path: PathBuf,
}

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let mut recorded: BTreeMap<&str, Vec<Recorded<'_>>> = BTreeMap::new();
    let mut installed_kinds = Vec::new();
    for dist in cx
        .distributions
        .iter()
        .filter(|d| matches!(d.kind, PackageKind::Core | PackageKind::Libraries))
    {
        installed_kinds.push(dist.kind);
        let (Some(dir), Some(pure)) = (
            dist.platform_package.as_deref(),
            dist.pure_package.as_deref(),
        ) else {
            continue;
        };
        let record_path = pure.join(libraries_record::FILE_NAME);
        match read_record(cx, dist, &record_path) {
            Ok(record) => {
                for (shortname, relpath) in record.libraries {
                    let Some(entry) = cx
                        .document
                        .libraries
                        .iter()
                        .find(|l| l.shortname == shortname)
                    else {
                        checks.push(Check::failed(
                            Category::Preload,
                            &shortname,
                            format!(
                                "{} records {shortname:?}, which is not in the library table of \
                                 this release; {}",
                                cx.rel(&record_path),
                                reinstall(cx.install, dist)
                            ),
                        ));
                        continue;
                    };
                    recorded
                        .entry(entry.shortname.as_str())
                        .or_default()
                        .push(Recorded {
                            distribution: dist,
                            record: cx.rel(&record_path),
                            path: dir.join(&relpath),
                        });
                }
            }
            Err(reason) => checks.push(Check::failed(
                Category::Preload,
                format!("{} library record", dist.name),
                reason,
            )),
        }
    }
    skipped_entries(cx, &recorded, &installed_kinds, checks);
    if recorded.is_empty() {
        return;
    }
    let shortnames: Vec<String> = recorded.keys().map(|s| (*s).to_owned()).collect();
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let outcomes = match cx.probe.preload(&shortnames, cx.options.jobs, timeout) {
        Ok(outcomes) => outcomes,
        Err(e) => {
            checks.push(Check::failed(
                Category::Preload,
                "rocm_sdk.preload_libraries",
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    for ((shortname, files), outcome) in recorded.iter().zip(outcomes) {
        let mut problems = Vec::new();
        for file in files.iter().filter(|f| !f.path.exists()) {
            problems.push(format!(
                "{} records {}, which is missing on disk; {}",
                file.record,
                cx.rel(&file.path),
                reinstall(cx.install, file.distribution)
            ));
        }
        let found = outcome.paths.first().map(PathBuf::from);
        match (&outcome.error, &found) {
            (Some(error), _) => problems.push(format!(
                "rocm_sdk.find_libraries({shortname:?}) / preload_libraries raised {error}"
            )),
            (None, None) => problems.push(format!(
                "rocm_sdk.find_libraries({shortname:?}) returned nothing, but {} records it",
                files[0].record
            )),
            (None, Some(path)) if !files.iter().any(|f| same_file(&f.path, path)) => {
                problems.push(format!(
                    "rocm_sdk.find_libraries({shortname:?}) returned {}, not the recorded {}",
                    path.display(),
                    cx.rel(&files[0].path)
                ));
            }
            (None, Some(_)) => {}
        }
        checks.push(match (problems.is_empty(), &found) {
            (true, Some(path)) => Check::passed(Category::Preload, *shortname, cx.rel(path)),
            _ => Check::failed(Category::Preload, *shortname, problems.join("; ")),
        });
    }
}

/// The record of `dist` at `path` (in its pure package), or why it cannot
/// be read.
fn read_record(
    cx: &Context<'_>,
    dist: &Distribution,
    path: &Path,
) -> Result<LibrariesRecord, String> {
    let bytes = fs_helpers::confined::read_regular(path, 16 << 20)
        .map_err(|e| format!("{}: {e}; {}", cx.rel(path), reinstall(cx.install, dist)))?;
    let record = LibrariesRecord::from_json(&bytes).map_err(|e| {
        let mut text = format!("{}: {e}", cx.rel(path));
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            let _ = write!(text, ": {cause}");
            source = cause.source();
        }
        text
    })?;
    if record.distribution != dist.name {
        return Err(format!(
            "{} belongs to {}, not to {}; {}",
            cx.rel(path),
            record.distribution,
            dist.name,
            reinstall(cx.install, dist)
        ));
    }
    Ok(record)
}

/// One skipped line per reason a table entry is not checked: its package
/// is not installed, or no installed distribution records it (this build
/// did not produce it).
fn skipped_entries(
    cx: &Context<'_>,
    recorded: &BTreeMap<&str, Vec<Recorded<'_>>>,
    installed: &[PackageKind],
    checks: &mut Vec<Check>,
) {
    let mut not_built = Vec::new();
    let mut not_installed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for library in &cx.document.libraries {
        if recorded.contains_key(library.shortname.as_str()) {
            continue;
        }
        if installed.contains(&library.package) {
            not_built.push(library.shortname.as_str());
        } else {
            not_installed
                .entry(library.package.logical_name())
                .or_default()
                .push(library.shortname.as_str());
        }
    }
    if !not_built.is_empty() {
        checks.push(Check::skipped(
            Category::Preload,
            format!("{} library-table entries", not_built.len()),
            format!("not part of this ROCm build: {}", not_built.join(" ")),
        ));
    }
    for (package, names) in not_installed {
        checks.push(Check::skipped(
            Category::Preload,
            format!("{} library-table entries", names.len()),
            format!(
                "the `{package}` package is not installed (`{} \"rocm[{package}]=={}\"`): {}",
                cx.install,
                cx.site.selector_version(&cx.document),
                names.join(" ")
            ),
        ));
    }
}

fn reinstall(install: InstallCommand, dist: &Distribution) -> String {
    format!(
        "reinstall it: {install} --force-reinstall \"{}=={}\"",
        dist.name, dist.version
    )
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
