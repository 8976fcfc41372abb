//! The crates keep to their layers (docs/architecture.md, "Layers"; docs/
//! using-the-crates.md), read from what `cargo tree -e normal` resolves
//! for each crate alone, so a feature another crate of the workspace
//! enables does not count:
//!
//! - the library crates take options values, not command lines: no library
//!   but `cli-output` (the binaries' terminal helper) builds clap, directly
//!   or not, and `pipeline` draws no terminal;
//! - the mechanism crates know ELF and launchers, not what a ROCm package
//!   is: `elf-surgery`, `trampoline-gen` and `link-check` build neither
//!   the model (`dist-info`) nor serde;
//! - no library builds through a second cargo: whatever links `pipeline`
//!   (or any other library crate) builds with one `cargo build` and no
//!   cross linker (docs/pipeline.md, "The native rocm-sdk"). Binaries may
//!   (`therock-package` builds the `rocm-sdk` it embeds).

mod common;

use std::path::{Path, PathBuf};

use common::{has_kind, is_kind, workspace};

/// The library crate that may build clap: the binaries' man pages and
/// errors are its `clap` feature.
const TERMINAL: &str = "cli-output";

/// The standard output of `cargo ARGS --offline` on the workspace.
fn cargo(args: &[&str]) -> String {
    common::cargo("Cargo.toml", args)
}

/// The package names of the normal-dependency tree of `package`.
fn normal_dependencies(package: &str) -> Vec<String> {
    cargo(&[
        "tree", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package,
    ])
    .lines()
    .filter_map(|line| line.split_whitespace().next())
    .map(str::to_owned)
    .collect()
}

/// Every crate of `crates/` with a library (`src/lib.rs`), by its package
/// name (the directory's name).
fn library_crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("src/lib.rs").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn is_clap(package: &str) -> bool {
    package == "clap" || package.starts_with("clap_")
}

#[test]
fn no_library_but_cli_output_builds_clap() {
    let libraries = library_crates();
    assert!(
        libraries.iter().any(|l| l == "pipeline") && libraries.iter().any(|l| l == TERMINAL),
        "the listing finds the library crates: {libraries:?}"
    );
    let mut offenders = Vec::new();
    for library in libraries.iter().filter(|l| *l != TERMINAL) {
        let dependencies = normal_dependencies(library);
        assert_eq!(
            dependencies.first(),
            Some(library),
            "the tree starts at the package itself"
        );
        let clap: Vec<&String> = dependencies.iter().filter(|d| is_clap(d)).collect();
        if !clap.is_empty() {
            offenders.push(format!("{library} builds {clap:?}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "{offenders:?}: a library takes an options value; the flags live in the binaries \
         (docs/using-the-crates.md)"
    );
}

#[test]
fn the_check_sees_clap_where_it_is() {
    let dependencies = normal_dependencies(TERMINAL);
    assert!(dependencies.iter().any(|d| is_clap(d)), "{dependencies:?}");
}

#[test]
fn pipeline_draws_no_terminal() {
    // The progress display is the binary's (a `BuildProgress`): no
    // progress bar, terminal layer or log subscriber in the library.
    let dependencies = normal_dependencies("pipeline");
    let drawing: Vec<&String> = dependencies
        .iter()
        .filter(|d| ["indicatif", "console", "tracing-subscriber", TERMINAL].contains(&d.as_str()))
        .collect();
    assert!(drawing.is_empty(), "pipeline builds {drawing:?}");
}

/// The crates of the mechanism layer that must stay free of the model.
const MECHANISMS: &[&str] = &["elf-surgery", "trampoline-gen", "link-check"];

/// Packages none of them may build: the model, and serde in any part.
fn forbidden(package: &str) -> bool {
    package == "dist-info" || package == "serde" || package.starts_with("serde_")
}

#[test]
fn elf_surgery_trampoline_gen_and_link_check_build_neither_the_model_nor_serde() {
    for package in MECHANISMS {
        let dependencies = normal_dependencies(package);
        assert_eq!(
            dependencies.first().map(String::as_str),
            Some(*package),
            "the tree starts at the package itself"
        );
        assert!(
            dependencies.iter().any(|d| d == "fs-helpers"),
            "{package}: the tree lists its dependencies"
        );
        let bad: Vec<&String> = dependencies.iter().filter(|d| forbidden(d)).collect();
        assert!(
            bad.is_empty(),
            "{package} depends (directly or not) on {bad:?}; keep the mechanism free of \
             the ROCm model and of serde (docs/architecture.md, \"Layers\")"
        );
    }
}

#[test]
fn the_check_sees_serde_where_it_is() {
    // link-check with its `serde` feature, as release-check enables it.
    let dependencies = normal_dependencies("release-check");
    assert!(
        dependencies.iter().any(|d| forbidden(d)),
        "{dependencies:?}"
    );
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
    let metadata: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--no-deps"])).unwrap();
    let mut offenders = Vec::new();
    let mut libraries = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if !has_kind(package, "lib") {
            continue;
        }
        libraries.push(name.to_owned());
        let targets = package["targets"].as_array().unwrap();
        for target in targets.iter().filter(|t| is_kind(t, "custom-build")) {
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
    let script = workspace().join("crates/therock-package/build.rs");
    assert!(starts_cargo(&std::fs::read_to_string(script).unwrap()));
}
