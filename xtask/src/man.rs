//! `cargo xtask man [DIR]`: the man pages of both programs, generated from
//! the clap definitions they parse their flags with (each binary's hidden
//! `generate-man DIR` command), into `DIR` (default `target/man`).

use std::path::PathBuf;

use crate::cmd::{root, run};

/// Builds both binaries and has each write its pages into the directory.
pub(crate) fn man(args: &[String]) -> Result<(), String> {
    let dir = match args {
        [] => root().join("target").join("man"),
        [dir] => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask man [DIR]".into()),
    };
    let dir = if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?
            .join(dir)
    };
    run(
        "cargo",
        &[
            "build",
            "--quiet",
            "-p",
            "therock-package",
            "-p",
            "rocm-sdk",
        ],
    )?;
    let dir = dir.to_str().ok_or("the directory must be UTF-8")?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    for program in ["therock-package", "rocm-sdk"] {
        let exe = target.join("debug").join(program);
        let exe = exe.to_str().ok_or("the workspace path must be UTF-8")?;
        run(exe, &["generate-man", dir])?;
    }
    Ok(())
}
