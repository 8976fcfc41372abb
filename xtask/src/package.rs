//! The library crates as another project gets them: `cargo package` of
//! all of them together, and the example program outside the workspace
//! (docs/using-the-crates.md).

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

use crate::cmd::{root, run};

/// The example program outside the workspace.
const EXAMPLE_PROGRAM: &str = "examples/package-a-release";

/// The static `rocm-sdk` a dev build of `therock-package` builds for Linux
/// wheels (crates/therock-package/build.rs), below the target directory.
const NATIVE_ROCM_SDK: &str = "native-rocm-sdk/x86_64-unknown-linux-gnu/embedded-dev/rocm-sdk";

/// The library crates: the workspace's packages whose manifest says
/// `publish = true` (the binaries and the test crates say `false`), sorted.
pub(crate) fn libraries() -> Result<Vec<String>, String> {
    let crates = root().join("crates");
    let entries =
        fs::read_dir(&crates).map_err(|e| format!("cannot list {}: {e}", crates.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let manifest = entry
            .map_err(|e| format!("cannot list {}: {e}", crates.display()))?
            .path()
            .join("Cargo.toml");
        let Ok(text) = fs::read_to_string(&manifest) else {
            continue;
        };
        if !text.lines().any(|line| line.trim() == "publish = true") {
            continue;
        }
        let name = manifest_value(&text, "name")
            .ok_or_else(|| format!("{} names no package", manifest.display()))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The value of the first `key = "value"` line of a manifest.
fn manifest_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key && v.trim().starts_with('"'))
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// `cargo xtask package`: `cargo package` of every library crate in one
/// call (so they resolve to each other through Cargo's local registry),
/// then one check of all the packages built from their own files alone,
/// in one workspace that shares this one's target directory and profiles:
/// Cargo's own verification builds each package apart with its own
/// features and profile, minutes more on two cores.
pub(crate) fn package(_args: &[String]) -> Result<(), String> {
    let libraries = libraries()?;
    let mut args = vec!["package", "--locked", "--allow-dirty", "--no-verify"];
    for name in &libraries {
        args.extend(["-p", name.as_str()]);
    }
    run("cargo", &args)?;
    let root = root();
    let manifest = fs::read_to_string(root.join("Cargo.toml"))
        .map_err(|e| format!("cannot read the workspace's Cargo.toml: {e}"))?;
    let version = manifest
        .split("[workspace.package]")
        .nth(1)
        .and_then(|table| manifest_value(table, "version"))
        .ok_or("the workspace's Cargo.toml has no [workspace.package] version")?;
    let check = root.join("target/package-check");
    if check.exists() {
        fs::remove_dir_all(&check)
            .map_err(|e| format!("cannot remove {}: {e}", check.display()))?;
    }
    fs::create_dir_all(&check).map_err(|e| format!("cannot create {}: {e}", check.display()))?;
    let mut members = Vec::new();
    for name in &libraries {
        let dir = format!("{name}-{version}");
        let crate_file = root.join("target/package").join(format!("{dir}.crate"));
        run_in(
            Command::new("tar")
                .arg("-xzf")
                .arg(&crate_file)
                .arg("-C")
                .arg(&check),
        )?;
        members.push((name.as_str(), dir));
    }
    fs::write(
        check.join("Cargo.toml"),
        check_manifest(&members, &manifest),
    )
    .map_err(|e| format!("cannot write {}/Cargo.toml: {e}", check.display()))?;
    fs::copy(root.join("Cargo.lock"), check.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock into {}: {e}", check.display()))?;
    run_in(
        Command::new(cargo())
            .args(["check", "--workspace", "--manifest-path"])
            .arg(check.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(root.join("target")),
    )
}

/// The manifest of the workspace of packaged crates: each member by its
/// extracted directory, every dependency between them patched to it (the
/// packages name each other by version), and this workspace's profiles.
fn check_manifest(members: &[(&str, String)], workspace_manifest: &str) -> String {
    let mut out = String::from(
        "# Written by `cargo xtask package`: the packaged library crates, built\n\
         # from their own files.\n[workspace]\nresolver = \"3\"\nmembers = [\n",
    );
    for (_, dir) in members {
        let _ = writeln!(out, "    \"{dir}\",");
    }
    out.push_str("]\n\n[patch.crates-io]\n");
    for (name, dir) in members {
        let _ = writeln!(out, "{name} = {{ path = \"{dir}\" }}");
    }
    out.push('\n');
    if let Some(at) = workspace_manifest.find("\n[profile.") {
        out.push_str(&workspace_manifest[at + 1..]);
    }
    out
}

/// `cargo xtask example-program`: builds the example program outside the
/// workspace (its own lock file, `--locked`) in this workspace's target
/// directory, and runs it on the built-in example's kpack artifacts with
/// the `rocm-sdk` `therock-package`'s build script built. Any failure of
/// packaging, verify or the devel unpack fails the task.
pub(crate) fn example_program(_args: &[String]) -> Result<(), String> {
    let root = root();
    let target = root.join("target");
    let native = target.join(NATIVE_ROCM_SDK);
    if !native.is_file() {
        // The build script of `therock-package` makes it.
        run("cargo", &["build", "--locked", "-p", "therock-package"])?;
    }
    let scratch = target.join("example-program");
    if scratch.exists() {
        fs::remove_dir_all(&scratch)
            .map_err(|e| format!("cannot remove {}: {e}", scratch.display()))?;
    }
    let example = fixtures::generate(&scratch.join("example")).map_err(|e| e.to_string())?;
    let artifacts = example.artifact_dir(fixtures::ExampleMode::Kpack, fixtures::Layout::Tree);
    let program: PathBuf = root.join(EXAMPLE_PROGRAM);
    run_in(
        Command::new(cargo())
            .args(["run", "--locked", "--manifest-path"])
            .arg(program.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .arg("--")
            .arg(&artifacts)
            .arg(&native)
            .arg(scratch.join("run")),
    )
}

/// The cargo that runs xtask.
fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs a command in the workspace root, tracing it.
fn run_in(command: &mut Command) -> Result<(), String> {
    crate::cmd::traced(command.current_dir(root()))
}
