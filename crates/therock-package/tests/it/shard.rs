//! Sharded releases (docs/releasing.md): `plan --shards N`, `build --shard
//! K/N` in separate processes and directories, `assemble`; the assembled
//! `dist/` is byte for byte the one-machine build, and broken shard sets
//! are refused by name.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Build, artifacts, build_shards, ok, shard_plan, therock_package};
use fixtures::ExampleMode;
use fixtures::files::files_with_bytes;

/// How many packages the plan of `mode` has.
fn package_count(mode: ExampleMode) -> usize {
    let plan: serde_json::Value = serde_json::from_str(&ok(&therock_package(&[
        "plan",
        "--artifact-dir",
        artifacts(mode).to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    plan["packages"].as_array().unwrap().len()
}

/// `therock-package assemble DIRS... --dest-dir DEST`.
fn assemble(dirs: &[PathBuf], dest: &Path) -> std::process::Output {
    let mut args = vec!["assemble".to_owned()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--dest-dir".to_owned(), dest.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    therock_package(&args)
}

/// The one-machine release: `build`, then `index` (per family where the
/// build wrote family directories), as `assemble` lays it out.
fn one_machine(mode: ExampleMode, extra: &[&str]) -> Build {
    let build = Build::new(mode, extra);
    let dist = build.dist();
    let per_family = fs::read_dir(&dist)
        .unwrap()
        .any(|e| e.unwrap().path().is_dir());
    let mut args = vec!["index", dist.to_str().unwrap()];
    if per_family {
        args.push("--per-family");
    }
    ok(&therock_package(&args));
    build
}

fn assert_same_files(mode: ExampleMode, what: &str, expected: &Path, got: &Path) {
    let (expected, got) = (files_with_bytes(expected), files_with_bytes(got));
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&expected),
        names(&got),
        "{mode:?} {what}: other files"
    );
    for ((name, a), (_, b)) in expected.iter().zip(&got) {
        assert!(
            a == b,
            "{mode:?} {what}: {name} differs from the one-machine build"
        );
    }
    assert!(expected.len() >= 7, "{mode:?}: {:?}", names(&expected));
}

/// Builds `mode` in each of `counts(packages)` shards and checks that each
/// set assembles to the one-machine `dist/`, byte for byte.
fn assert_shards_assemble(mode: ExampleMode, counts: impl Fn(usize) -> Vec<usize>) {
    let reference = one_machine(mode, &[]);
    let packages = package_count(mode);
    assert!(packages >= 4, "{mode:?}: {packages} packages");
    for count in counts(packages) {
        let work = tempfile::tempdir().unwrap();
        let shards = build_shards(work.path(), &artifacts(mode), count, &[]);
        let dest = work.path().join("release");
        ok(&assemble(&shards, &dest));
        assert_same_files(
            mode,
            &format!("{count} shards"),
            &reference.dist(),
            &dest.join("dist"),
        );
    }
}

/// CI's sample: an uneven split of one mode, one package per shard of the
/// other.
#[test]
fn sharded_builds_assemble_to_the_one_machine_dist() {
    assert_shards_assemble(ExampleMode::Kpack, |_| vec![3]);
    assert_shards_assemble(ExampleMode::Legacy, |packages| vec![packages]);
}

#[test]
#[ignore = "exhaustive: both modes in 1, 3 and one-package shards (cargo xtask slow)"]
fn every_shard_count_of_both_modes_assembles_to_the_one_machine_dist() {
    for mode in ExampleMode::ALL {
        assert_shards_assemble(mode, |packages| vec![1, 3, packages]);
    }
}

#[test]
fn shard_plan_is_a_deterministic_ci_matrix() {
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let matrix = shard_plan(&artifact_dir, 3, &[]);
    assert_eq!(matrix, shard_plan(&artifact_dir, 3, &[]));
    let keys: Vec<&String> = matrix.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["include"], "a CI matrix has `include` only");
    // Every package in exactly one shard; shards balanced by input bytes.
    let mut all: Vec<String> = matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["packages"].as_array().unwrap().clone())
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    all.sort();
    let count = all.len();
    all.dedup();
    assert_eq!(all.len(), count);
    assert_eq!(count, package_count(ExampleMode::Kpack));
    // Sizes (and so the digest) depend on the host's gcc; the split of
    // the example does not.
    let text = ok(&therock_package(&[
        "plan",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--shards",
        "3",
        "--json",
    ]));
    let plan_digest = matrix["include"][0]["plan"].as_str().unwrap();
    let redacted: Vec<String> = text
        .replace(plan_digest, "sha256:[plan]")
        .lines()
        .map(|line| match line.split_once("\"input_bytes\": ") {
            Some((indent, _)) => format!("{indent}\"input_bytes\": [bytes],"),
            None => line.to_owned(),
        })
        .collect();
    insta::assert_snapshot!("kpack_three_shards", redacted.join("\n"));
}

#[test]
fn shard_plan_refuses_more_shards_than_packages() {
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let too_many = (package_count(ExampleMode::Kpack) + 1).to_string();
    let out = therock_package(&[
        "plan",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--shards",
        &too_many,
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("too_many_shards", String::from_utf8_lossy(&out.stderr));
    let out = therock_package(&[
        "build",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--dest-dir",
        "/nonexistent",
        "--shard",
        "4/3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @"
    error: invalid value '4/3' for '--shard <K/N>': `4/3` is not K/N with 1 <= K <= N (shards are numbered from 1)

    For more information, try '--help'.
    ");
}

/// Linux (kpack) and "Windows" (a copy without the gfx942 artifacts) legs,
/// each planned from its own tree and split its own way, assemble into one
/// release with one `rocm` sdist, the same as the sdist each one-machine
/// build writes.
#[test]
fn linux_and_windows_legs_assemble_together() {
    let work = tempfile::tempdir().unwrap();
    let windows_artifacts = common::kpack_without_gfx942(work.path());
    let families = common::RELEASE_FAMILY_FLAGS;
    let mut windows_flags = vec!["--platform-tag", "win_amd64"];
    windows_flags.extend(families);
    let mut dirs = build_shards(
        &work.path().join("linux"),
        &artifacts(ExampleMode::Kpack),
        2,
        &families,
    );
    dirs.extend(build_shards(
        &work.path().join("windows"),
        &windows_artifacts,
        3,
        &windows_flags,
    ));
    let dest = work.path().join("release");
    let report = ok(&assemble(&dirs, &dest));
    assert!(report.contains("linux_x86_64: 2 shards"), "{report}");
    assert!(report.contains("win_amd64: 3 shards"), "{report}");
    let (linux, windows) = common::two_platform_release(true);
    let dist = dest.join("dist");
    let sdist = fs::read(dist.join("rocm-7.1.0.tar.gz")).unwrap();
    assert!(sdist == fs::read(linux.dist().join("rocm-7.1.0.tar.gz")).unwrap());
    for build in [&linux, &windows] {
        for (name, bytes) in files_with_bytes(&build.dist()) {
            assert!(
                fs::read(dist.join(&name)).unwrap() == bytes,
                "{name} differs"
            );
        }
    }
}

/// Runs `assemble` on a broken set and returns its error, the work
/// directory written as `[work]`; checks nothing was published.
fn refused(dirs: &[PathBuf], work: &Path) -> String {
    let dest = work.join("release");
    let out = assemble(dirs, &dest);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        fs::read_dir(dest.join("dist")).map_or(true, |mut d| d.next().is_none()),
        "a refused assemble published files"
    );
    String::from_utf8_lossy(&out.stderr).replace(&work.display().to_string(), "[work]")
}

/// Replaces plan digests (`sha256:` and 64 hex digits) with `sha256:[plan]`.
fn redact_digests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("sha256:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 7..];
        let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push_str(if hex == 64 {
            "sha256:[plan]"
        } else {
            "sha256:"
        });
        rest = &after[if hex == 64 { 64 } else { 0 }..];
    }
    out.push_str(rest);
    out
}

#[test]
fn assemble_refuses_broken_shard_sets() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    let kpack = artifacts(ExampleMode::Kpack);
    let shards = build_shards(&root.join("a"), &kpack, 3, &[]);

    // A missing shard.
    let missing = refused(&[shards[0].clone(), shards[2].clone()], root);
    insta::assert_snapshot!("missing_shard", redact_digests(&missing));

    // A shard given twice (the same one, or a rebuild of it elsewhere).
    let rebuilt = build_shards(&root.join("b"), &kpack, 3, &[]);
    let twice = refused(
        &[
            shards[0].clone(),
            shards[1].clone(),
            shards[2].clone(),
            rebuilt[1].clone(),
        ],
        root,
    );
    insta::assert_snapshot!("duplicated_shard", redact_digests(&twice));

    // A foreign shard: built with another version, same platform.
    let foreign = build_shards(&root.join("c"), &kpack, 3, &["--version", "7.1.1"]);
    let other_plan = refused(
        &[shards[0].clone(), foreign[1].clone(), shards[2].clone()],
        root,
    );
    insta::assert_snapshot!("foreign_shard", redact_digests(&other_plan));

    // A shard of another split of the same plan.
    let halves = build_shards(&root.join("d"), &kpack, 2, &[]);
    let other_count = refused(&[shards[0].clone(), halves[1].clone()], root);
    insta::assert_snapshot!("other_shard_count", redact_digests(&other_count));

    // A shard whose dist/ changed after its build.
    let tampered = root.join("tampered");
    ok(&std::process::Command::new("cp")
        .arg("-a")
        .arg(&shards[1])
        .arg(&tampered)
        .output()
        .unwrap());
    let wheel = fs::read_dir(tampered.join("dist"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .unwrap();
    let mut bytes = fs::read(&wheel).unwrap();
    bytes.push(0);
    fs::write(&wheel, bytes).unwrap();
    let changed = refused(
        &[shards[0].clone(), tampered.clone(), shards[2].clone()],
        root,
    );
    assert!(
        changed.contains("the shard's dist/ changed after its build"),
        "{changed}"
    );

    // A package in a shard's dist/ that its manifest does not list.
    let stray = root.join("stray");
    ok(&std::process::Command::new("cp")
        .arg("-a")
        .arg(&shards[1])
        .arg(&stray)
        .output()
        .unwrap());
    fs::copy(
        &wheel,
        stray
            .join("dist")
            .join("rocm_sdk_extra-7.1.0-py3-none-linux_x86_64.whl"),
    )
    .unwrap();
    let extra = refused(&[shards[0].clone(), stray, shards[2].clone()], root);
    insta::assert_snapshot!("unlisted_package", extra);

    // Not a shard at all.
    let plain = root.join("plain");
    fs::create_dir_all(plain.join("dist")).unwrap();
    let not_a_shard = refused(&[plain], root);
    insta::assert_snapshot!("not_a_shard", not_a_shard);

    // Legs that disagree on the rocm sdist's family lists.
    let linux = build_shards(
        &root.join("e"),
        &kpack,
        1,
        &["--linux-amdgpu-families=gfx94X-dcgpu"],
    );
    let windows = build_shards(
        &root.join("f"),
        &kpack,
        1,
        &[
            "--platform-tag",
            "win_amd64",
            "--linux-amdgpu-families=gfx110X-all",
        ],
    );
    let disagree = refused(&[linux[0].clone(), windows[0].clone()], root);
    insta::assert_snapshot!("legs_disagree", disagree);

    // An assembled release is never written over.
    let dest = root.join("release");
    fs::create_dir_all(dest.join("dist")).unwrap();
    fs::write(dest.join("dist").join("old.whl"), b"old").unwrap();
    let out = assemble(&shards, &dest);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(
        String::from_utf8_lossy(&out.stderr).replace(&root.display().to_string(), "[work]"),
        @"therock-package: error: [work]/release/dist is not empty; assemble writes a whole release: give a new or empty --dest-dir"
    );
    assert_eq!(fs::read(dest.join("dist").join("old.whl")).unwrap(), b"old");
}

/// Replaces the bytes of the package of `shard` whose path contains
/// `which` by `change(bytes)` and records the new hash and size in its
/// manifest, as a faulty runner would; returns the package's path.
fn vouch_for_changed_package(shard: &Path, which: &str, change: impl Fn(&mut Vec<u8>)) -> String {
    let manifest_path = shard.join("shard.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&manifest_path).unwrap()).unwrap();
    let packages = manifest["packages"].as_array_mut().unwrap();
    let record = packages
        .iter_mut()
        .find(|p| p["path"].as_str().unwrap().contains(which))
        .unwrap();
    let package = record["path"].as_str().unwrap().to_owned();
    let wheel = shard.join("dist").join(&package);
    let mut bytes = fs::read(&wheel).unwrap();
    change(&mut bytes);
    fs::write(&wheel, &bytes).unwrap();
    let sha = ok(&std::process::Command::new("sha256sum")
        .arg(&wheel)
        .output()
        .unwrap());
    record["sha256"] = sha.split_whitespace().next().unwrap().into();
    record["size"] = bytes.len().into();
    fs::write(&manifest_path, manifest.to_string()).unwrap();
    package
}

/// A shard whose package is broken although its manifest vouches for it
/// (a faulty runner): `verify` of the assembled release fails, and nothing
/// is published; a wheel `assemble` itself cannot read is refused before.
#[test]
fn assemble_publishes_nothing_that_fails_verify() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    let shards = build_shards(&root.join("a"), &artifacts(ExampleMode::Kpack), 2, &[]);
    // A flipped byte in the first member's data: METADATA still reads.
    let package = vouch_for_changed_package(&shards[1], "device_gfx942", |b| b[200] ^= 0xff);
    let error = refused(&shards, root);
    assert!(
        error.contains("the assembled release fails verify, so nothing was written")
            && error.contains("FAILED  well-formed")
            && error.contains(&package),
        "{error}"
    );
    let package = vouch_for_changed_package(&shards[1], "device_gfx942", |b| {
        *b = b"PK\x03\x04 not a wheel".to_vec();
    });
    let error = refused(&shards, root);
    assert!(
        error.contains(&format!(
            "cannot read [work]/a/shard-2-of-2/dist/{package}; rebuild shard 2/2"
        )) && error.contains("is not a zip archive every installer reads the same way"),
        "{error}"
    );
}

/// `assemble --json`: the document with `schema`, each platform's shards and
/// plan, and every file of the release.
#[test]
fn assemble_json_lists_the_platforms_and_every_file() {
    let mode = ExampleMode::Kpack;
    let work = tempfile::tempdir().unwrap();
    let shards = build_shards(work.path(), &artifacts(mode), 2, &[]);
    let dest = work.path().join("release");
    let mut args = vec!["assemble".to_owned(), "--json".to_owned()];
    args.extend(shards.iter().map(|d| d.display().to_string()));
    args.extend(["--dest-dir".to_owned(), dest.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json: serde_json::Value = serde_json::from_str(&ok(&therock_package(&args))).unwrap();
    assert_eq!(json["schema"], 1, "{json}");
    assert_eq!(json["platforms"][0]["shards"], 2, "{json}");
    assert_eq!(
        json["platforms"][0]["platform_tag"], "linux_x86_64",
        "{json}"
    );
    let files = json["files"].as_array().unwrap();
    let packages = files_with_bytes(&dest.join("dist"))
        .into_iter()
        .filter(|(n, _)| {
            Path::new(n)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("whl") || e.eq_ignore_ascii_case("gz"))
        })
        .count();
    assert_eq!(files.len(), packages, "{json}");
    for file in files {
        assert!(Path::new(file.as_str().unwrap()).is_file(), "{file}");
    }
}
