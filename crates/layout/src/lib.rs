//! The packaging planner: where every artifact file goes (package,
//! destination, action), decided before anything is written
//! (docs/behaviour.md#packages through #selector, and #build-checks).
//!
//! Given an [`artifacts::ArtifactDir`] and the [`dist_info`] model, [`plan`]
//! decides for every file which package receives it and how: copy, patch
//! the search path, write a launcher, record a soname alias, link into
//! devel, or drop it with a reason. The plan is data: nothing is written,
//! and the only reads are the artifact indexes and each ELF file's headers.
//!
//! ```no_run
//! use artifacts::ArtifactDir;
//! use layout::{PlanInput, plan};
//! let dir = ArtifactDir::open("build/artifacts".as_ref())?;
//! let input = PlanInput::new(&dir, "7.1.0".parse()?, "linux_x86_64".parse()?);
//! let plan = plan(&input)?;
//! println!("{}", plan.to_json());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod devel;
mod dist_targets;
mod error;
mod installed;
mod libraries;
mod plan;
mod planner;
pub mod rules;
mod runtime;
mod runtime_aliases;
mod search_path;
mod selectors;
mod survey;
mod windows;

pub use error::{
    CaseSpelling, CheckError, Error, LongNameProblem, ModelError, SharedPathProblem,
    WindowsNameProblem,
};
pub use plan::{
    Action, AliasReason, DevelEntry, Dropped, KeptSearchPath, LinkReason, PLAN_SCHEMA, PackagePlan,
    Plan, PlannedFile, RuntimeAlias, SearchPathPatch, SelectorPlan, SonameAlias, SourceRef,
    windows_executable,
};
pub use planner::{ExtraFile, PlanInput, plan};
pub use search_path::{core_dependency_dirs, search_path_entries};
pub use selectors::{SelectorBasis, plan_selectors};
pub use survey::{AbsoluteSearchPath, FileClass, SourceSurvey};
