//! Every `DT_NEEDED` of every host ELF file of the runtime packages
//! resolves through the file's own RPATH to a file of this site-packages,
//! to a manylinux_2_28 system library, or to the loader (crate
//! `link-check`). Unlike loading, this also covers executables.
//!
//! A needed library that none of those provide but this machine does (the
//! loader finds it in its cache or default directories) works here and
//! would not on a machine without it: a warning naming the library. One
//! that nothing provides is a failure.

use link_check::{DirTree, LinkChecker};

use super::Context;
use super::libraries::{host_machine, runtime_dirs};
use crate::host_libraries::HostLibraries;
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let prefixes: Vec<String> = runtime_dirs(cx).iter().map(|d| cx.rel(d)).collect();
    if prefixes.is_empty() {
        checks.push(Check::skipped(
            Category::Needed,
            "DT_NEEDED",
            "no runtime packages installed",
        ));
        return;
    }
    let report = DirTree::open(cx.sp())
        .and_then(|tree| LinkChecker::new().only_under(prefixes).check(&tree));
    let report = match report {
        Ok(mut report) => {
            let sp = cx.sp();
            report
                .files
                .retain(|f| !super::aliases::stands_for_uninstalled(sp, f));
            report
        }
        Err(e) => {
            checks.push(Check::failed(
                Category::Needed,
                "DT_NEEDED",
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    let host = if report.unresolved().next().is_some() {
        HostLibraries::discover()
    } else {
        HostLibraries::default()
    };
    let mut others = Vec::new();
    let mut fully_resolved = 0;
    for file in &report.files {
        let mut failures = Vec::new();
        let mut from_host = Vec::new();
        for unresolved in report.unresolved().filter(|u| std::ptr::eq(u.file, file)) {
            match host.find(unresolved.name, host_machine()) {
                Some(path) => from_host.push(format!(
                    "NEEDED {} is taken from the host system ({}): it is neither in the ROCm \
                     packages nor an allowed manylinux_2_28 system library, so this works here \
                     but not on a machine without it",
                    unresolved.name,
                    path.display()
                )),
                None => failures.push(unresolved.to_string()),
            }
        }
        if !failures.is_empty() {
            failures.extend(from_host);
            others.push(Check::failed(
                Category::Needed,
                &file.path,
                failures.join("; "),
            ));
        } else if !from_host.is_empty() {
            others.push(Check::warned(
                Category::Needed,
                &file.path,
                from_host.join("; "),
            ));
        } else {
            fully_resolved += 1;
        }
    }
    if fully_resolved == report.files.len() {
        checks.push(Check::passed(
            Category::Needed,
            "DT_NEEDED",
            format!(
                "{} entries of {} ELF files resolve",
                report.needed_count(),
                report.files.len()
            ),
        ));
    } else if fully_resolved > 0 {
        checks.push(Check::passed(
            Category::Needed,
            "DT_NEEDED",
            format!(
                "{fully_resolved} of {} ELF files resolve every entry; the others follow",
                report.files.len()
            ),
        ));
    }
    for unreadable in &report.unreadable {
        checks.push(Check::failed(
            Category::Needed,
            &unreadable.path,
            format!("unreadable ELF: {}", unreadable.reason),
        ));
    }
    checks.extend(others);
}
