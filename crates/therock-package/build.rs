//! Builds the native `rocm-sdk` that ships inside `rocm-sdk-core`, once per
//! wheel platform, and embeds them in this binary, so `therock-package` is
//! complete after `cargo build` or `cargo install` alone (see
//! docs/pipeline.md, "The native rocm-sdk"). The `pipeline` library has no
//! build script: this binary hands it the programs (`NativePrograms`).
//!
//! Which package that is comes from this crate's manifest,
//! `[package.metadata.embedded-programs]`: Cargo cannot depend on a package
//! that only has a binary, so the manifest says it there and this script
//! refuses to build without it.
//!
//! A wheel carries the program of its own platform: the Linux one for Linux
//! tags, the Windows one (`rocm-sdk.exe`) for `win_amd64`. The program of
//! the host's own platform is always built; the other one when its Rust
//! target (and for Windows the mingw-w64 linker) is installed. What is not
//! built is not embedded, and a build for that platform refuses with the
//! target's name unless a program is named at run time.
//!
//! A missing target or linker must not stick: while one is missing this
//! script names a path that never exists as an input, which Cargo treats
//! as changed, so every later build runs it again and embeds the program
//! once the tool is there. An installed one is watched by its own path (a
//! toolchain or linker update reruns it).
//!
//! The Linux program must run on glibc 2.28 and newer hosts
//! (docs/behaviour.md#native-binaries), and a dynamic glibc link made on a
//! newer host needs newer symbols, so it is linked statically
//! (`crt-static`). Target-only rustflags need an explicit `--target`, hence
//! a nested cargo with its own target directory. It may download the
//! crates only the other platform needs (`--locked`, never `--offline`,
//! which would fail on a fresh machine).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program to embed: its Rust target, its platform's name in flags, file
/// name, the file the crate includes, and the cfg that says it is there.
struct Native {
    target: &'static str,
    /// The platform as `--rocm-sdk-<flag>` names it.
    flag: &'static str,
    file: &'static str,
    embedded: &'static str,
    cfg: &'static str,
}

const LINUX: Native = Native {
    target: "x86_64-unknown-linux-gnu",
    flag: "linux",
    file: "rocm-sdk",
    embedded: "rocm-sdk",
    cfg: "native_linux",
};

const WINDOWS: Native = Native {
    target: "x86_64-pc-windows-gnu",
    flag: "windows",
    file: "rocm-sdk.exe",
    embedded: "rocm-sdk.exe",
    cfg: "native_windows",
};

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir.join("../..");
    let program =
        embedded_program(&manifest_dir.join("Cargo.toml")).unwrap_or_else(|e| panic!("{e}"));
    // Any workspace crate may end up in `rocm-sdk`; when nothing it uses
    // changed, the nested build is an up-to-date no-op.
    for input in ["crates", "Cargo.toml", "Cargo.lock", ".cargo/config.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    for native in [&LINUX, &WINDOWS] {
        println!("cargo::rustc-check-cfg=cfg({})", native.cfg);
    }
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let target_dir = shared_target_dir(&out_dir);
    let host_is_windows = env::var("HOST").is_ok_and(|h| h.contains("windows"));
    let (own, other) = if host_is_windows {
        (&WINDOWS, &LINUX)
    } else {
        (&LINUX, &WINDOWS)
    };
    println!("cargo:rerun-if-env-changed={}", linker_env(&WINDOWS));
    if let Some(libdir) = target_libdir(own.target) {
        println!("cargo:rerun-if-changed={}", libdir.display());
    }
    match build_rocm_sdk(&workspace, &target_dir, &program, own) {
        Ok(binary) => embed(own, &binary, &out_dir),
        Err(e) => panic!("{e}"),
    }
    // Optional: without it this tool still builds its own platform's
    // wheels, and refuses the other's by name.
    let missing = match missing_tools(&workspace, other) {
        Some(missing) => Err(missing),
        None => build_rocm_sdk(&workspace, &target_dir, &program, other),
    };
    match missing {
        Ok(binary) => embed(other, &binary, &out_dir),
        Err(e) => {
            println!(
                "cargo:warning={e}: this therock-package cannot build wheels for that platform \
                 (name a program with --rocm-sdk-{}); the next build tries again",
                other.flag
            );
            // Never created: Cargo reruns this script on every build until
            // the program is built.
            println!(
                "cargo:rerun-if-changed={}",
                out_dir.join("never-created-rerun-until-built").display()
            );
        }
    }
}

/// What `native` needs that is not installed, as a sentence; `None` when
/// nothing is missing. Each tool found is watched by its path.
fn missing_tools(workspace: &Path, native: &Native) -> Option<String> {
    let Some(libdir) = target_libdir(native.target) else {
        return Some(format!(
            "the Rust target {0} is not installed (rustup target add {0})",
            native.target
        ));
    };
    println!("cargo:rerun-if-changed={}", libdir.display());
    if native.target.contains("windows") && !cfg!(windows) {
        let linker = configured_linker(workspace, native);
        let Some(found) = find_program(&linker) else {
            return Some(format!(
                "the linker {linker} of the Rust target {} is not installed (Debian \
                 gcc-mingw-w64-x86-64)",
                native.target
            ));
        };
        println!("cargo:rerun-if-changed={}", found.display());
    }
    None
}

/// `CARGO_TARGET_<TRIPLE>_LINKER`.
fn linker_env(native: &Native) -> String {
    format!(
        "CARGO_TARGET_{}_LINKER",
        native.target.to_uppercase().replace('-', "_")
    )
}

/// The linker Cargo uses for `native`: its environment variable, else
/// `linker = "..."` of `[target.<triple>]` in the workspace's
/// `.cargo/config.toml`, else the mingw-w64 compiler rustc itself names.
fn configured_linker(workspace: &Path, native: &Native) -> String {
    if let Some(linker) = env::var_os(linker_env(native)).filter(|l| !l.is_empty()) {
        return linker.to_string_lossy().into_owned();
    }
    let table = format!("[target.{}]", native.target);
    let config = std::fs::read_to_string(workspace.join(".cargo/config.toml")).unwrap_or_default();
    config
        .lines()
        .skip_while(|line| line.trim() != table)
        .skip(1)
        .map(str::trim)
        .take_while(|line| !line.starts_with('['))
        .find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "linker").then(|| value.trim().trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| "x86_64-w64-mingw32-gcc".to_owned())
}

/// `program` as the shell finds it: a path as it is, a bare name on `PATH`.
fn find_program(program: &str) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The one package `[package.metadata.embedded-programs]` of `manifest`
/// names (`rocm-sdk = { path = "../rocm-sdk" }`), checked against the
/// manifest at that path.
fn embedded_program(manifest: &Path) -> Result<String, String> {
    const TABLE: &str = "[package.metadata.embedded-programs]";
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let entries: Vec<&str> = text
        .lines()
        .skip_while(|line| line.trim() != TABLE)
        .skip(1)
        .map(str::trim)
        .take_while(|line| !line.starts_with('['))
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    let [entry] = entries[..] else {
        return Err(format!(
            "{} must name the program to embed in {TABLE}, as `rocm-sdk = {{ path = \"../rocm-sdk\" }}`",
            manifest.display()
        ));
    };
    let (name, spec) = entry
        .split_once('=')
        .map(|(n, s)| (n.trim(), s))
        .unwrap_or_default();
    let path = spec
        .split('"')
        .nth(1)
        .filter(|_| spec.contains("path"))
        .ok_or_else(|| format!("{}: {TABLE}: `{entry}` has no path", manifest.display()))?;
    let theirs = manifest
        .parent()
        .unwrap_or(Path::new("."))
        .join(path)
        .join("Cargo.toml");
    let named = std::fs::read_to_string(&theirs)
        .is_ok_and(|t| t.lines().any(|l| l.trim() == format!("name = \"{name}\"")));
    if !named {
        return Err(format!(
            "{}: {TABLE}: {} is not the manifest of package `{name}`",
            manifest.display(),
            theirs.display()
        ));
    }
    Ok(name.to_owned())
}

fn embed(native: &Native, binary: &Path, out_dir: &Path) {
    let embedded = out_dir.join(native.embedded);
    std::fs::copy(binary, &embedded).unwrap_or_else(|e| {
        panic!(
            "cannot copy {} to {}: {e}",
            binary.display(),
            embedded.display()
        )
    });
    println!("cargo::rustc-cfg={}", native.cfg);
}

/// The directory of rustc's standard library for `target`, when it is
/// installed.
fn target_libdir(target: &str) -> Option<PathBuf> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let dir = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|dir| PathBuf::from(dir.trim()))?;
    let has_std = std::fs::read_dir(&dir)
        .ok()?
        .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-")));
    has_std.then_some(dir)
}

/// `target/native-rocm-sdk` beside the outer build's profile directories,
/// so `cargo build`, `cargo test` and `cargo clippy` share one inner build.
fn shared_target_dir(out_dir: &Path) -> PathBuf {
    // OUT_DIR is `<target>/<profile>/build/<pkg>-<hash>/out`, or
    // `<target>/<triple>/<profile>/build/...` when cross-compiling.
    let Some(mut dir) = out_dir.ancestors().nth(4) else {
        return out_dir.join("native");
    };
    if let (Ok(triple), Some(parent)) = (env::var("TARGET"), dir.parent())
        && dir.file_name().is_some_and(|name| *name == *triple)
    {
        dir = parent;
    }
    dir.join("native-rocm-sdk")
}

/// No host paths in the binary (the core wheel must be the same bytes on
/// every build host); static glibc on Linux, no link timestamp on Windows.
fn rustflags(workspace: &Path, native: &Native) -> String {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut flags = format!("--remap-path-prefix={}=/rocm", workspace.display());
    if native.target.contains("windows") {
        flags.push_str(" -C link-arg=-Wl,--no-insert-timestamp");
    } else {
        flags.push_str(" -C target-feature=+crt-static");
    }
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

fn build_rocm_sdk(
    workspace: &Path,
    target_dir: &Path,
    package: &str,
    native: &Native,
) -> Result<PathBuf, String> {
    let profile = embedded_profile();
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args([
            "build",
            "--profile",
            profile,
            "--locked",
            "-p",
            package,
            "--target",
            native.target,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .env("RUSTFLAGS", rustflags(workspace, native))
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET");
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo to build the native rocm-sdk: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the native rocm-sdk for {} failed (see the output above; a Windows \
             program needs the mingw-w64 linker, Debian gcc-mingw-w64-x86-64)",
            native.target
        ));
    }
    Ok(target_dir
        .join(native.target)
        .join(profile)
        .join(native.file))
}

/// The profile of the embedded programs: `release` in a release build of
/// this crate (what ships), else the workspace's unoptimised
/// `embedded-dev`, which the dev builds of tests, clippy and the demo
/// compile in less than half the time.
fn embedded_profile() -> &'static str {
    if env::var("PROFILE").is_ok_and(|p| p == "release") {
        "release"
    } else {
        "embedded-dev"
    }
}
