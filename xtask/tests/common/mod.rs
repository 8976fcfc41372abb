//! What the rule tests read from cargo: the workspace, `cargo ARGS` on a
//! manifest, and the target kinds of a `cargo metadata` package.

use std::path::Path;
use std::process::Command;

pub(crate) fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The standard output of `cargo ARGS --offline` on `manifest` (relative
/// to the workspace).
pub(crate) fn cargo(manifest: &str, args: &[&str]) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(workspace().join(manifest))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo {} on {manifest}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `target` (one of a `cargo metadata` package's `targets`) is of
/// `kind` (`lib`, `proc-macro`, `custom-build`).
pub(crate) fn is_kind(target: &serde_json::Value, kind: &str) -> bool {
    target["kind"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k.as_str() == Some(kind))
}

/// Whether `package` (of `cargo metadata`) has a target of `kind`.
pub(crate) fn has_kind(package: &serde_json::Value, kind: &str) -> bool {
    package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| is_kind(t, kind))
}
