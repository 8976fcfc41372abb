//! The result of `rocm-sdk test`: a list of checks, rendered as text (one
//! line per check, then `N passed, N failed`) or as JSON (schema in
//! `docs/formats.md`).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

/// What a check is about; the order is the order checks run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The document and the required distributions.
    Installation,
    /// The devel tree is unpacked and its device links are current.
    DevelUnpack,
    /// Packages are physical (`__init__.py`) siblings in site-packages.
    Packages,
    /// Every ROCm distribution has the same version.
    Versions,
    /// Every file matches its distribution's RECORD.
    Record,
    /// Every shared library loads in a fresh process.
    Libraries,
    /// Every recorded library-table entry preloads through the Python API.
    Preload,
    /// Every `DT_NEEDED` resolves through the file's own search path.
    Needed,
    /// Console scripts exist and reach their tools.
    Scripts,
    /// The tools that need no GPU run and print what they should.
    Tools,
    /// Devel paths exist, `hipconfig --rocmpath`, libraries mirrored.
    Devel,
    /// The profiler's tools run.
    Profiler,
}

impl Category {
    /// The name used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Installation => "installation",
            Category::DevelUnpack => "devel-unpack",
            Category::Packages => "packages",
            Category::Versions => "versions",
            Category::Record => "record",
            Category::Libraries => "libraries",
            Category::Preload => "preload",
            Category::Needed => "needed",
            Category::Scripts => "scripts",
            Category::Tools => "tools",
            Category::Devel => "devel",
            Category::Profiler => "profiler",
        }
    }
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It holds.
    Passed,
    /// It holds on this machine but would not on another (a library taken
    /// from the host system); the reason says what it relies on.
    Warned,
    /// It does not hold here; the reason says why and what to do.
    Failed,
    /// It was not checked: it does not apply to this installation, or the
    /// file is not loadable by design; the reason says which.
    Skipped,
}

impl Outcome {
    /// The word that starts a text line: `PASS`, `WARN`, `SKIP`, `FAIL`.
    pub fn mark(self) -> &'static str {
        match self {
            Outcome::Passed => "PASS",
            Outcome::Warned => "WARN",
            Outcome::Failed => "FAIL",
            Outcome::Skipped => "SKIP",
        }
    }
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What it is about.
    pub category: Category,
    /// What was checked (a distribution, a library path, a script name).
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it ended so: what was found when it passed, what it relies on
    /// when it warned, why it was not checked when skipped, the cause and
    /// what to do when it failed.
    pub reason: String,
}

impl Check {
    /// A check that holds.
    pub fn passed(category: Category, name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Passed, reason)
    }

    /// A check that holds here only, for `reason`.
    pub fn warned(category: Category, name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Warned, reason)
    }

    /// A check that fails with `reason` as the cause.
    pub fn failed(category: Category, name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Failed, reason)
    }

    /// A check that was not made, for `reason`.
    pub fn skipped(category: Category, name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Skipped, reason)
    }

    /// Passed when `problems` is empty, else failed listing them.
    pub fn from_problems(
        category: Category,
        name: impl Into<String>,
        ok_detail: impl Into<String>,
        problems: &[String],
    ) -> Self {
        if problems.is_empty() {
            Self::passed(category, name, ok_detail)
        } else {
            Self::failed(category, name, summarize(problems))
        }
    }

    /// A check that ended with `outcome`.
    pub fn new(
        category: Category,
        name: impl Into<String>,
        outcome: Outcome,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            category,
            name: name.into(),
            outcome,
            reason: reason.into(),
        }
    }
}

impl Check {
    /// `MARK category: name (reason)` and a newline; with a width, the
    /// line is wrapped at spaces and continued indented under the name.
    fn write_line(&self, out: &mut String, style: TextStyle) {
        let mut line = format!("{}: {}", self.category.as_str(), self.name);
        if !self.reason.is_empty() {
            let _ = write!(line, " ({})", self.reason);
        }
        let mark = self.outcome.mark();
        let _ = write!(out, "{} ", style.paint(mark, self.outcome.colour()));
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

/// How the text report is drawn: plain for pipes and files; on a terminal
/// with coloured marks and long reasons wrapped to its width.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStyle {
    /// ANSI colour on the marks and the totals.
    pub colour: bool,
    /// Wrap lines at this many columns.
    pub width: Option<usize>,
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

impl Outcome {
    /// The SGR colour of the mark: green, yellow, dim, red.
    fn colour(self) -> &'static str {
        match self {
            Outcome::Passed => "32",
            Outcome::Warned => "33",
            Outcome::Skipped => "2",
            Outcome::Failed => "1;31",
        }
    }
}

/// What was tested, for the header of the report: the facts a maintainer
/// asks for first when a report is pasted into a bug.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Environment {
    /// Operating system, machine and C library (`Linux x86_64, glibc 2.36`).
    pub platform: String,
    /// The interpreter checked with and its version, or why it did not run.
    pub python: String,
    /// Which installer installed rocm-sdk-core (its `INSTALLER` file).
    pub installer: Option<String>,
    /// Every installed ROCm distribution as `name version`.
    pub distributions: Vec<String>,
    /// The GPU targets: built for, detected on this machine, selected.
    pub gpu_targets: Option<String>,
}

/// At most ten problems joined with `; `, then how many more there are.
pub(crate) fn summarize(problems: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = problems
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if problems.len() > SHOWN {
        let _ = write!(text, "; and {} more", problems.len() - SHOWN);
    }
    text
}

/// The schema of [`SelfTestReport::to_json`].
pub const REPORT_SCHEMA: u32 = 1;

/// Everything `rocm-sdk test` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTestReport {
    /// The site-packages checked.
    pub site_packages: PathBuf,
    /// The version of rocm-sdk-core's document, when readable.
    pub version: Option<String>,
    /// What was tested (the header).
    pub environment: Environment,
    /// Every check, in the order they ran.
    pub checks: Vec<Check>,
}

impl SelfTestReport {
    /// How many checks hold.
    pub fn passed(&self) -> usize {
        self.count(Outcome::Passed)
    }

    /// How many checks hold here only.
    pub fn warned(&self) -> usize {
        self.count(Outcome::Warned)
    }

    /// How many checks fail.
    pub fn failed(&self) -> usize {
        self.count(Outcome::Failed)
    }

    /// How many checks were not made.
    pub fn skipped(&self) -> usize {
        self.count(Outcome::Skipped)
    }

    /// True when no check failed (warnings and skips do not fail a run).
    pub fn is_ok(&self) -> bool {
        self.failed() == 0
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.checks.iter().filter(|c| c.outcome == outcome).count()
    }

    /// The plain report: see [`SelfTestReport::to_text_styled`].
    pub fn to_text(&self) -> String {
        self.to_text_styled(TextStyle::default())
    }

    /// The header (what was tested), one line per check
    /// (`PASS`/`WARN`/`SKIP`/`FAIL`, category, name, reason), the failed
    /// checks named again at the end, `N warned, N skipped` when there are
    /// any, then the final line `N passed, N failed`.
    pub fn to_text_styled(&self, style: TextStyle) -> String {
        let mut out = String::new();
        self.write_header(&mut out, style);
        out.push('\n');
        for check in &self.checks {
            check.write_line(&mut out, style);
        }
        self.write_totals(&mut out, style);
        out
    }

    /// `label: value` lines a maintainer reads first.
    fn write_header(&self, out: &mut String, style: TextStyle) {
        let env = &self.environment;
        let none = || "none found".to_owned();
        let mut rows = vec![
            (
                "rocm",
                self.version.clone().unwrap_or_else(|| "unknown".to_owned()),
            ),
            ("platform", env.platform.clone()),
            ("python", env.python.clone()),
            (
                "installer",
                env.installer
                    .clone()
                    .unwrap_or_else(|| "unknown (no INSTALLER file)".to_owned()),
            ),
            ("site-packages", self.site_packages.display().to_string()),
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
    fn write_totals(&self, out: &mut String, style: TextStyle) {
        let failed: Vec<&Check> = self
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
        if self.warned() > 0 {
            others.push(format!("{} warned", self.warned()));
        }
        if self.skipped() > 0 {
            others.push(format!("{} skipped", self.skipped()));
        }
        if !others.is_empty() {
            let _ = writeln!(out, "{}", others.join(", "));
        }
        let verdict = format!("{} passed, {} failed", self.passed(), self.failed());
        let colour = if self.is_ok() { "1;32" } else { "1;31" };
        let _ = writeln!(out, "{}", style.paint(&verdict, colour));
    }

    /// What `rocm-sdk test -q` prints: nothing when no check failed, else
    /// the failed checks' lines and the final `N passed, N failed` line.
    pub fn to_quiet_text(&self) -> String {
        if self.is_ok() {
            return String::new();
        }
        let mut out = String::new();
        for check in self.checks.iter().filter(|c| c.outcome == Outcome::Failed) {
            check.write_line(&mut out, TextStyle::default());
        }
        let _ = writeln!(out, "{} passed, {} failed", self.passed(), self.failed());
        out
    }

    /// The report as JSON (`docs/formats.md`): `schema`, `site_packages`,
    /// `version`, `checks` (each with `category`, `name`, `outcome`,
    /// `reason`), and the counts `passed`, `warned`, `skipped`, `failed`.
    pub fn to_json(&self) -> String {
        // Keys are inserted in sorted order, so the output is the same
        // whether or not `serde_json` keeps insertion order.
        let value = serde_json::json!({
            "checks": self.checks,
            "environment": self.environment,
            "failed": self.failed(),
            "passed": self.passed(),
            "schema": REPORT_SCHEMA,
            "site_packages": self.site_packages,
            "skipped": self.skipped(),
            "version": self.version,
            "warned": self.warned(),
        });
        let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialise");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
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
        insta::assert_snapshot!(report().to_text(), @r"
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
        let text = report.to_text_styled(TextStyle {
            colour: true,
            width: Some(60),
        });
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
    fn json_has_outcome_and_reason_per_check_and_totals() {
        insta::assert_snapshot!(report().to_json(), @r#"
            {
              "checks": [
                {
                  "category": "record",
                  "name": "rocm-sdk-core 7.1.0",
                  "outcome": "passed",
                  "reason": "3 files"
                },
                {
                  "category": "needed",
                  "name": "_rocm_sdk_core/lib/libx.so",
                  "outcome": "warned",
                  "reason": "NEEDED libtinfo.so.6 comes from the host system"
                },
                {
                  "category": "libraries",
                  "name": "_rocm_sdk_core/lib/libx.so",
                  "outcome": "failed",
                  "reason": "cannot open"
                },
                {
                  "category": "profiler",
                  "name": "rocprof-sys-run",
                  "outcome": "skipped",
                  "reason": "not installed"
                }
              ],
              "environment": {
                "distributions": [
                  "rocm 7.1.0",
                  "rocm-sdk-core 7.1.0"
                ],
                "gpu_targets": "built for gfx942, gfx1100; detected none; selected gfx942 (environment)",
                "installer": "uv",
                "platform": "Linux x86_64, glibc 2.36",
                "python": "/venv/bin/python (CPython 3.12.3)"
              },
              "failed": 1,
              "passed": 1,
              "schema": 1,
              "site_packages": "/sp",
              "skipped": 1,
              "version": "7.1.0",
              "warned": 1
            }
            "#);
    }

    #[test]
    fn warnings_and_skips_do_not_fail_a_run() {
        let mut report = report();
        report.checks.retain(|c| c.outcome != Outcome::Failed);
        assert!(report.is_ok());
        assert!(report.to_text().ends_with("1 passed, 0 failed\n"));
    }

    #[test]
    fn quiet_text_is_empty_on_success_and_only_failures_otherwise() {
        insta::assert_snapshot!(report().to_quiet_text(), @r"
        FAIL libraries: _rocm_sdk_core/lib/libx.so (cannot open)
        1 passed, 1 failed
        ");
        let mut healthy = report();
        healthy.checks.retain(|c| c.outcome != Outcome::Failed);
        assert_eq!(healthy.to_quiet_text(), "");
    }

    #[test]
    fn long_problem_lists_are_cut() {
        let problems: Vec<String> = (0..13).map(|i| format!("p{i}")).collect();
        let text = summarize(&problems);
        assert!(text.starts_with("p0; p1"), "{text}");
        assert!(text.ends_with("p9; and 3 more"), "{text}");
    }
}
