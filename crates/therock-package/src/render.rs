//! The text this program prints for each report of `pipeline` and
//! `release-check`; the `--json` documents are the reports serialised
//! (`cli_output::json`; docs/formats.md). The libraries return typed
//! values and print nothing.

use std::fmt::Write as _;
use std::path::Path;

use layout::Plan;
use pipeline::{
    AssembleReport, BuildOutcome, BuildReport, BuildTimings, Counts, ElfLinks, IndexReport,
    InspectReport, PlanReport, ShardPlan,
};
use release_check::{CheckStatus, FileKind, VerifyReport};

/// `inspect`'s text report.
pub(crate) fn inspect(r: &InspectReport) -> String {
    let mut s = String::new();
    let list = |v: &[String]| {
        if v.is_empty() {
            "(none)".to_owned()
        } else {
            v.join(" ")
        }
    };
    let _ = writeln!(s, "mode: {}", r.mode);
    let _ = writeln!(
        s,
        "version: {}",
        r.version.as_deref().unwrap_or("(not recorded)")
    );
    let _ = writeln!(
        s,
        "dist_amdgpu_targets: {}",
        r.dist_amdgpu_targets
            .as_deref()
            .map_or_else(|| "(unknown)".to_owned(), list)
    );
    let _ = writeln!(s, "raw targets: {}", list(&r.raw_targets));
    let _ = writeln!(s, "base targets: {}", list(&r.base_targets));
    let count: usize = r
        .artifacts
        .iter()
        .flat_map(|n| &n.components)
        .map(|c| c.targets.len())
        .sum();
    let _ = writeln!(s, "artifacts: {count}");
    let width = r
        .artifacts
        .iter()
        .flat_map(|n| &n.components)
        .flat_map(|c| &c.targets)
        .map(|t| t.target.len())
        .max()
        .unwrap_or(0);
    for n in &r.artifacts {
        let _ = writeln!(s, "  {}", n.name);
        for c in &n.components {
            for t in &c.targets {
                let _ = writeln!(
                    s,
                    "    {:<4} {:<width$}  {}",
                    c.component,
                    t.target,
                    counts(&t.counts)
                );
            }
        }
    }
    let _ = writeln!(s, "merged tree: {}", counts(&r.merged));
    let _ = writeln!(s, "warnings: {}", r.warnings.len());
    for w in &r.warnings {
        let _ = writeln!(s, "  {w}");
    }
    s
}

fn counts(c: &Counts) -> String {
    format!(
        "files {:>3}  dirs {:>3}  symlinks {:>3}  bytes {}",
        c.files, c.dirs, c.symlinks, c.bytes
    )
}

/// `plan --json`: the plan document (as `plan.json`), or the CI matrix.
pub(crate) fn plan_json(r: &PlanReport) -> String {
    match r {
        PlanReport::Plan(plan) => plan.to_json(),
        PlanReport::Shards { shards, .. } => cli_output::json(shards),
    }
}

/// `plan`'s text report: one line per package, or per shard.
pub(crate) fn plan(r: &PlanReport) -> String {
    match r {
        PlanReport::Plan(plan) => summary_of_plan(plan),
        PlanReport::Shards { plan, shards } => summary_of_shards(plan, shards),
    }
}

/// The first line of every plan summary: `Kpack build, version V, TAG`.
fn plan_heading(plan: &Plan) -> String {
    format!(
        "{:?} build, version {}, {}",
        plan.mode, plan.version, plan.platform_tag
    )
}

fn summary_of_plan(plan: &Plan) -> String {
    let mut out = plan_heading(plan);
    out.push('\n');
    for p in &plan.packages {
        let _ = writeln!(
            out,
            "  {:<40} {:>6} files {:>6} devel entries {:>4} aliases {:>4} dropped",
            p.dist_name,
            p.files.len(),
            p.devel_tree.len(),
            p.soname_aliases.len(),
            p.dropped.len()
        );
    }
    for alias in plan.packages.iter().flat_map(|p| &p.runtime_aliases) {
        let why: Vec<String> = alias.why.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  runtime alias {} for {} ({} bytes): {}",
            alias.relpath,
            alias.target,
            alias.size,
            why.join("; ")
        );
    }
    for s in &plan.selectors {
        let _ = writeln!(
            out,
            "  rocm (sdist) in dist/{} with {} extras",
            s.subdir,
            s.extras.len()
        );
    }
    out
}

/// `plan --shards N`.
fn summary_of_shards(plan: &Plan, shards: &ShardPlan) -> String {
    let mut out = format!(
        "{}, plan {}\n",
        plan_heading(plan),
        shards.include.first().map_or("", |s| s.plan.as_str())
    );
    for shard in &shards.include {
        let _ = writeln!(
            out,
            "shard {}: {} input bytes, {} artifacts",
            shard.shard,
            shard.input_bytes,
            shard.artifacts.len()
        );
        for package in &shard.packages {
            let _ = writeln!(out, "  {package}");
        }
    }
    out
}

/// `build`'s text report: with `per_file` one line per file, then the
/// totals (without: when the progress lines already named each file,
/// stderr not being a terminal).
pub(crate) fn build(r: &BuildReport, per_file: bool) -> String {
    if r.outcome == BuildOutcome::PlanValidated {
        return format!("plan validated; wrote {}\n", r.files[0].path.display());
    }
    let mut out = String::new();
    if let Some(shard) = &r.shard {
        let _ = writeln!(
            out,
            "shard {}: wrote {}",
            shard.shard,
            shard.manifest.display()
        );
    }
    if per_file {
        for f in &r.files {
            let _ = writeln!(out, "{:>12}  {}", human_bytes(f.size), f.path.display());
        }
    }
    let _ = writeln!(
        out,
        "{} packages, {} in {:.1}s: {}",
        r.packages,
        human_bytes(r.total_size),
        r.seconds,
        r.dist_dir.display()
    );
    if let Some(timings) = &r.timings {
        out.push_str(&build_timings(timings));
    }
    out
}

/// The table of `build --timings`.
fn build_timings(t: &BuildTimings) -> String {
    let mut out = String::from(
        "timings (busy: summed over threads; cpu: the threads of a package or phase, the process for a step)\n",
    );
    let _ = writeln!(
        out,
        "  {:<44} {:>9} {:>9} {:>11}",
        "package / phase", "wall", "cpu", "bytes"
    );
    for package in &t.packages {
        let _ = writeln!(
            out,
            "  {:<44} {:>8.3}s {:>8.3}s",
            package.name, package.wall, package.cpu
        );
        for phase in &package.phases {
            let _ = writeln!(
                out,
                "    {:<42} {:>7.3}s* {:>8.3}s {:>11}",
                phase.phase,
                phase.busy,
                phase.cpu,
                human_bytes(phase.bytes)
            );
        }
    }
    for step in &t.steps {
        let _ = writeln!(
            out,
            "  {:<44} {:>8.3}s {:>8.3}s",
            format!("[{}]", step.step),
            step.wall,
            step.cpu
        );
    }
    let _ = writeln!(
        out,
        "  {:<44} {:>8.3}s {:>8.3}s\n  * busy time",
        "total", t.wall, t.cpu
    );
    out
}

/// `bytes` in the largest binary unit that keeps the number at least 1.
#[allow(clippy::cast_precision_loss)]
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The warning line of a failed ELF-link check of `build` (printed after
/// `therock-package: warning: `), naming `dist/` in its next step; `None`
/// when the check passed or was not made (docs/behaviour.md#build-link-check).
pub(crate) fn elf_links_warning(r: &BuildReport) -> Option<String> {
    elf_links_line(r.elf_links.as_ref()?, &r.dist_dir)
}

/// The same line for any release's check (`assemble`'s).
pub(crate) fn elf_links_line(links: &ElfLinks, dist: &Path) -> Option<String> {
    if links.ok {
        return None;
    }
    let Some(first) = links.first.as_deref() else {
        return Some(format!(
            "the release fails verify's ELF-link check; run `therock-package verify {}` to see why",
            dist.display()
        ));
    };
    let files = if links.unresolved_files == 1 {
        "1 ELF file has".to_owned()
    } else {
        format!("{} ELF files have", links.unresolved_files)
    };
    Some(format!(
        "the release fails verify's ELF-link check: {files} unresolved NEEDED entries, the \
         first: {first}; run `therock-package verify {}` to see all, and give it `--exclude \
         SONAME` for libraries left to the system on purpose",
        dist.display()
    ))
}

/// The warning lines of the other checks `verify` will fail on what
/// `build` wrote by request (`--keep-absolute-search-paths`), one per
/// check, in `verify`'s words (docs/behaviour.md#build-checks).
pub(crate) fn fails_verify_lines(r: &BuildReport) -> Vec<String> {
    r.fails_verify
        .iter()
        .filter_map(|failure| {
            let first = failure.problems.first()?;
            let more = match failure.problems.len() {
                1 => String::new(),
                n => format!(" ({} more)", n - 1),
            };
            Some(format!(
                "the release fails verify's {} check: {first}{more}; run `therock-package verify \
                 {}` to see all",
                failure.check,
                r.dist_dir.display()
            ))
        })
        .collect()
}

/// `assemble`'s text report: one line per platform, then where the
/// release is.
pub(crate) fn assemble(r: &AssembleReport) -> String {
    let mut out = String::new();
    for platform in &r.platforms {
        let _ = writeln!(
            out,
            "{}: {} shards of plan {}",
            platform.platform_tag, platform.shards, platform.plan
        );
    }
    let _ = writeln!(
        out,
        "assembled {} packages into {} (verified, indexed)",
        r.files.len(),
        r.dist_dir.display()
    );
    out
}

/// `index`'s text report: one line for the `.metadata` files, then one
/// per page.
pub(crate) fn post_release(r: &pipeline::PostReleaseReport) -> String {
    let mut out = String::new();
    for path in &r.written {
        let _ = writeln!(
            out,
            "wrote {} (the rocm selector {} over the release {})",
            path.display(),
            r.version,
            r.release
        );
    }
    out
}

pub(crate) fn index(r: &IndexReport) -> String {
    let mut out = String::new();
    if !r.metadata_files.is_empty() {
        let _ = writeln!(
            out,
            "wrote {} wheel .metadata files",
            r.metadata_files.len()
        );
    }
    for page in &r.pages {
        let what = if page.projects {
            "projects"
        } else {
            "packages"
        };
        let _ = writeln!(
            out,
            "wrote {} ({} {what})",
            page.path.display(),
            page.entries
        );
    }
    out
}

/// `verify`'s text report: one line per check with its problems and
/// details, then the verdict.
pub(crate) fn verify(r: &VerifyReport) -> String {
    let wheels = r.files.iter().filter(|f| f.kind == FileKind::Wheel).count();
    let sdists = r.files.len() - wheels;
    let mut out = format!(
        "verify {}: {wheels} wheels, {sdists} sdists\n",
        r.dirs.join(" ")
    );
    for c in &r.checks {
        let mark = match c.status {
            CheckStatus::Ok => "ok     ",
            CheckStatus::Skipped => "skipped",
            CheckStatus::Failed => "FAILED ",
        };
        let _ = write!(out, "{mark} {}: {}", c.id, c.title);
        if let Some(note) = &c.note {
            let _ = write!(out, " ({note})");
        }
        out.push('\n');
        for p in &c.problems {
            let _ = writeln!(out, "        - {p}");
        }
        for d in &c.details {
            let _ = writeln!(out, "        {d}");
        }
    }
    let failed = r
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .count();
    if failed == 0 {
        out.push_str("release verified: every check passed\n");
    } else {
        let _ = writeln!(
            out,
            "release NOT verified: {failed} of {} checks failed; do not publish it",
            r.checks.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elf_links_warning_names_the_count_the_first_and_the_next_step() {
        let links = ElfLinks {
            ok: false,
            files: 9,
            unresolved_files: 2,
            first: Some(
                "_rocm_sdk_core/bin/rocminfo: NEEDED libhsa-runtime64.so.1 not found".into(),
            ),
        };
        insta::assert_snapshot!(elf_links_line(&links, Path::new("out/dist")).unwrap(), @"the release fails verify's ELF-link check: 2 ELF files have unresolved NEEDED entries, the first: _rocm_sdk_core/bin/rocminfo: NEEDED libhsa-runtime64.so.1 not found; run `therock-package verify out/dist` to see all, and give it `--exclude SONAME` for libraries left to the system on purpose");
        let one = ElfLinks {
            unresolved_files: 1,
            ..links.clone()
        };
        assert!(
            elf_links_line(&one, Path::new("d"))
                .unwrap()
                .contains(": 1 ELF file has unresolved")
        );
        let fine = ElfLinks {
            ok: true,
            unresolved_files: 0,
            first: None,
            ..links
        };
        assert_eq!(elf_links_line(&fine, Path::new("d")), None);
    }

    #[test]
    fn sizes_take_the_largest_unit_that_keeps_a_whole_number() {
        assert_eq!(human_bytes(0), "0.0 B");
        assert_eq!(human_bytes(1023), "1023.0 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 << 30), "5.0 GiB");
        assert_eq!(human_bytes(5 << 40), "5120.0 GiB");
    }
}
