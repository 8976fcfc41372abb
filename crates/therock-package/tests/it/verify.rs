//! `therock-package verify` (issue 9): the seed bug report's two-platform
//! release fails without the cross-platform family flags, naming the missing
//! extras, and passes with them; one negative test per check.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{
    Build, RELEASE_FAMILY_FLAGS, fails, ok, therock_package, two_platform_release, verify,
};

/// The passing release, built once per test binary.
fn good_release() -> &'static (Build, Build) {
    static RELEASE: OnceLock<(Build, Build)> = OnceLock::new();
    RELEASE.get_or_init(|| two_platform_release(true))
}

/// A copy of a dist directory the test may damage.
fn copy_dist(dist: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("dist");
    common::publish(&[dist.to_owned()], &copy);
    (tmp, copy)
}

fn find(dir: &Path, prefix: &str) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
}

/// Rewrites a wheel with Python's zipfile: `tamper` appends bytes to a
/// member (RECORD left as it was), `drop` removes a member and its RECORD row.
fn rewrite_wheel(wheel: &Path, member: &str, mode: &str) {
    const SCRIPT: &str = r"
import sys, zipfile
src, member, mode = sys.argv[1:4]
dst = src + '.new'
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    assert member in zin.namelist(), member
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename == member:
            if mode == 'drop':
                continue
            data += b'tampered'
        if mode == 'drop' and info.filename.endswith('.dist-info/RECORD'):
            data = b''.join(l + b'\n' for l in data.splitlines() if not l.startswith(member.encode() + b','))
        zout.writestr(info, data)
";
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(wheel)
        .args([member, mode])
        .output()
        .unwrap());
    fs::rename(format!("{}.new", wheel.display()), wheel).unwrap();
}

/// The report with the temporary directories named by role, and the
/// tightest tags of wheels with programs (they follow the glibc of the
/// machine that built the example) as `[HOST TAG]`.
fn redact(report: &str, dirs: &[(&Path, &str)]) -> String {
    let mut out = report.to_owned();
    for (dir, name) in dirs {
        out = out.replace(&dir.display().to_string(), name);
    }
    out.lines()
        .map(
            |line| match (line.find("satisfies "), line.find(" (needs up to ")) {
                (Some(at), Some(needs)) if at < needs => {
                    let end = needs + line[needs..].find(')').unwrap() + 1;
                    format!(
                        "{}satisfies [HOST TAG] (needs up to [HOST VERSIONS]){}\n",
                        &line[..at],
                        &line[end..]
                    )
                }
                _ => format!("{line}\n"),
            },
        )
        .collect()
}

#[test]
fn seed_scenario_without_family_flags_fails_naming_the_missing_extras() {
    let (linux, windows) = two_platform_release(false);
    let report = fails(&verify(&[&linux.dist(), &windows.dist()], &[]));
    // The upload race: one file name, two contents; the difference is the extras.
    assert!(
        report.contains("rocm-7.1.0.tar.gz have the same file name but different bytes (extras only in the first: device-gfx942"),
        "{report}"
    );
    // Whichever sdist wins the race, a Linux user loses gfx942.
    assert!(
        report.contains("rocm[device-gfx942] does not exist, so rocm_sdk_device_gfx942-7.1.0-py3-none-linux_x86_64.whl is unreachable on linux"),
        "{report}"
    );
    assert!(
        report.contains("rocm[device-all] on linux does not require rocm-sdk-device-gfx942==7.1.0"),
        "{report}"
    );
    // And the Linux sdist sends Windows users to a package that does not exist for them.
    assert!(
        report.contains(
            "requires rocm-sdk-device-gfx942==7.1.0; extra == \"device-gfx942\" on win_amd64"
        ),
        "{report}"
    );
    insta::assert_snapshot!(
        "seed_without_flags",
        redact(
            &report,
            &[(&linux.dist(), "[LINUX]"), (&windows.dist(), "[WINDOWS]")]
        )
    );

    // The same failure as JSON, for CI.
    let json: serde_json::Value = serde_json::from_str(&fails(&verify(
        &[&linux.dist(), &windows.dist()],
        &["--json"],
    )))
    .unwrap();
    assert_eq!(json["ok"], false);
    let failed: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "failed")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["identical-duplicates", "device-extras", "requirements"]
    );
}

#[test]
fn seed_scenario_with_family_flags_passes() {
    let (linux, windows) = good_release();
    let sdist = |b: &Build| fs::read(b.dist().join("rocm-7.1.0.tar.gz")).unwrap();
    assert_eq!(
        sdist(linux),
        sdist(windows),
        "the rocm sdist is the same bytes on both platforms"
    );
    let out = verify(&[&linux.dist(), &windows.dist()], &RELEASE_FAMILY_FLAGS);
    let report = ok(&out);
    assert!(
        report.contains("release verified: every check passed"),
        "{report}"
    );
    assert!(report.contains("ok      completeness"), "{report}");
    assert!(report.contains("ok      elf-links"), "{report}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&verify(&[&linux.dist(), &windows.dist()], &["--json"]))).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["files"].as_array().unwrap().len(), 13);
    assert_eq!(
        json["checks"][5]["status"], "skipped",
        "no family lists: completeness skipped"
    );
}

#[test]
fn tampered_wheel_fails_its_record() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    let wheel = find(&dist, "rocm_sdk_libraries-");
    rewrite_wheel(&wheel, "_rocm_sdk_libraries/lib/librocblas.so.5", "tamper");
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("FAILED  well-formed"), "{report}");
    assert!(
        report.contains("rocm_sdk_libraries-7.1.0-py3-none-linux_x86_64.whl: RECORD: _rocm_sdk_libraries/lib/librocblas.so.5: RECORD says sha256="),
        "{report}"
    );
}

#[test]
fn mismatched_version_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    let other = Build::new(fixtures::ExampleMode::Kpack, &["--version", "7.1.1"]);
    fs::remove_file(find(&dist, "rocm_sdk_libraries-")).unwrap();
    let newer = find(&other.dist(), "rocm_sdk_libraries-");
    fs::copy(&newer, dist.join(newer.file_name().unwrap())).unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(
        report.contains("the rocm* packages carry 2 different versions: 7.1.0 ("),
        "{report}"
    );
    assert!(
        report.contains("7.1.1 (")
            && report.contains("rocm_sdk_libraries-7.1.1-py3-none-linux_x86_64.whl)"),
        "{report}"
    );
    // The device wheels pin the libraries wheel of their own version.
    assert!(
        report.contains("requires rocm-sdk-libraries==7.1.0 on linux_x86_64, which nothing in the set provides (the set has rocm_sdk_libraries-7.1.1-py3-none-linux_x86_64.whl (7.1.1))"),
        "{report}"
    );
}

#[test]
fn missing_requirement_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    fs::remove_file(find(&dist, "rocm_sdk_libraries-")).unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("FAILED  requirements"), "{report}");
    assert!(
        report.contains("rocm_sdk_device_gfx942-7.1.0-py3-none-linux_x86_64.whl: requires rocm-sdk-libraries==7.1.0 on linux_x86_64, which nothing in the set provides"),
        "{report}"
    );
    assert!(
        report.contains("rocm-7.1.0.tar.gz: requires rocm-sdk-libraries==7.1.0; extra == \"libraries\" on linux_x86_64 (extra libraries)"),
        "{report}"
    );
}

#[test]
fn unresolvable_needed_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    // A core wheel without the HIP runtime, RECORD consistent: well-formed,
    // but the libraries that link against it no longer load.
    rewrite_wheel(
        &find(&dist, "rocm_sdk_core-"),
        "_rocm_sdk_core/lib/libamdhip64.so.7",
        "drop",
    );
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("ok      well-formed"), "{report}");
    assert!(report.contains("FAILED  elf-links"), "{report}");
    assert!(
        report.contains("linux: _rocm_sdk_libraries/lib/librocblas.so.5 (in rocm_sdk_libraries-7.1.0-py3-none-linux_x86_64.whl): NEEDED libamdhip64.so.7 not found in _rocm_sdk_libraries/lib, _rocm_sdk_core/lib,"),
        "{report}"
    );
}

#[test]
fn incomplete_family_list_is_named() {
    let dist = good_release().0.dist();
    let report = fails(&verify(
        &[&dist],
        &["--linux-amdgpu-families", "gfx94X-dcgpu;gfx110X-dgpu"],
    ));
    assert!(
        report.contains("linux: no device wheels for gfx1101, gfx1102 (expected gfx1100, gfx1101, gfx1102, gfx942 from --linux-amdgpu-families"),
        "{report}"
    );
    // An unknown family is wrong on the command line alone: a usage
    // error (exit 2) naming the flag and the name.
    let out = verify(&[&dist], &["--linux-amdgpu-families", "gfx9000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--linux-amdgpu-families <FAMILIES>'") && err.contains("gfx9000"),
        "{err}"
    );
}

#[test]
fn differing_wheels_name_the_members() {
    let (linux, _) = good_release();
    let (_tmp, dist) = copy_dist(&linux.dist());
    rewrite_wheel(
        &find(&dist, "rocm_sdk_libraries-"),
        "_rocm_sdk_libraries/lib/libhipfft.so.0",
        "drop",
    );
    let report = fails(&verify(&[&linux.dist(), &dist], &[]));
    assert!(
        report.contains("(members: _rocm_sdk_libraries/lib/libhipfft.so.0 only in the first)"),
        "{report}"
    );
}

#[test]
fn a_missing_directory_is_bad_input_and_no_directory_a_usage_error() {
    let out = therock_package(&["verify", "/nonexistent/dist"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @"therock-package: error: /nonexistent/dist is not a directory; pass the dist directories of the release");
    let out = therock_package(&["verify"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn legacy_release_with_per_family_directories_passes() {
    // Each dist/{F}/ holds its own rocm sdist and devel wheel: different
    // bytes under one name there are by design, not an upload race.
    let build = Build::new(fixtures::ExampleMode::Legacy, &[]);
    let report = ok(&verify(
        &[&build.dist()],
        &["--linux-amdgpu-families", "gfx94X-dcgpu;gfx110X-all"],
    ));
    assert!(report.contains("ok      identical-duplicates"), "{report}");
    assert!(report.contains("ok      completeness"), "{report}");
    // A family the release lacks is named as a missing libraries wheel.
    let report = fails(&verify(
        &[&build.dist()],
        &["--linux-amdgpu-families", "gfx950-dcgpu"],
    ));
    assert!(
        report.contains("linux: no libraries wheels for gfx950-dcgpu"),
        "{report}"
    );
}

#[test]
fn a_truncated_or_garbled_wheel_is_a_failed_check_not_an_error() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    let core = find(&dist, "rocm_sdk_core-");
    let bytes = fs::read(&core).unwrap();
    fs::write(&core, &bytes[..bytes.len() / 2]).unwrap();
    let garbled = dist.join("rocm_sdk_extra-7.1.0-py3-none-linux_x86_64.whl");
    fs::write(&garbled, b"PK\x03\x04 not a zip at all").unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("FAILED  well-formed"), "{report}");
    for file in [&core, &garbled] {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            report.lines().any(|l| l.contains(&name)
                && l.contains("not a zip archive every installer reads the same way")),
            "{name} not named:\n{report}"
        );
    }
}

/// Patches the local header of `member` in `wheel`: `field` is `size`
/// (adds one), `crc` (flips a bit) or `name` (changes its last byte).
fn lie_in_local_header(wheel: &Path, member: &str, field: &str) {
    const SCRIPT: &str = r"
import struct, sys, zipfile
path, member, field = sys.argv[1:4]
with zipfile.ZipFile(path) as z:
    offset = z.getinfo(member).header_offset
data = bytearray(open(path, 'rb').read())
assert data[offset:offset + 4] == b'PK\x03\x04'
if field == 'size':
    (size,) = struct.unpack_from('<I', data, offset + 22)
    struct.pack_into('<I', data, offset + 22, size + 1)
elif field == 'crc':
    data[offset + 14] ^= 1
else:
    (name_len,) = struct.unpack_from('<H', data, offset + 26)
    data[offset + 30 + name_len - 1] ^= 0x20
open(path, 'wb').write(bytes(data))
";
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(wheel)
        .args([member, field])
        .output()
        .unwrap());
}

#[test]
fn a_local_header_that_disagrees_with_the_central_directory_fails() {
    for (field, says) in [
        ("size", "the local header gives size"),
        ("crc", "the local header gives CRC-32"),
        ("name", "the local header gives name"),
    ] {
        let (_tmp, dist) = copy_dist(&good_release().0.dist());
        let wheel = find(&dist, "rocm_profiler-");
        lie_in_local_header(&wheel, "rocm_profiler/__init__.py", field);
        let report = fails(&verify(&[&dist], &[]));
        assert!(report.contains("FAILED  well-formed"), "{field}: {report}");
        assert!(
            report.lines().any(|l| l.contains("rocm_profiler-7.1.0")
                && l.contains("not a zip archive every installer reads the same way")
                && l.contains("member \"rocm_profiler/__init__.py\": ")
                && l.contains(says)),
            "{field}: {report}"
        );
    }
}

/// Adds a `Requires-Dist` line to a wheel's METADATA, RECORD kept right.
fn add_requirement(wheel: &Path, requirement: &str) {
    const SCRIPT: &str = r"
import base64, hashlib, sys, zipfile
src, line = sys.argv[1:3]
dst = src + '.new'
with zipfile.ZipFile(src) as zin:
    infos = zin.infolist()
    data = {i.filename: zin.read(i) for i in infos}
meta = next(n for n in data if n.endswith('.dist-info/METADATA'))
record = next(n for n in data if n.endswith('.dist-info/RECORD'))
head, sep, body = data[meta].partition(b'\n\n')
added = head.rstrip(b'\n') + b'\nRequires-Dist: ' + line.encode() + b'\n'
data[meta] = added + (b'\n' + body if sep else b'')
digest = base64.urlsafe_b64encode(hashlib.sha256(data[meta]).digest()).rstrip(b'=')
rows = [r for r in data[record].splitlines() if not r.startswith(meta.encode() + b',')]
rows.append(meta.encode() + b',sha256=' + digest + b',' + str(len(data[meta])).encode())
data[record] = b''.join(r + b'\n' for r in rows)
with zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    for info in infos:
        zout.writestr(info, data[info.filename])
";
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(wheel)
        .arg(requirement)
        .output()
        .unwrap());
    fs::rename(format!("{}.new", wheel.display()), wheel).unwrap();
}

#[test]
fn a_marker_pep_508_cannot_decide_fails_instead_of_holding() {
    // Ordering two strings is not defined by PEP 508; the old evaluator
    // took it as true, so the requirement looked checked.
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    add_requirement(
        &find(&dist, "rocm_profiler-"),
        r#"rocm-sdk-core==7.1.0; sys_platform < "win32""#,
    );
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("ok      well-formed"), "{report}");
    assert!(report.contains("FAILED  requirements"), "{report}");
    assert!(
        report.contains(r"the marker `sys_platform < 'win32'` cannot be evaluated"),
        "{report}"
    );

    // Every variable takes the target's value: a requirement only aarch64
    // machines need is not required on x86_64.
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    add_requirement(
        &find(&dist, "rocm_profiler-"),
        r#"rocm-sdk-missing==1; platform_machine == "aarch64" or python_version < "3.9""#,
    );
    ok(&verify(&[&dist], &[]));
    // ... and one every Linux machine needs is.
    add_requirement(
        &find(&dist, "rocm_profiler-"),
        r#"rocm-sdk-missing==1; platform_machine == "x86_64" and python_version >= "3.12""#,
    );
    let report = fails(&verify(&[&dist], &[]));
    assert!(
        report.contains(
            "on linux_x86_64 with Python 3.12, 3.13, 3.14, which nothing in the set provides"
        ),
        "{report}"
    );
}

/// The example's artifacts without the HIP runtime: the libraries that
/// link against it keep their `DT_NEEDED libamdhip64.so.7`, which nothing
/// in the set provides.
fn artifacts_without_hip() -> tempfile::TempDir {
    let artifacts = common::copy_of_artifacts(fixtures::Layout::Tree);
    let lib = artifacts
        .path()
        .join("core-hip_lib_generic/core/clr/stage/lib");
    let mut removed = 0;
    for entry in fs::read_dir(&lib).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("libamdhip64.so")
        {
            fs::remove_file(path).unwrap();
            removed += 1;
        }
    }
    assert!(
        removed > 0,
        "the example has the HIP runtime in {}",
        lib.display()
    );
    artifacts
}

#[test]
fn a_build_checks_what_it_wrote_warns_once_and_strict_fails() {
    let artifacts = artifacts_without_hip();
    let dest = tempfile::tempdir().unwrap();
    let out = common::build_into(artifacts.path(), dest.path(), &["--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("ELF-link check"))
        .collect();
    assert_eq!(warnings.len(), 1, "one line: {stderr}");
    let line = warnings[0].replace(&dest.path().display().to_string(), "[DEST]");
    insta::assert_snapshot!(line, @"therock-package: warning: the release fails verify's ELF-link check: 6 ELF files have unresolved NEEDED entries, the first: _rocm_sdk_core/bin/hipInfo: NEEDED libamdhip64.so.7 not found in _rocm_sdk_core/lib, _rocm_sdk_core/lib/llvm/lib, _rocm_sdk_core/lib/rocm_sysdeps/lib, and it is neither an allowed system library nor the loader; run `therock-package verify [DEST]/dist` to see all, and give it `--exclude SONAME` for libraries left to the system on purpose");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let links = &report["elf_links"];
    assert_eq!(links["ok"], false, "{report:#}");
    assert_eq!(links["unresolved_files"], 6, "{links}");
    // The same check `verify` runs, on the same facts: it names the same
    // first file, and counts the same ELF files.
    let verified = fails(&verify(&[&dest.path().join("dist")], &[]));
    let first = links["first"].as_str().unwrap();
    assert!(
        verified.contains(&format!(
            "FAILED  elf-links: in runtime wheels every ELF NEEDED resolves inside the set, or is \
             an allowed manylinux_2_28 system library or the loader ({} ELF files)",
            links["files"]
        )),
        "{verified}"
    );
    let (file, rest) = first.split_once(": ").unwrap();
    assert!(
        verified.contains(&format!(
            "- linux: {file} (in rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl): {rest}"
        )),
        "{verified}"
    );

    // `--strict`: the verdict is `verify`'s, exit 1; quiet or not.
    let strict_dest = tempfile::tempdir().unwrap();
    let strict = common::build_into(artifacts.path(), strict_dest.path(), &["--strict", "-q"]);
    assert_eq!(strict.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(
        stderr.starts_with(
            "therock-package: error: the release fails verify's ELF-link check: 6 ELF files have"
        ),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&strict.stdout), "");
}

#[test]
fn a_build_of_the_example_passes_its_own_link_check() {
    let dest = tempfile::tempdir().unwrap();
    let out = common::build_into(
        &common::artifacts(fixtures::ExampleMode::Kpack),
        dest.path(),
        &["--json", "--strict"],
    );
    let report: serde_json::Value = serde_json::from_slice(&ok(&out).into_bytes()).unwrap();
    assert_eq!(report["elf_links"]["ok"], true, "{report:#}");
    assert_eq!(report["elf_links"]["unresolved_files"], 0);
    assert!(report["elf_links"]["first"].is_null());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("ELF-link check"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
