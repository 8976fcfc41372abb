//! Every `DT_NEEDED` of every host ELF file of the runtime packages
//! resolves through the file's own RPATH to a file of this site-packages,
//! to a manylinux_2_28 system library, or to the loader (crate
//! `link-check`). Unlike loading, this also covers executables.

use link_check::{DirTree, LinkChecker};

use super::Context;
use super::libraries::runtime_dirs;
use crate::report::{Category, Check};

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
        Ok(report) => report,
        Err(e) => {
            checks.push(Check::failed(Category::Needed, "DT_NEEDED", e.to_string()));
            return;
        }
    };
    if report.is_ok() {
        checks.push(Check::passed(
            Category::Needed,
            "DT_NEEDED",
            format!(
                "{} entries of {} ELF files resolve",
                report.needed_count(),
                report.files.len()
            ),
        ));
        return;
    }
    for unreadable in &report.unreadable {
        checks.push(Check::failed(
            Category::Needed,
            &unreadable.path,
            format!("unreadable ELF: {}", unreadable.reason),
        ));
    }
    for file in &report.files {
        let problems: Vec<String> = report
            .unresolved()
            .filter(|u| std::ptr::eq(u.file, file))
            .map(|u| u.to_string())
            .collect();
        if !problems.is_empty() {
            checks.push(Check::failed(
                Category::Needed,
                &file.path,
                problems.join("; "),
            ));
        }
    }
}
