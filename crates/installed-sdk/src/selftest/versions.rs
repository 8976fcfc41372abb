//! Every ROCm distribution has the version of core's document; device
//! wheels may differ by a `.postN` segment, and the `rocm` selector may be
//! a post-release `X.postN` of the release `X` (docs/behaviour.md#versions). The `rocm`
//! selector's own document must pin the release too.

use dist_info::document::FILE_NAME;
use dist_info::package::PackageKind;
use pypa_formats::version::{is_release_or_post_release, matches_ignoring_post};

use super::Context;
use crate::report::{Category, Check};
use crate::site::read_document;

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let ours = &cx.document.selector.version;
    let mut problems = Vec::new();
    for dist in &cx.distributions {
        let same = match dist.kind {
            PackageKind::Device => matches_ignoring_post(ours, &dist.version),
            PackageKind::Meta => is_release_or_post_release(&dist.version, ours),
            _ => dist.version == *ours,
        };
        if !same {
            problems.push(format!(
                "{} is {} but rocm-sdk-core is {ours}; run `{} \"{}=={ours}\"`",
                dist.name, dist.version, cx.install, dist.name
            ));
        }
    }
    let selector_document = cx.sp().join("rocm_sdk").join(FILE_NAME);
    if selector_document.is_file() {
        match read_document(&selector_document) {
            Ok(doc) if doc.selector.version == *ours => {}
            Ok(doc) => problems.push(format!(
                "{} says {} but rocm-sdk-core is {ours}; run `{} \"rocm=={ours}\"`",
                cx.rel(&selector_document),
                doc.selector.version,
                cx.install
            )),
            Err(e) => problems.push(e.to_string()),
        }
    }
    checks.push(Check::from_problems(
        Category::Versions,
        "ROCm distributions",
        format!("{} distributions at {ours}", cx.distributions.len()),
        &problems,
    ));
}
