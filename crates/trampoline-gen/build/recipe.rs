//! How a launcher image is compiled from `launcher/`: one fixed `rustc`
//! command per platform, shared by `build.rs` and the test that rebuilds
//! the image elsewhere to prove the bytes do not depend on where or when
//! it was built.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code, reason = "the build only needs the marker")]
#[path = "../launcher/slot_layout.rs"]
mod slot_layout;

pub(crate) use slot_layout::SLOT_MARKER;

/// One launcher image to build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ImageRecipe {
    /// The Rust target triple the image runs on.
    pub(crate) triple: &'static str,
    /// File name of the image in the output directory.
    pub(crate) file_name: &'static str,
}

/// Linux x86_64: a static, libc-free ELF executable.
pub(crate) const LINUX_X86_64: ImageRecipe = ImageRecipe {
    triple: "x86_64-unknown-linux-gnu",
    file_name: "launcher-x86_64-linux",
};

/// Every image this crate embeds.
pub(crate) const ALL: &[ImageRecipe] = &[LINUX_X86_64];

/// The `rustc` arguments, apart from target and output. Every one of them
/// is fixed so the image is the same bytes on every build: one codegen
/// unit, no debug info, symbols stripped, no build-id, and the source
/// compiled from its own directory under a relative name so no absolute
/// path can leak into it.
const RUSTC_ARGS: &[&str] = &[
    "--edition=2024",
    "--crate-type=bin",
    "--crate-name=launcher",
    "-Cpanic=abort",
    "-Copt-level=s",
    "-Crelocation-model=static",
    "-Ctarget-feature=+crt-static",
    "-Ccodegen-units=1",
    "-Clto=fat",
    "-Cdebuginfo=0",
    "-Cstrip=symbols",
    "-Cforce-unwind-tables=no",
    "-Clink-arg=-nostartfiles",
    "-Clink-arg=-nostdlib",
    "-Clink-arg=-static",
    "-Clink-arg=-Wl,--build-id=none",
];

/// Compiles `launcher_dir/main.rs` for `recipe` with `rustc` into
/// `out_dir`, checks the target slot, and returns the image path.
pub(crate) fn compile_image(
    rustc: &OsStr,
    launcher_dir: &Path,
    recipe: ImageRecipe,
    out_dir: &Path,
) -> Result<PathBuf, String> {
    let output = out_dir.join(recipe.file_name);
    let result = Command::new(rustc)
        .current_dir(launcher_dir)
        .args(RUSTC_ARGS)
        .arg(format!("--target={}", recipe.triple))
        .arg(remap_arg(launcher_dir))
        .arg("-o")
        .arg(&output)
        .arg("main.rs")
        // Flags meant for the crates being built must not change the image.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .map_err(|e| format!("could not run {}: {e}", rustc.to_string_lossy()))?;
    if !result.status.success() {
        return Err(format!(
            "compiling the {} launcher image from {} failed ({}); it needs the `{}` \
             target of the Rust toolchain and a C compiler driver (cc) to link:\n{}",
            recipe.triple,
            launcher_dir.join("main.rs").display(),
            result.status,
            recipe.triple,
            String::from_utf8_lossy(&result.stderr),
        ));
    }
    let image = std::fs::read(&output).map_err(|e| {
        format!(
            "could not read the launcher image {}: {e}",
            output.display()
        )
    })?;
    find_slot(&image).map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(output)
}

/// Maps the checkout's launcher directory to a fixed name, in case rustc
/// records a source path (panic locations) anywhere in the image.
fn remap_arg(launcher_dir: &Path) -> std::ffi::OsString {
    let mut arg = std::ffi::OsString::from("--remap-path-prefix=");
    arg.push(launcher_dir);
    arg.push("=launcher");
    arg
}

/// Offset of the target slot: the marker must occur exactly once.
pub(crate) fn find_slot(image: &[u8]) -> Result<usize, String> {
    let mut found = image
        .windows(SLOT_MARKER.len())
        .enumerate()
        .filter(|(_, w)| *w == SLOT_MARKER)
        .map(|(i, _)| i);
    match (found.next(), found.next()) {
        (Some(offset), None) => Ok(offset),
        (None, _) => Err("the target slot marker is missing from the launcher image".into()),
        (Some(_), Some(_)) => Err("the target slot marker occurs more than once".into()),
    }
}
