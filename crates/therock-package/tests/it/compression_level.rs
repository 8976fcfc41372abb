//! `--compression-level`: the deflate level of wheel members, 0 to store.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use fixtures::ExampleMode;

/// Per wheel of `dist`: the compression methods of its members and its size.
fn wheels(dist: &Path) -> Vec<(String, Vec<u16>, u64)> {
    let script = r"
import sys, zipfile, pathlib
for wheel in sorted(pathlib.Path(sys.argv[1]).glob('*.whl')):
    with zipfile.ZipFile(wheel) as z:
        methods = ' '.join(str(i.compress_type) for i in z.infolist())
    print(wheel.name, wheel.stat().st_size, methods, sep='\t')
";
    let out = ok(&Command::new("python3")
        .args(["-c", script])
        .arg(dist)
        .output()
        .unwrap());
    out.lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next().unwrap().to_owned();
            let size = fields.next().unwrap().parse().unwrap();
            let methods = fields
                .next()
                .unwrap()
                .split(' ')
                .map(|m| m.parse().unwrap())
                .collect();
            (name, methods, size)
        })
        .collect()
}

fn total(wheels: &[(String, Vec<u16>, u64)]) -> u64 {
    wheels.iter().map(|(_, _, size)| size).sum()
}

#[test]
fn the_level_sets_how_wheel_members_are_compressed() {
    let mode = ExampleMode::Kpack;
    let stored = wheels(&Build::new(mode, &["--compression-level", "0"]).dist());
    let fast = wheels(&Build::new(mode, &["--compression-level", "1"]).dist());
    let default = wheels(&Build::new(mode, &[]).dist());
    let explicit = wheels(&Build::new(mode, &["--compression-level", "6"]).dist());
    let small = wheels(&Build::new(mode, &["--compression-level", "12"]).dist());
    assert!(!stored.is_empty());
    // Level 0 stores every member, like --no-wheel-compression.
    for (name, methods, _) in &stored {
        assert!(methods.iter().all(|&m| m == 0), "{name}: {methods:?}");
    }
    for (name, methods, _) in fast.iter().chain(&default).chain(&small) {
        assert!(methods.iter().all(|&m| m == 8), "{name}: {methods:?}");
    }
    // 6 is the default; higher levels give smaller wheels.
    assert_eq!(default, explicit);
    assert!(total(&stored) > total(&fast));
    assert!(total(&fast) > total(&default));
    assert!(total(&default) > total(&small));
}

#[test]
fn conflicting_or_out_of_range_levels_are_refused() {
    let artifacts = artifacts(ExampleMode::Kpack);
    let dest = tempfile::tempdir().unwrap();
    let build = |extra: &[&str]| {
        let mut args = vec![
            "build",
            "--artifact-dir",
            artifacts.to_str().unwrap(),
            "--dest-dir",
            dest.path().to_str().unwrap(),
        ];
        args.extend(extra);
        therock_package(&args)
    };
    let out = build(&["--compression-level", "13"]);
    assert!(!out.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @"
    error: invalid value '13' for '--compression-level <LEVEL>': 13 is not in 0..=12

    For more information, try '--help'.
    ");

    let out = build(&["--no-wheel-compression", "--compression-level", "6"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @"
    error: --no-wheel-compression stores wheel members but --compression-level 6 deflates them; give one of them

    Usage: therock-package [OPTIONS] <COMMAND>

    For more information, try '--help'.
    ");
    // Nothing was written.
    assert!(!dest.path().join("dist").exists());

    // Storing twice over is not a conflict.
    ok(&build(&[
        "--no-wheel-compression",
        "--compression-level",
        "0",
    ]));
}
