//! Every command maps its result through one exit status
//! (docs/behaviour.md#exit-status): a missing input path is bad input (1),
//! whatever the command; only the command line itself is a usage error (2).

use crate::common;

use std::fmt::Write as _;
use std::path::Path;

use common::therock_package;

/// The exit status and stderr of a run, as one snapshot.
fn status_and_stderr(args: &[&str], dest: &Path) -> String {
    let dest = dest.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "DEST" { dest } else { a })
        .collect();
    let out = therock_package(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).replace(dest, "DEST");
    format!("exit {:?}\n{stderr}", out.status.code())
}

const MISSING: &str = "/nonexistent/therock-input";

#[test]
fn a_missing_input_is_bad_input_for_every_command() {
    let dest = tempfile::tempdir().unwrap();
    let commands: [(&str, &[&str]); 6] = [
        ("inspect", &["inspect", "--artifact-dir", MISSING]),
        ("plan", &["plan", "--artifact-dir", MISSING]),
        (
            "build",
            &["build", "--artifact-dir", MISSING, "--dest-dir", "DEST"],
        ),
        ("assemble", &["assemble", MISSING, "--dest-dir", "DEST"]),
        ("verify", &["verify", MISSING]),
        ("index", &["index", MISSING]),
    ];
    for (name, args) in commands {
        let seen = status_and_stderr(args, dest.path());
        assert!(seen.starts_with("exit Some(1)\n"), "{name}: {seen}");
        insta::assert_snapshot!(format!("missing_input_{name}"), seen);
    }
}

#[test]
fn usage_errors_exit_2_for_every_command() {
    let dest = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 7] = [
        &["inspect"],
        &["plan"],
        &["build", "--artifact-dir", MISSING],
        &["assemble", MISSING],
        &["verify"],
        &["index"],
        &["no-such-command"],
    ];
    for args in commands {
        let seen = status_and_stderr(args, dest.path());
        assert!(seen.starts_with("exit Some(2)\n"), "{args:?}: {seen}");
    }
}

#[test]
fn help_and_version_exit_0() {
    for args in [&["--help"][..], &["--version"], &["verify", "--help"]] {
        let out = therock_package(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

/// A build that fails leaves the destination as it found it: directories
/// it had to create are gone again, lock file and all, and an existing
/// empty one is left empty.
#[test]
fn a_failed_build_leaves_the_destination_as_it_found_it() {
    let work = tempfile::tempdir().unwrap();
    // Artifacts without a manifest: refused after `dist/` was prepared.
    let artifacts = work.path().join("artifacts");
    std::fs::create_dir(&artifacts).unwrap();
    let new_dest = work.path().join("new/out");
    let existing = work.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    for dest in [&new_dest, &existing] {
        let out = therock_package(&[
            "build",
            "--artifact-dir",
            artifacts.to_str().unwrap(),
            "--dest-dir",
            dest.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        !work.path().join("new").exists(),
        "the new destination was left behind"
    );
    assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 0);
}

/// Every flag value that is wrong on the command line alone exits 2, with
/// clap's one `error:` line naming the flag (docs/behaviour.md#exit-status).
/// The artifact directory does not exist: a value judged later would exit 1.
#[test]
fn every_bad_flag_value_exits_2() {
    let dest = tempfile::tempdir().unwrap();
    let build = ["build", "--artifact-dir", MISSING, "--dest-dir", "DEST"];
    let bad: [&[&str]; 18] = [
        &["--version", "banana"],
        &["--version", ""],
        &["--version-suffix", "a-b"],
        &["--linux-amdgpu-families", "gfx999"],
        &["--windows-amdgpu-families", "gfx1100;nope"],
        &["--platform-tag", "linux-x86_64"],
        &["--platform-tag", ""],
        &["--devel-compression", "lz4"],
        &["--project-url", "nolabel"],
        &["--compression-level", "13"],
        &["--jobs", "banana"],
        &["--jobs", "-1"],
        &["--shard", "3/2"],
        &["--shard", "banana"],
        &["--no-wheel-compression", "--compression-level", "6"],
        &["--devel-tarball-compression", "--devel-compression", "zstd"],
        &["--metadata"],
        &["--runtime-alias", "libamdhip64.so.7"],
    ];
    let mut table = String::new();
    for extra in bad {
        let mut args = build.to_vec();
        args.extend(extra);
        table += &line(&args, dest.path());
    }
    for args in [
        &["plan", "--artifact-dir", MISSING, "--shards", "banana"][..],
        &["plan", "--artifact-dir", MISSING, "--version", "7.x"],
        &["verify", MISSING, "--linux-amdgpu-families", "gfx999"],
        &["verify", MISSING, "--policy", "manylinux_9000"],
        &["index", MISSING, "--layout", "tree"],
        &["completions", "tcsh"],
    ] {
        table += &line(args, dest.path());
    }
    insta::assert_snapshot!(table, @r#"
        exit Some(2) | build --version banana | error: invalid value 'banana' for '--version <VERSION>': version `banana` is not a valid PEP 440 version: it must start with a release number; use a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`
        exit Some(2) | build --version  | error: invalid value '' for '--version <VERSION>': version `` is not a valid PEP 440 version: it is empty; use a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`
        exit Some(2) | build --version-suffix a-b | error: invalid value 'a-b' for '--version-suffix <NONCE>': "a-b" is not a nonce: it contains '-'; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})
        exit Some(2) | build --linux-amdgpu-families gfx999 | error: invalid value 'gfx999' for '--linux-amdgpu-families <FAMILIES>': unknown GPU family or target `gfx999`; known families: dcgpu-all, dgpu-all, gfx101X-all, gfx101X-dgpu, gfx103X-all, gfx103X-dgpu, gfx103X-igpu, gfx110X-all, gfx110X-dgpu, gfx110X-igpu, gfx115X-all, gfx115X-igpu, gfx120X-all, gfx125X-all, gfx125X-dcgpu, gfx900-dgpu, gfx906-dgpu, gfx908-dcgpu, gfx90a-dcgpu, gfx90c-igpu, gfx94X-all, gfx94X-dcgpu, gfx950-all, gfx950-dcgpu, igpu-all; known targets: gfx1010, gfx1011, gfx1012, gfx1030, gfx1031, gfx1032, gfx1033, gfx1034, gfx1035, gfx1036, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1151, gfx1152, gfx1153, gfx1200, gfx1201, gfx1250, gfx900, gfx906, gfx908, gfx90a, gfx90c, gfx942, gfx950
        exit Some(2) | build --windows-amdgpu-families gfx1100;nope | error: invalid value 'gfx1100;nope' for '--windows-amdgpu-families <FAMILIES>': unknown GPU family or target `nope`; known families: dcgpu-all, dgpu-all, gfx101X-all, gfx101X-dgpu, gfx103X-all, gfx103X-dgpu, gfx103X-igpu, gfx110X-all, gfx110X-dgpu, gfx110X-igpu, gfx115X-all, gfx115X-igpu, gfx120X-all, gfx125X-all, gfx125X-dcgpu, gfx900-dgpu, gfx906-dgpu, gfx908-dcgpu, gfx90a-dcgpu, gfx90c-igpu, gfx94X-all, gfx94X-dcgpu, gfx950-all, gfx950-dcgpu, igpu-all; known targets: gfx1010, gfx1011, gfx1012, gfx1030, gfx1031, gfx1032, gfx1033, gfx1034, gfx1035, gfx1036, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1151, gfx1152, gfx1153, gfx1200, gfx1201, gfx1250, gfx900, gfx906, gfx908, gfx90a, gfx90c, gfx942, gfx950
        exit Some(2) | build --platform-tag linux-x86_64 | error: invalid value 'linux-x86_64' for '--platform-tag <TAG>': wheel tag "py3-none-linux-x86_64" is not valid: each part must be letters, digits and `_` (sets joined with `.`)
        exit Some(2) | build --platform-tag  | error: invalid value '' for '--platform-tag <TAG>': wheel tag "py3-none-" is not valid: each part must be letters, digits and `_` (sets joined with `.`)
        exit Some(2) | build --devel-compression lz4 | error: invalid value 'lz4' for '--devel-compression <CODEC>'
        exit Some(2) | build --project-url nolabel | error: invalid value 'nolabel' for '--project-url <LABEL=URL>': "nolabel" is not LABEL=URL
        exit Some(2) | build --compression-level 13 | error: invalid value '13' for '--compression-level <LEVEL>': 13 is not in 0..=12
        exit Some(2) | build --jobs banana | error: invalid value 'banana' for '--jobs <N>': invalid digit found in string
        exit Some(2) | build --jobs -1 | error: unexpected argument '-1' found
        exit Some(2) | build --shard 3/2 | error: invalid value '3/2' for '--shard <K/N>': `3/2` is not K/N with 1 <= K <= N (shards are numbered from 1)
        exit Some(2) | build --shard banana | error: invalid value 'banana' for '--shard <K/N>': `banana` is not K/N (for example 2/4)
        exit Some(2) | build --no-wheel-compression --compression-level 6 | error: --no-wheel-compression stores wheel members but --compression-level 6 deflates them; give one of them
        exit Some(2) | build --devel-tarball-compression --devel-compression zstd | error: --devel-tarball-compression means --devel-compression xz but --devel-compression zstd was given; give one of them
        exit Some(2) | build --metadata | error: a value is required for '--metadata <FILE>' but none was supplied
        exit Some(2) | build --runtime-alias libamdhip64.so.7 | error: invalid value 'libamdhip64.so.7' for '--runtime-alias <NAME>': not an unversioned library name; give a file name like libamdhip64.so
        exit Some(2) | plan --artifact-dir IN --shards banana | error: invalid value 'banana' for '--shards <N>': invalid digit found in string
        exit Some(2) | plan --artifact-dir IN --version 7.x | error: invalid value '7.x' for '--version <VERSION>': version `7.x` is not a valid PEP 440 version: after parsing `7`, found `.x`, which is not part of a valid version; use a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`
        exit Some(2) | verify IN --linux-amdgpu-families gfx999 | error: invalid value 'gfx999' for '--linux-amdgpu-families <FAMILIES>': unknown GPU family or target `gfx999`; known families: dcgpu-all, dgpu-all, gfx101X-all, gfx101X-dgpu, gfx103X-all, gfx103X-dgpu, gfx103X-igpu, gfx110X-all, gfx110X-dgpu, gfx110X-igpu, gfx115X-all, gfx115X-igpu, gfx120X-all, gfx125X-all, gfx125X-dcgpu, gfx900-dgpu, gfx906-dgpu, gfx908-dcgpu, gfx90a-dcgpu, gfx90c-igpu, gfx94X-all, gfx94X-dcgpu, gfx950-all, gfx950-dcgpu, igpu-all; known targets: gfx1010, gfx1011, gfx1012, gfx1030, gfx1031, gfx1032, gfx1033, gfx1034, gfx1035, gfx1036, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1151, gfx1152, gfx1153, gfx1200, gfx1201, gfx1250, gfx900, gfx906, gfx908, gfx90a, gfx90c, gfx942, gfx950
        exit Some(2) | verify IN --policy manylinux_9000 | error: invalid value 'manylinux_9000' for '--policy <POLICY>': manylinux_9000: not a manylinux policy auditwheel defines; known policies: manylinux_2_5, manylinux_2_12, manylinux_2_17, manylinux_2_24, manylinux_2_26, manylinux_2_27, manylinux_2_28, manylinux_2_31, manylinux_2_34, manylinux_2_35, manylinux_2_36, manylinux_2_37, manylinux_2_38, manylinux_2_39, manylinux_2_40, manylinux_2_41
        exit Some(2) | index IN --layout tree | error: invalid value 'tree' for '--layout <LAYOUT>'
        exit Some(2) | completions tcsh | error: invalid value 'tcsh' for '<SHELL>'
        "#);
}

/// `exit N | args | the first line of stderr`, for the table above (the
/// missing input shown as `IN`, the common build flags left out).
fn line(args: &[&str], dest: &Path) -> String {
    let seen = status_and_stderr(args, dest);
    let (status, stderr) = seen.split_once('\n').unwrap();
    let shown = args
        .join(" ")
        .replace(
            " --artifact-dir /nonexistent/therock-input --dest-dir DEST",
            "",
        )
        .replace(MISSING, "IN");
    format!(
        "{status} | {shown} | {}\n",
        stderr.lines().next().unwrap_or("")
    )
}

/// A directory without artifacts (empty, unrelated, or one artifact instead
/// of the directory of them) is named as such, with what an artifact
/// directory looks like; for one artifact its parent is suggested.
#[test]
fn a_wrong_artifact_dir_says_what_an_artifact_dir_is() {
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let unrelated = work.path().join("unrelated");
    std::fs::create_dir_all(unrelated.join("src")).unwrap();
    std::fs::write(unrelated.join("README.md"), "hello").unwrap();
    let one = common::artifacts(fixtures::ExampleMode::Kpack).join("base_lib_generic");
    let mut seen = String::new();
    for dir in [&empty, &unrelated, &one] {
        let out = therock_package(&["inspect", "--artifact-dir", dir.to_str().unwrap()]);
        let _ = write!(
            seen,
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
                .replace(work.path().to_str().unwrap(), "WORK")
                .replace(
                    common::artifacts(fixtures::ExampleMode::Kpack)
                        .to_str()
                        .unwrap(),
                    "ARTIFACTS"
                )
        );
    }
    insta::assert_snapshot!(seen, @r"
        exit Some(1): therock-package: error: no TheRock artifacts in WORK/empty: an artifact directory holds one entry per artifact, a directory NAME_COMPONENT_TARGET with an artifact_manifest.txt (base_lib_generic, core-hip_lib_gfx942) or the same name as a .tar.zst or .tar.xz archive; pass the directory TheRock's build wrote its artifacts into
        exit Some(1): therock-package: error: no TheRock artifacts in WORK/unrelated: an artifact directory holds one entry per artifact, a directory NAME_COMPONENT_TARGET with an artifact_manifest.txt (base_lib_generic, core-hip_lib_gfx942) or the same name as a .tar.zst or .tar.xz archive; pass the directory TheRock's build wrote its artifacts into
        exit Some(1): therock-package: error: no TheRock artifacts in ARTIFACTS/base_lib_generic: an artifact directory holds one entry per artifact, a directory NAME_COMPONENT_TARGET with an artifact_manifest.txt (base_lib_generic, core-hip_lib_gfx942) or the same name as a .tar.zst or .tar.xz archive; ARTIFACTS/base_lib_generic is itself the artifact base_lib_generic; pass its parent ARTIFACTS
        ");
}

/// `ROCM_SDK_WHEEL_PLATFORM_TAG` is parsed as `--platform-tag` is, but a
/// bad value is bad input, not a usage error: the plan is refused (exit 1)
/// naming the variable, an empty one counts as unset
/// (docs/behaviour.md#wheel-tags).
#[test]
fn a_bad_platform_tag_variable_is_bad_input_naming_it() {
    let artifacts = common::artifacts(fixtures::ExampleMode::Kpack);
    let plan = |value: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_therock-package"))
            .args(["plan", "--artifact-dir"])
            .arg(&artifacts)
            .env("ROCM_SDK_WHEEL_PLATFORM_TAG", value)
            .env_remove("THEROCK_PACKAGE_ROCM_SDK_LINUX")
            .output()
            .unwrap()
    };
    let bad = plan("linux-x86_64");
    assert_eq!(bad.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&bad.stderr), @r#"therock-package: error: invalid ROCM_SDK_WHEEL_PLATFORM_TAG: wheel tag "py3-none-linux-x86_64" is not valid: each part must be letters, digits and `_` (sets joined with `.`)"#);
    let manylinux = plan("manylinux_2_28_x86_64");
    assert!(
        String::from_utf8_lossy(&manylinux.stdout).contains(", manylinux_2_28_x86_64\n"),
        "{manylinux:?}"
    );
    let empty = plan("");
    assert_eq!(empty.status.code(), Some(0), "{empty:?}");
    assert!(
        String::from_utf8_lossy(&empty.stdout).contains(", linux_x86_64\n"),
        "{empty:?}"
    );
}

/// `SOURCE_DATE_EPOCH` is read by the program, not the library, and
/// passed to the build: it is every archive member's timestamp, and a
/// value that is no number of seconds is bad input naming the variable
/// (docs/pipeline.md, "Reproducible").
#[test]
fn source_date_epoch_is_the_timestamp_of_every_member_and_a_bad_one_is_named() {
    let artifacts = common::artifacts(fixtures::ExampleMode::Kpack);
    let dest = tempfile::tempdir().unwrap();
    let build = |value: &str, dest: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_therock-package"))
            .args(["build", "-q", "--artifact-dir"])
            .arg(&artifacts)
            .arg("--dest-dir")
            .arg(dest)
            .env("SOURCE_DATE_EPOCH", value)
            .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG")
            .env_remove("THEROCK_PACKAGE_ROCM_SDK_LINUX")
            .output()
            .unwrap()
    };
    let bad = build("yesterday", dest.path());
    assert_eq!(bad.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&bad.stderr), @"therock-package: error: SOURCE_DATE_EPOCH=yesterday is not a number of seconds: invalid digit found in string");
    assert!(!dest.path().join("dist").exists());

    common::ok(&build("1700000000", dest.path()));
    let sdist = dest.path().join("dist/rocm-7.1.0.tar.gz");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(&sdist).unwrap(),
    ));
    let mut members = 0;
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        assert_eq!(
            entry.header().mtime().unwrap(),
            1_700_000_000,
            "{}",
            entry.path().unwrap().display()
        );
        members += 1;
    }
    assert!(members > 0);
}
