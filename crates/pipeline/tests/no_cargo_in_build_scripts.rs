//! No library of the workspace builds through a second cargo: whatever
//! links `pipeline` (or any other library crate) must build with one
//! `cargo build` and no cross linker (docs/pipeline.md, "The native
//! rocm-sdk"). Binaries may (`therock-package` builds the `rocm-sdk` it
//! embeds).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `cargo metadata` of the workspace, without dependencies.
fn workspace_metadata() -> Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The Rust files of a build script: its file, and the files of its own
/// directory when it is a `build/main.rs`.
fn script_sources(script: &Path) -> Vec<PathBuf> {
    let dir = script.parent().unwrap();
    if dir.file_name().is_some_and(|n| n == "build") {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        files
    } else {
        vec![script.to_owned()]
    }
}

/// A build script finds the cargo running it through `CARGO`; one that
/// names it, or runs `cargo` by name, starts a second cargo.
fn starts_cargo(source: &str) -> bool {
    source.contains("\"CARGO\"") || source.contains("Command::new(\"cargo\")")
}

#[test]
fn no_library_crate_has_a_build_script_that_runs_cargo() {
    let metadata = workspace_metadata();
    let mut offenders = Vec::new();
    let mut libraries = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let targets = package["targets"].as_array().unwrap();
        let has_kind = |kind: &str| {
            targets.iter().any(|t| {
                t["kind"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k.as_str() == Some(kind))
            })
        };
        if !has_kind("lib") {
            continue;
        }
        libraries.push(name.to_owned());
        for target in targets {
            if !target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "custom-build")
            {
                continue;
            }
            let script = PathBuf::from(target["src_path"].as_str().unwrap());
            for file in script_sources(&script) {
                if starts_cargo(&std::fs::read_to_string(&file).unwrap()) {
                    offenders.push(format!("{name}: {}", file.display()));
                }
            }
        }
    }
    assert!(libraries.iter().any(|n| n == "pipeline"), "{libraries:?}");
    assert!(
        offenders.is_empty(),
        "build scripts that run cargo: {offenders:?}"
    );
}

#[test]
fn the_binary_build_script_is_recognised_as_running_cargo() {
    // The check above can fail: therock-package's script (a binary's,
    // allowed) is one it would flag.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../therock-package/build.rs");
    assert!(starts_cargo(&std::fs::read_to_string(script).unwrap()));
}
