//! `therock-package verify` reads what the core wheel ships the way the
//! install side will: `share/therock/dist_info.json` with the one reader
//! of that document (issue 26). The search-path check is exercised with
//! the build that keeps absolute entries (`hostile_inputs.rs`).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Build, fails, ok, verify};
use fixtures::ExampleMode;

const MEMBER: &str = "_rocm_sdk_core/share/therock/dist_info.json";

/// A copy of the example's kpack release the test may change.
fn release_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    common::publish(&[Build::shared(ExampleMode::Kpack).dist()], &dist);
    (tmp, dist)
}

/// Rewrites `member` of `wheel` with `bytes` (`None`: removes it), RECORD
/// kept consistent, so only the document itself is wrong.
fn replace_member(wheel: &Path, member: &str, bytes: Option<&str>) {
    const SCRIPT: &str = r"
import base64, hashlib, sys, zipfile
src, member, mode = sys.argv[1:4]
new = sys.argv[4].encode() if mode == 'set' else None
dst = src + '.new'
with zipfile.ZipFile(src) as zin:
    infos = zin.infolist()
    data = {i.filename: zin.read(i) for i in infos}
assert member in data, member
record = next(n for n in data if n.endswith('.dist-info/RECORD'))
rows = [r for r in data[record].splitlines() if not r.startswith(member.encode() + b',')]
if new is not None:
    data[member] = new
    digest = base64.urlsafe_b64encode(hashlib.sha256(new).digest()).rstrip(b'=')
    rows.append(member.encode() + b',sha256=' + digest + b',' + str(len(new)).encode())
data[record] = b''.join(r + b'\n' for r in rows)
with zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    for info in infos:
        if new is None and info.filename == member:
            continue
        zout.writestr(info, data[info.filename])
";
    let mut command = Command::new("python3");
    command.args(["-c", SCRIPT]).arg(wheel).arg(member);
    match bytes {
        Some(bytes) => command.args(["set", bytes]),
        None => command.arg("drop"),
    };
    ok(&command.output().unwrap());
    fs::rename(format!("{}.new", wheel.display()), wheel).unwrap();
}

/// The `dist-targets` lines of a text report, the directory redacted.
fn dist_targets_lines(report: &str, dist: &Path) -> String {
    report
        .lines()
        .skip_while(|l| !l.contains(" dist-targets: "))
        .take_while(|l| l.contains(" dist-targets: ") || l.starts_with("        - "))
        .map(|l| l.replace(&dist.display().to_string(), "[DIST]"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_shipped_dist_info_json_is_read_as_rocm_sdk_reads_it() {
    let (_tmp, dist) = release_copy();
    let report = ok(&verify(&[&dist], &[]));
    insta::assert_snapshot!(dist_targets_lines(&report, &dist), @"ok      dist-targets: the core wheel's share/therock/dist_info.json is one `rocm-sdk targets` can read");

    let core = fixtures::files::entry_starting_with(&dist, "rocm_sdk_core-");
    replace_member(
        &core,
        MEMBER,
        Some(r#"{"dist_amdgpu_targets": ["gfx942"]}"#),
    );
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("ok      well-formed"), "{report}");
    insta::assert_snapshot!(dist_targets_lines(&report, &dist), @r#"
    FAILED  dist-targets: the core wheel's share/therock/dist_info.json is one `rocm-sdk targets` can read
            - [DIST]/rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl: _rocm_sdk_core/share/therock/dist_info.json: `rocm-sdk targets` could not read it: "dist_amdgpu_targets" is an array, not a string of targets separated by `;` ("gfx942;gfx1100"); fix share/therock/dist_info.json in the artifacts and rebuild
    "#);

    replace_member(&core, MEMBER, None);
    let report = fails(&verify(&[&dist], &[]));
    insta::assert_snapshot!(dist_targets_lines(&report, &dist), @"
    FAILED  dist-targets: the core wheel's share/therock/dist_info.json is one `rocm-sdk targets` can read
            - [DIST]/rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl: holds no _rocm_sdk_core/share/therock/dist_info.json, so `rocm-sdk targets` fails on every installation; rebuild it from a complete TheRock build
    ");
}
