//! Every error `rocm-sdk` can meet on a broken installation says each thing
//! once: a message never repeats its own cause, which the program prints
//! after it.
//!
//! Each case breaks one part of a site-packages (no document, a document
//! that is not JSON or of a newer schema, an unreadable document, no devel
//! package, a bad RECORD, a devel tar that is not one, a bad
//! `share/therock/dist_info.json`), runs a command and checks that it fails
//! and that no sentence of its stderr appears twice
//! (`fixtures::sentences`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use dist_info::document::{DistInfo, FILE_NAME};
use dist_info::families::FamilyTable;
use dist_info::nonce::Nonce;
use dist_info::package::Mode;
use dist_info::selector::{Selector, SelectorInput};
use fixtures::privileges::{without_permission_bypass, wrapped_command};
use fixtures::sentences::repeated_sentences;

/// Runs `rocm-sdk --site-packages sp args…`, without the capabilities
/// that bypass permission checks when `drop_caps`; its exit code and stderr.
fn run(sp: &Path, args: &[&str], drop_caps: bool) -> (Option<i32>, String) {
    let binary = env!("CARGO_BIN_EXE_rocm-sdk");
    let wrapper = if drop_caps {
        without_permission_bypass()
    } else {
        &[]
    };
    let mut command = wrapped_command(wrapper, binary);
    let out = command
        .arg("--site-packages")
        .arg(sp)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("ROCM_SDK_LOG")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn problem(name: &str, (code, stderr): (Option<i32>, String)) -> Option<String> {
    if code == Some(0) || stderr.is_empty() {
        return Some(format!(
            "{name}: expected an error, got {code:?}:\n{stderr}"
        ));
    }
    let repeated = repeated_sentences(&stderr);
    (!repeated.is_empty()).then(|| format!("{name}: said twice: {repeated:?} in\n{stderr}"))
}

/// A valid kpack `_dist_info.json`.
fn document() -> Vec<u8> {
    let selector = Selector::plan(
        Mode::Kpack,
        &"7.1.0".parse().unwrap(),
        &SelectorInput::default(),
        FamilyTable::builtin(),
    )
    .unwrap();
    DistInfo::new(selector, &Nonce::NONE).to_json()
}

#[test]
fn every_error_of_a_broken_installation_says_each_thing_once() {
    let scratch = tempfile::tempdir().unwrap();
    let sp = scratch.path().join("site-packages");
    let core = sp.join("rocm_sdk_core");
    fs::create_dir_all(&core).unwrap();
    let doc = core.join(FILE_NAME);
    let mut problems = Vec::new();
    let mut check = |name: &str, outcome| problems.extend(problem(name, outcome));

    check(
        "missing site-packages",
        run(&scratch.path().join("none"), &["version"], false),
    );
    check("no document", run(&sp, &["version"], false));
    fs::write(&doc, "{not json").unwrap();
    check("document not JSON", run(&sp, &["version"], false));
    fs::write(&doc, r#"{"schema": 99}"#).unwrap();
    check("document of a newer schema", run(&sp, &["targets"], false));

    fs::write(&doc, document()).unwrap();
    fs::set_permissions(&doc, fs::Permissions::from_mode(0o000)).unwrap();
    check("unreadable document", run(&sp, &["version"], true));
    fs::set_permissions(&doc, fs::Permissions::from_mode(0o644)).unwrap();

    check("devel not installed", run(&sp, &["init"], false));
    check(
        "no dist_info.json of targets",
        run(&sp, &["targets"], false),
    );

    // A devel package whose RECORD is not CSV of three fields.
    let devel = sp.join(devel_tar::DEVEL_PACKAGE_DIR);
    fs::create_dir_all(&devel).unwrap();
    fs::write(devel.join(FILE_NAME), document()).unwrap();
    let tar = devel.join("_devel.tar");
    fs::write(&tar, "not a tar archive, not even close").unwrap();
    let dist_info = sp.join("rocm_sdk_devel-7.1.0.dist-info");
    fs::create_dir_all(&dist_info).unwrap();
    fs::write(dist_info.join("RECORD"), "a,b\n\"unterminated\n").unwrap();
    check("malformed devel RECORD", run(&sp, &["init"], false));
    fs::write(dist_info.join("RECORD"), "rocm_sdk_devel/_devel.tar,,\n").unwrap();
    check("devel tar not vouched for", run(&sp, &["init"], false));

    // The devel tar's directory may not be written.
    fs::set_permissions(&devel, fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(&sp, fs::Permissions::from_mode(0o555)).unwrap();
    check("read-only site-packages", run(&sp, &["init"], true));
    fs::set_permissions(&sp, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&devel, fs::Permissions::from_mode(0o755)).unwrap();

    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
