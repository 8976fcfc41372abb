//! Runs every JSON test vector in `tests/vectors/` (format: docs/formats.md).
//! The `rocm` sdist's Python tests run the same files, so the Rust and
//! Python selectors cannot drift.
//!
//! `DIST_INFO_BLESS=1 cargo test -p dist-info --test vectors` rewrites the
//! `expected` part of every vector from the current implementation; review
//! the diff before committing it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use dist_info::families::{Family, FamilyError, FamilyTable};
use dist_info::package::{Mode, PackageKind};
use dist_info::selector::{Selector, SelectorError, SelectorInput};
use fs_helpers::error_chain::Chain;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    description: String,
    build: Build,
    install: Install,
    expected: Value,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Build {
    mode: Mode,
    version: String,
    packages: Vec<PackageKind>,
    on_disk_targets: Vec<String>,
    linux_families: Option<String>,
    windows_families: Option<String>,
    restrict_to_family: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Install {
    target_env: Option<String>,
    offload_arch: Option<String>,
}

fn build_error_kind(e: &SelectorError) -> &'static str {
    match e {
        SelectorError::Family { .. } => "unknown-family",
        SelectorError::RestrictNotAvailable { .. } => "restrict-not-available",
        SelectorError::RestrictInKpackMode => "restrict-in-kpack-mode",
    }
}

/// A vector's family list as the selector takes it (the vector holds
/// the text a command line gives).
fn families(text: Option<&String>) -> Result<Option<Vec<Family>>, FamilyError> {
    text.map(|t| Family::parse_list(t)).transpose()
}

/// What the implementation produces for a vector, in the `expected` shape.
fn evaluate(v: &Vector) -> Value {
    let lists = families(v.build.linux_families.as_ref())
        .and_then(|linux| Ok((linux, families(v.build.windows_families.as_ref())?)));
    let (linux_families, windows_families) = match lists {
        Ok(lists) => lists,
        Err(e) => {
            return json!({
                "error": { "stage": "build", "kind": "unknown-family", "message": Chain(&e).to_string() }
            });
        }
    };
    let input = SelectorInput {
        packages: v.build.packages.iter().copied().collect::<BTreeSet<_>>(),
        on_disk: v.build.on_disk_targets.clone(),
        linux_families,
        windows_families,
        restrict_to_family: v.build.restrict_to_family.clone(),
    };
    let version = v
        .build
        .version
        .parse()
        .expect("vector versions are PEP 440");
    let selector = match Selector::plan(v.build.mode, &version, &input, FamilyTable::builtin()) {
        Ok(s) => s,
        Err(e) => {
            return json!({
                "error": { "stage": "build", "kind": build_error_kind(&e), "message": Chain(&e).to_string() }
            });
        }
    };
    let selector_json = serde_json::to_value(&selector).unwrap();
    match selector.select_target(
        v.install.target_env.as_deref(),
        v.install.offload_arch.as_deref(),
    ) {
        Err(e) => json!({
            "selector": selector_json,
            "error": { "stage": "install", "kind": "target-not-available", "message": e.to_string() }
        }),
        Ok(selection) => {
            let metadata = selector.metadata(selection.as_ref());
            json!({
                "selector": selector_json,
                "selected_target": selection.as_ref().map(|s| s.target.clone()),
                "target_source": selection.as_ref().map(|s| s.source),
                "provides_extra": metadata.provides_extra(),
                "requires_dist": metadata.requires_dist(),
            })
        }
    }
}

fn vector_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn all_vectors() {
    let bless = std::env::var_os("DIST_INFO_BLESS").is_some();
    let files = vector_files();
    assert!(
        files.len() >= 20,
        "expected the full vector set, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path).unwrap();
        let mut vector: Vector = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a test vector: {e}", path.display()));
        let actual = evaluate(&vector);
        if bless {
            vector.expected = actual;
            let mut out = serde_json::to_string_pretty(&vector).unwrap();
            out.push('\n');
            fs::write(path, out).unwrap();
        } else if actual != vector.expected {
            failures.push(format!(
                "{}: {}\n  expected: {}\n  actual:   {}",
                path.display(),
                vector.description,
                vector.expected,
                actual
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} vector(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every vector is valid for the Python side too: the fields it reads exist
/// and a build error never comes with a selector.
#[test]
fn vectors_are_well_formed() {
    for path in vector_files() {
        let v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let expected = &v["expected"];
        let name = path.display();
        match (expected.get("selector"), expected.get("error")) {
            (None, Some(err)) => assert_eq!(err["stage"], "build", "{name}"),
            (Some(_), Some(err)) => assert_eq!(err["stage"], "install", "{name}"),
            (Some(_), None) => {
                for key in [
                    "selected_target",
                    "target_source",
                    "provides_extra",
                    "requires_dist",
                ] {
                    assert!(
                        expected.get(key).is_some(),
                        "{name}: expected.{key} missing"
                    );
                }
            }
            (None, None) => panic!("{name}: expected needs a selector or an error"),
        }
    }
}
