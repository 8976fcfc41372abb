//! The mechanism crates know ELF and launchers, not what a ROCm package
//! is: `elf-surgery`, `trampoline-gen` and `link-check` build neither the
//! model (`dist-info`) nor serde (docs/architecture.md, "Layers"). This
//! reads what `cargo tree -e normal` resolves for each of them alone (so a
//! feature another crate of the workspace enables does not count) and
//! fails on a new dependency, direct or not, on either.

use std::path::Path;
use std::process::Command;

/// The crates of the mechanism layer that must stay free of the model.
const MECHANISMS: &[&str] = &["elf-surgery", "trampoline-gen", "link-check"];

/// Packages none of them may build: the model, and serde in any part.
fn forbidden(package: &str) -> bool {
    package == "dist-info" || package == "serde" || package.starts_with("serde_")
}

/// The package names of the normal-dependency tree of `package`.
fn normal_dependencies(package: &str) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "-p", package])
        .arg("--manifest-path")
        .arg(manifest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
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
