//! The text `rocm-sdk test` prints for an [`installed_sdk::SelfTestReport`]
//! (the `--json` document is the report serialised, `cli_output::json`):
//! plain for pipes and files; on a terminal with coloured marks and long
//! reasons wrapped to its width.

use std::fmt::Write as _;

use installed_sdk::{Check, Outcome, SelfTestReport};

/// How the text report is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TextStyle {
    /// ANSI colour on the marks and the totals.
    pub(crate) colour: bool,
    /// Wrap lines at this many columns.
    pub(crate) width: Option<usize>,
}

impl TextStyle {
    fn paint(self, text: &str, colour: &str) -> String {
        if self.colour {
            format!("\x1b[{colour}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// The word that starts a check's line: `PASS`, `WARN`, `SKIP`, `FAIL`.
fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "PASS",
        Outcome::Warned => "WARN",
        Outcome::Failed => "FAIL",
        Outcome::Skipped => "SKIP",
    }
}

/// The SGR colour of the mark: green, yellow, dim, red.
fn colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "32",
        Outcome::Warned => "33",
        Outcome::Skipped => "2",
        Outcome::Failed => "1;31",
    }
}

/// The header (what was tested), one line per check
/// (`PASS`/`WARN`/`SKIP`/`FAIL`, category, name, reason), the failed
/// checks named again at the end, `N warned, N skipped` when there are
/// any, then the final line `N passed, N failed`.
pub(crate) fn self_test(report: &SelfTestReport, style: TextStyle) -> String {
    let mut out = String::new();
    write_header(report, &mut out, style);
    out.push('\n');
    for check in &report.checks {
        write_line(check, &mut out, style);
    }
    write_totals(report, &mut out, style);
    out
}

/// What `rocm-sdk test -q` prints: nothing when no check failed, else
/// the failed checks' lines and the final `N passed, N failed` line.
pub(crate) fn self_test_quiet(report: &SelfTestReport) -> String {
    if report.is_ok() {
        return String::new();
    }
    let mut out = String::new();
    for check in report
        .checks
        .iter()
        .filter(|c| c.outcome == Outcome::Failed)
    {
        write_line(check, &mut out, TextStyle::default());
    }
    let _ = writeln!(
        out,
        "{} passed, {} failed",
        report.passed(),
        report.failed()
    );
    out
}

/// `label: value` lines a maintainer reads first.
fn write_header(report: &SelfTestReport, out: &mut String, style: TextStyle) {
    let env = &report.environment;
    let none = || "none found".to_owned();
    let mut rows = vec![
        (
            "rocm",
            report
                .version
                .clone()
                .unwrap_or_else(|| "unknown".to_owned()),
        ),
        ("platform", env.platform.clone()),
        ("python", env.python.clone()),
        (
            "installer",
            env.installer
                .clone()
                .unwrap_or_else(|| "unknown (no INSTALLER file)".to_owned()),
        ),
        ("site-packages", report.site_packages.display().to_string()),
    ];
    rows.push((
        "distributions",
        if env.distributions.is_empty() {
            none()
        } else {
            env.distributions.join(", ")
        },
    ));
    if let Some(targets) = &env.gpu_targets {
        rows.push(("gpu targets", targets.clone()));
    }
    for (label, value) in rows {
        let head = format!("{label}:{:width$}", "", width = 14 - label.len());
        let _ = write!(out, "{}", style.paint(&head, "1"));
        match style.width {
            Some(width) => wrap_into(
                out,
                &value,
                width.saturating_sub(15).max(40),
                &" ".repeat(15),
            ),
            None => out.push_str(&value),
        }
        out.push('\n');
    }
}

/// The failed checks by name, then the counts.
fn write_totals(report: &SelfTestReport, out: &mut String, style: TextStyle) {
    let failed: Vec<&Check> = report
        .checks
        .iter()
        .filter(|c| c.outcome == Outcome::Failed)
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n{} failed (details above):", failed.len());
        for check in failed {
            let _ = writeln!(out, "  {}: {}", check.category.as_str(), check.name);
        }
    }
    let mut others = Vec::new();
    if report.warned() > 0 {
        others.push(format!("{} warned", report.warned()));
    }
    if report.skipped() > 0 {
        others.push(format!("{} skipped", report.skipped()));
    }
    if !others.is_empty() {
        let _ = writeln!(out, "{}", others.join(", "));
    }
    let verdict = format!("{} passed, {} failed", report.passed(), report.failed());
    let colour = if report.is_ok() { "1;32" } else { "1;31" };
    let _ = writeln!(out, "{}", style.paint(&verdict, colour));
}

/// `MARK category: name (reason)` and a newline; with a width, the line is
/// wrapped at spaces and continued indented under the name.
fn write_line(check: &Check, out: &mut String, style: TextStyle) {
    let mut line = format!("{}: {}", check.category.as_str(), check.name);
    if !check.reason.is_empty() {
        let _ = write!(line, " ({})", check.reason);
    }
    let mark = mark(check.outcome);
    let _ = write!(out, "{} ", style.paint(mark, colour(check.outcome)));
    match style.width {
        Some(width) => wrap_into(
            out,
            &line,
            width.saturating_sub(mark.len() + 1).max(40),
            "     ",
        ),
        None => out.push_str(&line),
    }
    out.push('\n');
}

/// Appends `text` wrapped at spaces to lines of at most `width` characters
/// (a longer word stays whole), continuation lines after `indent`.
fn wrap_into(out: &mut String, text: &str, width: usize, indent: &str) {
    let mut column = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        if column > 0 && column + 1 + len > width {
            out.push('\n');
            out.push_str(indent);
            column = 0;
        } else if column > 0 {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += len;
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use installed_sdk::{Category, Environment};

    use super::*;

    fn report() -> SelfTestReport {
        SelfTestReport {
            site_packages: PathBuf::from("/sp"),
            version: Some("7.1.0".to_owned()),
            environment: Environment {
                platform: "Linux x86_64, glibc 2.36".to_owned(),
                python: "/venv/bin/python (CPython 3.12.3)".to_owned(),
                installer: Some("uv".to_owned()),
                distributions: vec!["rocm 7.1.0".to_owned(), "rocm-sdk-core 7.1.0".to_owned()],
                gpu_targets: Some(
                    "built for gfx942, gfx1100; detected none; selected gfx942 (environment)"
                        .to_owned(),
                ),
            },
            checks: vec![
                Check::passed(Category::Record, "rocm-sdk-core 7.1.0", "3 files"),
                Check::warned(
                    Category::Needed,
                    "_rocm_sdk_core/lib/libx.so",
                    "NEEDED libtinfo.so.6 comes from the host system",
                ),
                Check::failed(
                    Category::Libraries,
                    "_rocm_sdk_core/lib/libx.so",
                    "cannot open",
                ),
                Check::skipped(Category::Profiler, "rocprof-sys-run", "not installed"),
            ],
        }
    }

    #[test]
    fn text_ends_with_the_totals_line() {
        insta::assert_snapshot!(self_test(&report(), TextStyle::default()), @r"
            rocm:          7.1.0
            platform:      Linux x86_64, glibc 2.36
            python:        /venv/bin/python (CPython 3.12.3)
            installer:     uv
            site-packages: /sp
            distributions: rocm 7.1.0, rocm-sdk-core 7.1.0
            gpu targets:   built for gfx942, gfx1100; detected none; selected gfx942 (environment)

            PASS record: rocm-sdk-core 7.1.0 (3 files)
            WARN needed: _rocm_sdk_core/lib/libx.so (NEEDED libtinfo.so.6 comes from the host system)
            FAIL libraries: _rocm_sdk_core/lib/libx.so (cannot open)
            SKIP profiler: rocprof-sys-run (not installed)

            1 failed (details above):
              libraries: _rocm_sdk_core/lib/libx.so
            1 warned, 1 skipped
            1 passed, 1 failed
            ");
    }

    /// On a terminal: coloured marks and verdict, header values and long
    /// reasons wrapped to the width, continuation lines indented.
    #[test]
    fn a_terminal_gets_colour_and_wrapped_lines() {
        let mut report = report();
        report.checks[2].reason =
            "cannot open shared object file libhsa-runtime64.so.1: No such file or directory; \
             reinstall rocm-sdk-core"
                .to_owned();
        let text = self_test(
            &report,
            TextStyle {
                colour: true,
                width: Some(60),
            },
        );
        let plain = |line: &str| {
            let mut out = String::new();
            let mut rest = line;
            while let Some(start) = rest.find('\x1b') {
                out.push_str(&rest[..start]);
                rest = &rest[start..];
                rest = &rest[rest.find('m').map_or(rest.len(), |m| m + 1)..];
            }
            out + rest
        };
        assert!(
            text.lines().all(|l| plain(l).chars().count() <= 60),
            "{text}"
        );
        insta::assert_snapshot!(text.replace('\x1b', "^["), @r"
        ^[[1mrocm:          ^[[0m7.1.0
        ^[[1mplatform:      ^[[0mLinux x86_64, glibc 2.36
        ^[[1mpython:        ^[[0m/venv/bin/python (CPython 3.12.3)
        ^[[1minstaller:     ^[[0muv
        ^[[1msite-packages: ^[[0m/sp
        ^[[1mdistributions: ^[[0mrocm 7.1.0, rocm-sdk-core 7.1.0
        ^[[1mgpu targets:   ^[[0mbuilt for gfx942, gfx1100; detected none;
                       selected gfx942 (environment)

        ^[[32mPASS^[[0m record: rocm-sdk-core 7.1.0 (3 files)
        ^[[33mWARN^[[0m needed: _rocm_sdk_core/lib/libx.so (NEEDED
             libtinfo.so.6 comes from the host system)
        ^[[1;31mFAIL^[[0m libraries: _rocm_sdk_core/lib/libx.so (cannot open
             shared object file libhsa-runtime64.so.1: No such file
             or directory; reinstall rocm-sdk-core)
        ^[[2mSKIP^[[0m profiler: rocprof-sys-run (not installed)

        1 failed (details above):
          libraries: _rocm_sdk_core/lib/libx.so
        1 warned, 1 skipped
        ^[[1;31m1 passed, 1 failed^[[0m
        ");
    }

    #[test]
    fn warnings_and_skips_do_not_fail_a_run() {
        let mut report = report();
        report.checks.retain(|c| c.outcome != Outcome::Failed);
        assert!(report.is_ok());
        assert!(self_test(&report, TextStyle::default()).ends_with("1 passed, 0 failed\n"));
    }

    #[test]
    fn quiet_text_is_empty_on_success_and_only_failures_otherwise() {
        insta::assert_snapshot!(self_test_quiet(&report()), @r"
        FAIL libraries: _rocm_sdk_core/lib/libx.so (cannot open)
        1 passed, 1 failed
        ");
        let mut healthy = report();
        healthy.checks.retain(|c| c.outcome != Outcome::Failed);
        assert_eq!(self_test_quiet(&healthy), "");
    }
}
