//! The result of `rocm-sdk test`: a list of checks, a typed value whose
//! serialisation is the `--json` document (schema in `docs/formats.md`);
//! `rocm-sdk` renders the text (one line per check, then `N passed, N
//! failed`).

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

/// What was tested, for the header of the report: the facts a maintainer
/// asks for first when a report is pasted into a bug.
///
/// Fields are in sorted order: the JSON keys are sorted (docs/formats.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Environment {
    /// Every installed ROCm distribution as `name version`.
    pub distributions: Vec<String>,
    /// The GPU targets: built for, detected on this machine, selected.
    pub gpu_targets: Option<String>,
    /// Which installer installed rocm-sdk-core (its `INSTALLER` file).
    pub installer: Option<String>,
    /// Operating system, machine and C library (`Linux x86_64, glibc 2.36`).
    pub platform: String,
    /// The interpreter checked with and its version, or why it did not run.
    pub python: String,
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

/// The `schema` of a serialised [`SelfTestReport`].
pub const REPORT_SCHEMA: u32 = 1;

/// Everything `rocm-sdk test` found.
///
/// Serialised, it is the `rocm-sdk test --json` document
/// (`docs/formats.md`): `checks`, `environment`, the counts `failed` and
/// `passed`, `schema` ([`REPORT_SCHEMA`]), `site_packages`, `skipped`,
/// `version`, `warned`, in that (sorted) order.
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
}

impl Serialize for SelfTestReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut out = serializer.serialize_struct("SelfTestReport", 9)?;
        out.serialize_field("checks", &self.checks)?;
        out.serialize_field("environment", &self.environment)?;
        out.serialize_field("failed", &self.failed())?;
        out.serialize_field("passed", &self.passed())?;
        out.serialize_field("schema", &REPORT_SCHEMA)?;
        out.serialize_field("site_packages", &self.site_packages)?;
        out.serialize_field("skipped", &self.skipped())?;
        out.serialize_field("version", &self.version)?;
        out.serialize_field("warned", &self.warned())?;
        out.end()
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
    fn json_has_outcome_and_reason_per_check_and_totals() {
        let mut json = serde_json::to_string_pretty(&report()).unwrap();
        json.push('\n');
        insta::assert_snapshot!(json, @r#"
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
        assert!(!report.is_ok());
        report.checks.retain(|c| c.outcome != Outcome::Failed);
        assert!(report.is_ok());
        assert_eq!((report.passed(), report.failed()), (1, 0));
    }

    #[test]
    fn long_problem_lists_are_cut() {
        let problems: Vec<String> = (0..13).map(|i| format!("p{i}")).collect();
        let text = summarize(&problems);
        assert!(text.starts_with("p0; p1"), "{text}");
        assert!(text.ends_with("p9; and 3 more"), "{text}");
    }
}
