//! The dev profile optimises dependencies (`"*"`, for the codecs) but not
//! the proc macros and what only they use: those run once per build, and
//! optimising them was most of a test build's compile time on two cores
//! (docs/testing.md, "Build time"). A new proc macro in a lock file
//! without its `opt-level = 0` entry fails here, naming it. The example
//! program outside the workspace keeps the same profile, so CI's build of
//! it reuses what the tests compiled.

mod common;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::process::Command;

use common::{cargo, has_kind, workspace};

/// The platform the proc macros run on: rustc's host.
fn host() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_owned()
}

/// The manifests whose dev profile is checked: the workspace's and the
/// example program's.
const MANIFESTS: [&str; 2] = ["Cargo.toml", "examples/package-a-release/Cargo.toml"];

/// The registry packages of `manifest`'s build that only the host builds:
/// proc macros and every package reached from its members solely through
/// them, on this platform.
fn host_only_packages(manifest: &str) -> BTreeSet<String> {
    let host = host();
    let metadata: serde_json::Value = serde_json::from_str(&cargo(
        manifest,
        &[
            "metadata",
            "--format-version",
            "1",
            "--filter-platform",
            &host,
        ],
    ))
    .unwrap();
    let ids = |values: &serde_json::Value| -> Vec<String> {
        values
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let packages = metadata["packages"].as_array().unwrap();
    let name_of: HashMap<&str, &str> = packages
        .iter()
        .filter(|p| !p["source"].is_null())
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let proc_macros: HashSet<String> = packages
        .iter()
        .filter(|p| has_kind(p, "proc-macro"))
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    let deps: HashMap<String, Vec<String>> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            let deps = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["pkg"].as_str().unwrap().to_owned())
                .collect();
            (node["id"].as_str().unwrap().to_owned(), deps)
        })
        .collect();
    // Every package reachable from `from`, stepping into proc macros or not.
    let reach = |from: Vec<String>, into_proc_macros: bool| {
        let mut seen = HashSet::new();
        let mut stack = from;
        while let Some(id) = stack.pop() {
            if (!into_proc_macros && proc_macros.contains(&id)) || seen.contains(&id) {
                continue;
            }
            stack.extend(deps.get(&id).into_iter().flatten().cloned());
            seen.insert(id);
        }
        seen
    };
    let without_macros = reach(ids(&metadata["workspace_members"]), false);
    reach(proc_macros.iter().cloned().collect(), true)
        .difference(&without_macros)
        .filter_map(|id| name_of.get(id.as_str()).map(|&name| name.to_owned()))
        .collect()
}

/// The packages `[profile.dev.package]` of `manifest` builds at
/// `opt-level = 0`, but for the library crates (path dependencies of the
/// example program).
fn unoptimised_in_dev(manifest: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(workspace().join(manifest)).unwrap();
    let table: toml::Table = text.parse().unwrap();
    table["profile"]["dev"]["package"]
        .as_table()
        .unwrap_or_else(|| panic!("{manifest} has no [profile.dev.package]"))
        .iter()
        .filter(|(_, settings)| settings.get("opt-level") == Some(&toml::Value::Integer(0)))
        .map(|(name, _)| name.clone())
        .filter(|name| !workspace().join("crates").join(name).is_dir())
        .collect()
}

#[test]
fn proc_macros_and_what_only_they_use_are_not_optimised_in_dev() {
    for manifest in MANIFESTS {
        let host_only = host_only_packages(manifest);
        assert!(
            host_only.contains("syn") && host_only.contains("serde_derive"),
            "the walk finds the proc macros of {manifest}: {host_only:?}"
        );
        let listed = unoptimised_in_dev(manifest);
        let missing: Vec<&String> = host_only.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "add `NAME = {{ opt-level = 0 }}` under [profile.dev.package] of {manifest} for: \
             {missing:?}"
        );
        // An entry for a package the build no longer has is dead weight
        // (cargo warns), and one the target also uses slows the tests.
        let stale: Vec<&String> = listed.difference(&host_only).collect();
        assert!(
            stale.is_empty(),
            "[profile.dev.package] of {manifest} names packages that are not proc macros or \
             only theirs: {stale:?}"
        );
    }
}
