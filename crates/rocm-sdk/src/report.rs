//! The result of `rocm-sdk test`: a list of checks, rendered as text (one
//! line per check, then `N passed, N failed`) or as JSON.

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
    /// Every `DT_NEEDED` resolves through the file's own search path.
    Needed,
    /// Console scripts exist and reach their tools.
    Scripts,
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
            Category::Needed => "needed",
            Category::Scripts => "scripts",
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
    /// It does not; the detail says why and what to do.
    Failed,
    /// It does not apply to this installation (counted in neither total).
    Skipped,
    /// It works here but deserves attention; the detail says why and what
    /// to do (counted in neither total).
    Warned,
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
    /// What was found: counts when it passed, the cause when it failed.
    pub detail: String,
}

impl Check {
    /// A check that holds.
    pub fn passed(category: Category, name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Passed, detail)
    }

    /// A check that fails with `detail` as the cause.
    pub fn failed(category: Category, name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Failed, detail)
    }

    /// A check that works here but deserves attention.
    pub fn warned(category: Category, name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Warned, detail)
    }

    /// A check that does not apply.
    pub fn skipped(category: Category, name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(category, name, Outcome::Skipped, detail)
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

    fn new(
        category: Category,
        name: impl Into<String>,
        outcome: Outcome,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            category,
            name: name.into(),
            outcome,
            detail: detail.into(),
        }
    }
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

/// Everything `rocm-sdk test` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The site-packages checked.
    pub site_packages: PathBuf,
    /// The version of rocm-sdk-core's document, when readable.
    pub version: Option<String>,
    /// Every check, in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// How many checks hold.
    pub fn passed(&self) -> usize {
        self.count(Outcome::Passed)
    }

    /// How many checks fail.
    pub fn failed(&self) -> usize {
        self.count(Outcome::Failed)
    }

    /// How many checks did not apply.
    pub fn skipped(&self) -> usize {
        self.count(Outcome::Skipped)
    }

    /// How many checks warned.
    pub fn warned(&self) -> usize {
        self.count(Outcome::Warned)
    }

    /// True when no check failed.
    pub fn is_ok(&self) -> bool {
        self.failed() == 0
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.checks.iter().filter(|c| c.outcome == outcome).count()
    }

    /// One line per check (`PASS`/`FAIL`/`SKIP`, category, name, detail),
    /// then the final line `N passed, N failed`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for check in &self.checks {
            let mark = match check.outcome {
                Outcome::Passed => "PASS",
                Outcome::Failed => "FAIL",
                Outcome::Skipped => "SKIP",
                Outcome::Warned => "WARN",
            };
            let _ = write!(out, "{mark} {}: {}", check.category.as_str(), check.name);
            if !check.detail.is_empty() {
                let _ = write!(out, " ({})", check.detail);
            }
            out.push('\n');
        }
        if self.skipped() > 0 {
            let _ = writeln!(out, "{} skipped", self.skipped());
        }
        if self.warned() > 0 {
            let _ = writeln!(out, "{} warned", self.warned());
        }
        let _ = writeln!(out, "{} passed, {} failed", self.passed(), self.failed());
        out
    }

    /// The report as JSON: `site_packages`, `version`, `checks` (each with
    /// `category`, `name`, `outcome`, `detail`), `passed`, `failed`,
    /// `skipped`.
    pub fn to_json(&self) -> String {
        let mut value = serde_json::to_value(self).expect("the report serialises");
        value["passed"] = self.passed().into();
        value["failed"] = self.failed().into();
        value["skipped"] = self.skipped().into();
        value["warned"] = self.warned().into();
        let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialise");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            site_packages: PathBuf::from("/sp"),
            version: Some("7.1.0".to_owned()),
            checks: vec![
                Check::passed(Category::Record, "rocm-sdk-core 7.1.0", "3 files"),
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
        let text = report().to_text();
        assert_eq!(
            text,
            "PASS record: rocm-sdk-core 7.1.0 (3 files)\n\
             FAIL libraries: _rocm_sdk_core/lib/libx.so (cannot open)\n\
             SKIP profiler: rocprof-sys-run (not installed)\n\
             1 skipped\n\
             1 passed, 1 failed\n"
        );
    }

    #[test]
    fn json_has_checks_and_totals() {
        let value: serde_json::Value = serde_json::from_str(&report().to_json()).unwrap();
        assert_eq!(value["passed"], 1);
        assert_eq!(value["failed"], 1);
        assert_eq!(value["skipped"], 1);
        assert_eq!(value["checks"][1]["category"], "libraries");
        assert_eq!(value["checks"][1]["outcome"], "failed");
        assert_eq!(value["version"], "7.1.0");
    }

    #[test]
    fn warnings_are_marked_and_counted_apart() {
        let mut report = report();
        report.checks.push(Check::warned(
            Category::Installation,
            "rocm target selection",
            "reinstall",
        ));
        let text = report.to_text();
        assert!(
            text.ends_with(
                "WARN installation: rocm target selection (reinstall)\n\
                 1 skipped\n\
                 1 warned\n\
                 1 passed, 1 failed\n"
            ),
            "{text}"
        );
        let value: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(value["warned"], 1);
        assert_eq!(value["checks"][3]["outcome"], "warned");
        assert!(!report.is_ok());
    }

    #[test]
    fn long_problem_lists_are_cut() {
        let problems: Vec<String> = (0..13).map(|i| format!("p{i}")).collect();
        let text = summarize(&problems);
        assert!(text.starts_with("p0; p1"), "{text}");
        assert!(text.ends_with("p9; and 3 more"), "{text}");
    }
}
