//! Running host commands with a readable trace and error.

use std::path::PathBuf;
use std::process::Command;

/// The workspace root (the parent of `xtask/`).
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Runs `program args…` in the workspace root, tracing it; a non-zero exit
/// is an error.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<(), String> {
    traced(Command::new(program).args(args).current_dir(root()))
}

/// Prints `+ command` on stderr, then [`status`].
pub(crate) fn traced(command: &mut Command) -> Result<(), String> {
    eprintln!("+ {}", shown(command));
    status(command)
}

/// Runs `command`, letting it print; a failure to start or a non-zero exit
/// is an error naming it.
pub(crate) fn status(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot start `{}`: {e}", shown(command)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {status}", shown(command)))
    }
}

/// A command as a shell line: program and arguments, without quotes.
fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `program` is on `PATH`.
pub(crate) fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}
