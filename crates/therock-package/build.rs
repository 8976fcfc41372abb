//! Builds the native `rocm-sdk` that ships inside `rocm-sdk-core` and embeds
//! it, so `therock-package` is complete after `cargo build` or
//! `cargo install` alone (see docs/pipeline.md, "The native rocm-sdk").
//!
//! The binary must run on glibc 2.28 and newer hosts (docs/behaviour.md#native-binaries), and a
//! dynamic glibc link made on a newer host needs newer symbols, so it is
//! linked statically (`crt-static`). Target-only rustflags need an explicit
//! `--target`, hence a nested cargo with its own target directory.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "x86_64-unknown-linux-gnu";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir.join("../..");
    // Any workspace crate may end up in `rocm-sdk`; when nothing it uses
    // changed, the nested build is an up-to-date no-op.
    for input in ["crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let binary = build_rocm_sdk(&workspace, &shared_target_dir(&out_dir));
    let embedded = out_dir.join("rocm-sdk");
    std::fs::copy(&binary, &embedded).unwrap_or_else(|e| {
        panic!(
            "cannot copy {} to {}: {e}",
            binary.display(),
            embedded.display()
        )
    });
}

/// `target/native-rocm-sdk` beside the outer build's profile directories,
/// so `cargo build`, `cargo test` and `cargo clippy` share one inner build.
fn shared_target_dir(out_dir: &Path) -> PathBuf {
    // OUT_DIR is `<target>/<profile>/build/<pkg>-<hash>/out`.
    out_dir
        .ancestors()
        .nth(4)
        .map_or_else(|| out_dir.join("native"), |t| t.join("native-rocm-sdk"))
}

/// Static glibc, and no host paths in the binary (the core wheel must be the
/// same bytes on every build host).
fn rustflags(workspace: &Path) -> String {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut flags = format!(
        "-C target-feature=+crt-static --remap-path-prefix={}=/rocm",
        workspace.display()
    );
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home {
        flags.push_str(" --remap-path-prefix=");
        flags.push_str(&home.display().to_string());
        flags.push_str("=/cargo");
    }
    flags
}

fn build_rocm_sdk(workspace: &Path, target_dir: &Path) -> PathBuf {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args([
            "build",
            "--release",
            "--offline",
            "-p",
            "rocm-sdk",
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .env("RUSTFLAGS", rustflags(workspace))
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET");
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the native rocm-sdk: {e}"));
    assert!(
        status.success(),
        "building the native rocm-sdk (static, {TARGET}) failed; see the output above"
    );
    target_dir.join(TARGET).join("release").join("rocm-sdk")
}
