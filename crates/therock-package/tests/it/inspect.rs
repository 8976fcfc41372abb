//! `therock-package inspect` on the built-in example: a tree and its
//! archives give identical output; usage errors exit 2, bad input exits 1.

use std::path::Path;
use std::process::{Command, Output};

use fixtures::{Example, ExampleMode, Layout};

fn example() -> &'static Example {
    fixtures::shared()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_therock-package"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn inspect(dir: &Path, json: bool) -> String {
    let mut args = vec!["inspect", "--artifact-dir", dir.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// File sizes depend on the host gcc; everything else in the snapshot must not.
fn redact_bytes(text: &str) -> String {
    text.lines()
        .map(|line| {
            for key in ["bytes ", "\"bytes\": "] {
                if let Some(at) = line.find(key) {
                    let start = at + key.len();
                    let end = line[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(line.len(), |i| start + i);
                    return format!("{}[bytes]{}", &line[..start], &line[end..]);
                }
            }
            line.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn tree_and_archives_print_the_same_text_and_json() {
    for mode in ExampleMode::ALL {
        for json in [false, true] {
            let tree = inspect(&example().artifact_dir(mode, Layout::Tree), json);
            for layout in [Layout::TarZst, Layout::TarXz] {
                let archived = inspect(&example().artifact_dir(mode, layout), json);
                assert_eq!(archived, tree, "{mode:?} {layout:?} json={json}");
            }
            let name = format!("{}_{}", mode.dir_name(), if json { "json" } else { "text" });
            insta::assert_snapshot!(name, redact_bytes(&tree));
        }
    }
}

#[test]
fn json_is_valid_and_names_mode_and_targets() {
    let out = inspect(
        &example().artifact_dir(ExampleMode::Kpack, Layout::TarZst),
        true,
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "kpack-split");
    assert_eq!(v["base_targets"], serde_json::json!(["gfx1100", "gfx942"]));
    assert_eq!(
        v["raw_targets"],
        serde_json::json!(["gfx1100", "gfx942", "gfx942:xnack+"])
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["inspect"][..],
        &["inspect", "--artifact-dir"][..],
        &["inspect", "--artifact-dir", ".", "--bogus"][..],
        &["frobnicate"][..],
    ] {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn bad_input_exits_1_with_one_line_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("nope");
    let cases: Vec<(std::path::PathBuf, String)> = {
        // No artifact at all: said so, not an internal manifest path.
        let empty = t.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        // An unsafe manifest line: the artifact and line are named.
        let evil = t.path().join("evil");
        std::fs::create_dir_all(evil.join("base_lib_generic")).unwrap();
        std::fs::write(
            evil.join("base_lib_generic/artifact_manifest.txt"),
            "../../etc\n",
        )
        .unwrap();
        vec![
            (missing.clone(), missing.display().to_string()),
            (
                empty.clone(),
                format!("no TheRock artifacts in {}", empty.display()),
            ),
            (
                evil,
                "base_lib_generic: artifact_manifest.txt line 1".to_owned(),
            ),
        ]
    };
    for (dir, named) in cases {
        let out = run(&["inspect", "--artifact-dir", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&named), "{err} should name {named}");
        assert!(out.stdout.is_empty());
    }
}
