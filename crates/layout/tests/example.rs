//! Plans of the built-in example, pinned with insta snapshots.

use std::sync::OnceLock;

use artifacts::ArtifactDir;
use fixtures::{Example, ExampleMode, Layout};
use layout::{Action, PlanInput, plan};

fn example() -> &'static Example {
    static EXAMPLE: OnceLock<(tempfile::TempDir, Example)> = OnceLock::new();
    &EXAMPLE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let example = fixtures::generate(dir.path()).unwrap();
            (dir, example)
        })
        .1
}

fn plan_json(mode: ExampleMode, layout: Layout, tag: &str) -> String {
    let dir = ArtifactDir::open(&example().artifact_dir(mode, layout)).unwrap();
    let input = PlanInput::new(&dir, fixtures::VERSION, tag);
    plan(&input).unwrap().to_json()
}

/// Sizes of compiled files depend on the host compiler; the plan's
/// decisions must not.
fn redact_sizes(json: &str) -> String {
    json.lines()
        .map(|line| match line.find("\"size\": ") {
            Some(at) => format!("{}\"size\": \"[size]\",", &line[..at]),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn kpack_plan() {
    insta::assert_snapshot!(redact_sizes(&plan_json(
        ExampleMode::Kpack,
        Layout::Tree,
        "linux_x86_64"
    )));
}

#[test]
fn legacy_plan() {
    insta::assert_snapshot!(redact_sizes(&plan_json(
        ExampleMode::Legacy,
        Layout::Tree,
        "linux_x86_64"
    )));
}

#[test]
fn archives_plan_like_trees() {
    for mode in ExampleMode::ALL {
        let tree = plan_json(mode, Layout::Tree, "linux_x86_64");
        for layout in [Layout::TarZst, Layout::TarXz] {
            assert_eq!(
                tree,
                plan_json(mode, layout, "linux_x86_64"),
                "{mode:?} {layout:?}"
            );
        }
    }
}

#[test]
fn windows_plans_have_no_launchers() {
    let dir = ArtifactDir::open(&example().artifact_dir(ExampleMode::Kpack, Layout::Tree)).unwrap();
    let plan = plan(&PlanInput::new(&dir, fixtures::VERSION, "win_amd64")).unwrap();
    assert!(
        plan.packages
            .iter()
            .flat_map(|p| &p.files)
            .all(|f| !matches!(f.action, Action::Launcher { .. }))
    );
}
