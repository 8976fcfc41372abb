//! End to end: the install-time `rocm-sdk` on packages built from the
//! built-in example, installed with pip into fresh venvs (docs/behaviour.md#devel, #self-test).
//!
//! One build per mode per test binary; every test makes its own venvs, so
//! tests run in parallel.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use common::{Build, Venv, ok};
use fixtures::ExampleMode;
use fixtures::terminal::has_colour;

/// `--find-links` directories: `dist/`, plus the first family's directory
/// (its `rocm` sdist and devel wheel) in legacy mode.
fn find_links(mode: ExampleMode) -> Vec<PathBuf> {
    let dist = Build::shared(mode).dist();
    match mode {
        ExampleMode::Kpack => vec![dist],
        ExampleMode::Legacy => vec![dist.join("gfx94X-dcgpu"), dist],
    }
}

/// Everything a user installs: libraries, devel and profiler (and one
/// device package in kpack mode).
fn full(mode: ExampleMode) -> &'static [&'static str] {
    match mode {
        ExampleMode::Kpack => &["rocm[libraries,devel,profiler,device-gfx942]"],
        ExampleMode::Legacy => &["rocm[libraries,devel,profiler]"],
    }
}

fn pip(venv: &Venv, links: &[PathBuf], args: &[&str]) -> Output {
    let mut all = vec!["-q".to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    if args.first() == Some(&"install") {
        all.push("--no-index".to_owned());
        for link in links {
            all.push("--find-links".to_owned());
            all.push(link.display().to_string());
        }
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    venv.pip(&all)
}

/// A fresh venv with `requirements` installed from the example's build.
fn installed(mode: ExampleMode, requirements: &[&str]) -> Venv {
    let venv = Venv::new();
    let mut args = vec!["install"];
    args.extend(requirements);
    ok(&pip(&venv, &find_links(mode), &args));
    venv
}

/// The native program inside core.
fn native(venv: &Venv) -> PathBuf {
    venv.site_packages().join("rocm_sdk_core/_bin/rocm-sdk")
}

/// `text` with the venv's site-packages path replaced by `[site-packages]`.
fn redact_site(text: &str, sp: &Path) -> String {
    text.replace(
        sp.to_str().expect("a UTF-8 temporary path"),
        "[site-packages]",
    )
}

fn out_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A venv installed with everything and initialised once: the reference
/// tree each mode's concurrent and crash tests must reproduce. Tests only
/// read it.
fn reference(mode: ExampleMode) -> &'static (Venv, Vec<String>) {
    static LEGACY: OnceLock<(Venv, Vec<String>)> = OnceLock::new();
    static KPACK: OnceLock<(Venv, Vec<String>)> = OnceLock::new();
    let cell = match mode {
        ExampleMode::Legacy => &LEGACY,
        ExampleMode::Kpack => &KPACK,
    };
    cell.get_or_init(|| {
        let venv = installed(mode, full(mode));
        ok(&venv.run("rocm-sdk", &["init"]));
        let state = devel_state(&venv.site_packages());
        (venv, state)
    })
}

/// Everything observable about the devel tree, relative to site-packages:
/// each path with its kind, link text, the runtime file it is a hard link
/// of (or its size), plus the paths the devel and device RECORDs list.
fn devel_state(sp: &Path) -> Vec<String> {
    let mut owners: BTreeMap<(u64, u64), String> = BTreeMap::new();
    for rel in walk(sp, sp) {
        if rel.starts_with("_rocm_sdk_devel") {
            continue;
        }
        if let Ok(meta) = fs::symlink_metadata(sp.join(&rel))
            && meta.is_file()
        {
            owners.entry((meta.dev(), meta.ino())).or_insert(rel);
        }
    }
    let tree = sp.join("_rocm_sdk_devel");
    let mut state = Vec::new();
    for rel in walk(sp, &tree) {
        let meta = fs::symlink_metadata(sp.join(&rel)).unwrap();
        let line = if meta.is_dir() {
            format!("D {rel}")
        } else if meta.file_type().is_symlink() {
            format!(
                "L {rel} -> {}",
                fs::read_link(sp.join(&rel)).unwrap().display()
            )
        } else if let Some(owner) = owners.get(&(meta.dev(), meta.ino())) {
            format!("H {rel} = {owner}")
        } else {
            format!("F {rel} {} {:o}", meta.len(), meta.mode() & 0o777)
        };
        state.push(line);
    }
    for name in fs::read_dir(sp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
    {
        if name.starts_with("rocm_sdk_devel-") || name.starts_with("rocm_sdk_device_") {
            let record = fs::read_to_string(sp.join(&name).join("RECORD")).unwrap();
            let rows: BTreeSet<&str> = record.lines().filter(|l| l.ends_with(",,")).collect();
            state.extend(rows.into_iter().map(|r| format!("R {name}: {r}")));
        }
    }
    state.sort();
    state
}

/// Every path under `dir`, relative to `base`, sorted (links not
/// followed); nothing when `dir` does not exist.
fn walk(base: &Path, dir: &Path) -> Vec<String> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let prefix = dir.strip_prefix(base).unwrap();
    fixtures::files::relative_entries(dir)
        .into_iter()
        .map(|rel| prefix.join(rel).display().to_string())
        .collect()
}

/// Every path under the devel tree is listed in some RECORD (devel or
/// device), so `pip uninstall` can remove it.
fn assert_tree_recorded(sp: &Path) {
    let mut listed = BTreeSet::new();
    for name in fs::read_dir(sp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
    {
        if name.starts_with("rocm_sdk_devel-") || name.starts_with("rocm_sdk_device_") {
            let record = fs::read_to_string(sp.join(&name).join("RECORD")).unwrap();
            listed.extend(
                record
                    .lines()
                    .map(|l| l.split(',').next().unwrap().to_owned()),
            );
        }
    }
    for rel in walk(sp, &sp.join("_rocm_sdk_devel")) {
        if fs::symlink_metadata(sp.join(&rel)).unwrap().is_dir() {
            continue;
        }
        assert!(listed.contains(&rel), "{rel} is not listed in any RECORD");
    }
}

/// Starts `n` copies of `program args` at once and waits for all.
fn concurrently(n: usize, program: &Path, args: &[&str]) -> Vec<Output> {
    let children: Vec<_> = (0..n)
        .map(|_| {
            Command::new(program)
                .args(args)
                .env_remove("LD_LIBRARY_PATH")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn eight_concurrent_inits_all_succeed_with_the_reference_tree() {
    for mode in ExampleMode::ALL {
        let venv = installed(mode, full(mode));
        let outputs = concurrently(8, &venv.bin("rocm-sdk"), &["init", "--quiet"]);
        for out in &outputs {
            ok(out);
        }
        assert_eq!(
            devel_state(&venv.site_packages()),
            reference(mode).1,
            "{mode:?}"
        );
    }
}

#[test]
fn eight_concurrent_first_launches_of_a_devel_tool_agree() {
    for mode in ExampleMode::ALL {
        let venv = installed(mode, full(mode));
        let root = venv.site_packages().join("_rocm_sdk_devel");
        for out in concurrently(8, &venv.bin("hipconfig"), &["--rocmpath"]) {
            assert_eq!(ok(&out).trim(), root.display().to_string(), "{mode:?}");
        }
        assert_eq!(
            devel_state(&venv.site_packages()),
            reference(mode).1,
            "{mode:?}"
        );
    }
}

#[test]
fn kill_9_during_init_recovers_to_the_reference_tree_and_uninstalls_cleanly() {
    let mode = ExampleMode::Kpack;
    let venv = Venv::new();
    let fresh = venv.site_files();
    let mut install = vec!["install"];
    install.extend(full(mode));
    ok(&pip(&venv, &find_links(mode), &install));
    let sp = venv.site_packages();
    for round in 0..12u64 {
        // Delays from 0 to ~16 ms cover the whole init (a few ms here);
        // the tree is removed before each round so every kill hits an init.
        if round % 4 == 0 {
            let _ = fs::remove_dir_all(sp.join("_rocm_sdk_devel"));
        }
        let mut child = Command::new(native(&venv))
            .args(["init", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_micros(round * 1500));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        if sp.join("_rocm_sdk_devel").exists() {
            assert_tree_recorded(&sp);
        }
        if round % 4 == 3 {
            // Put the tar back as pip would after a forced reinstall, so
            // later rounds interrupt unpacking again.
            ok(&pip(
                &venv,
                &find_links(mode),
                &[
                    "install",
                    "--force-reinstall",
                    "--no-deps",
                    "rocm-sdk-devel",
                ],
            ));
        }
    }
    ok(&venv.run("rocm-sdk", &["init"]));
    assert_eq!(devel_state(&sp), reference(mode).1);
    ok(&pip(
        &venv,
        &[],
        &[
            "uninstall",
            "-y",
            "rocm-sdk-devel",
            "rocm-sdk-device-gfx942",
            "rocm-profiler",
            "rocm-sdk-libraries",
            "rocm-sdk-core",
            "rocm",
        ],
    ));
    assert_eq!(venv.site_files(), fresh, "uninstall left files behind");
}

#[test]
fn uninstalling_devel_and_device_leaves_nothing_in_either_order() {
    let cases: [(ExampleMode, &[&str]); 3] = [
        (
            ExampleMode::Kpack,
            &["rocm-sdk-devel", "rocm-sdk-device-gfx942"],
        ),
        (
            ExampleMode::Kpack,
            &["rocm-sdk-device-gfx942", "rocm-sdk-devel"],
        ),
        (ExampleMode::Legacy, &["rocm-sdk-devel"]),
    ];
    for (mode, packages) in cases {
        let venv = installed(mode, &["rocm[libraries]"]);
        let before = venv.site_files();
        let mut install = vec!["install"];
        install.extend(packages);
        ok(&pip(&venv, &find_links(mode), &install));
        ok(&venv.run("hipconfig", &["--rocmpath"]));
        let sp = venv.site_packages();
        assert!(
            sp.join("_rocm_sdk_devel/lib/cmake/hip/hip-config.cmake")
                .exists()
        );
        let mut uninstall = vec!["uninstall", "-y"];
        uninstall.extend(packages);
        ok(&pip(&venv, &[], &uninstall));
        assert_eq!(
            venv.site_files(),
            before,
            "{mode:?} {packages:?}: uninstall left files behind"
        );
    }
}

#[test]
fn a_device_wheel_added_later_is_linked_by_the_next_tool_launch() {
    let mode = ExampleMode::Kpack;
    let venv = installed(mode, &["rocm[libraries,devel]"]);
    let sp = venv.site_packages();
    ok(&venv.run("hipconfig", &["--rocmpath"]));
    ok(&pip(
        &venv,
        &find_links(mode),
        &["install", "rocm-sdk-device-gfx1100"],
    ));
    let links: serde_json::Value = serde_json::from_slice(
        &fs::read(sp.join("_rocm_sdk_libraries/.devel_links/gfx1100.json")).unwrap(),
    )
    .unwrap();
    let relpaths: Vec<String> = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["relpath"].as_str().unwrap().to_owned())
        .collect();
    assert!(!relpaths.is_empty());
    for rel in &relpaths {
        assert!(
            !sp.join("_rocm_sdk_devel").join(rel).exists(),
            "{rel} linked before any launch"
        );
    }
    // The next launch of any devel tool reconciles, with no `rocm-sdk init`.
    ok(&venv.run("hipconfig", &["--rocmpath"]));
    for rel in &relpaths {
        let runtime = fs::metadata(sp.join("_rocm_sdk_libraries").join(rel)).unwrap();
        let devel = fs::metadata(sp.join("_rocm_sdk_devel").join(rel)).unwrap();
        assert_eq!(
            (runtime.dev(), runtime.ino()),
            (devel.dev(), devel.ino()),
            "{rel}"
        );
    }
    let stamp = fs::read_to_string(sp.join("_rocm_sdk_devel/.device-links-stamp")).unwrap();
    assert!(stamp.contains("rocm_sdk_device_gfx1100-"), "{stamp}");
    // And a removal is picked up the same way.
    ok(&pip(
        &venv,
        &[],
        &["uninstall", "-y", "rocm-sdk-device-gfx1100"],
    ));
    ok(&venv.run("hipconfig", &["--rocmpath"]));
    for rel in &relpaths {
        assert!(
            !sp.join("_rocm_sdk_devel").join(rel).exists(),
            "{rel} still linked"
        );
    }
    let out = ok(&venv.run("rocm-sdk", &["test"]));
    assert!(out.trim_end().ends_with(" passed, 0 failed"), "{out}");
}

/// The counts of the final line `N passed, N failed`.
fn totals(text: &str) -> (usize, usize) {
    let last = text.trim_end().lines().last().unwrap_or_default();
    let (passed, failed) = last
        .strip_suffix(" failed")
        .and_then(|l| l.split_once(" passed, "))
        .unwrap_or_else(|| panic!("no totals line in:\n{text}"));
    (passed.parse().unwrap(), failed.parse().unwrap())
}

#[test]
fn rocm_sdk_test_passes_on_a_healthy_install() {
    for mode in ExampleMode::ALL {
        let venv = &reference(mode).0;
        let out = venv.run("rocm-sdk", &["test"]);
        let text = out_text(&out);
        assert!(out.status.success(), "{mode:?}:\n{text}");
        let (passed, failed) = totals(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(failed, 0, "{text}");
        assert!(passed > 10, "{text}");
        for category in [
            "record:",
            "libraries:",
            "needed:",
            "scripts:",
            "versions:",
            "packages:",
        ] {
            assert!(
                text.contains(&format!("PASS {category}")),
                "{mode:?} lacks {category}:\n{text}"
            );
        }
        assert!(text.contains("PASS devel: hipconfig --rocmpath"), "{text}");
        assert!(
            text.contains("PASS devel: lib/cmake/hip/hip-config.cmake"),
            "{text}"
        );
        assert!(
            text.contains("PASS profiler: rocprof-sys-run --version"),
            "{text}"
        );
        assert!(text.contains("mirrored"), "{text}");
        assert!(text.contains("PASS preload: library path"), "{text}");
        if mode == ExampleMode::Kpack {
            assert!(
                text.contains("PASS preload: libamdhip64.so from Python (after initialize_process(preload_shortnames=['amdhip64'])"),
                "{text}"
            );
        }
        // `python -m rocm_sdk test --json` reaches the same program.
        let json = ok(&venv.run("python", &["-m", "rocm_sdk", "test", "--json"]));
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(report["failed"], 0);
        assert_eq!(report["passed"], passed);
        let loaded = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["category"] == "libraries" && c["outcome"] == "passed")
            .count();
        assert!(loaded >= 5, "{json}");
    }
}

#[test]
fn the_library_path_is_one_call_in_both_languages_and_unpacks_nothing() {
    for mode in ExampleMode::ALL {
        let venv = installed(mode, full(mode));
        let sp = venv.site_packages();
        let joined = ok(&venv.run("rocm-sdk", &["path", "--library-path"]));
        let code = "import os, rocm_sdk\n\
            print(os.pathsep.join(str(p) for p in rocm_sdk.library_directories()))";
        let python = ok(&venv.run("python", &["-I", "-c", code]));
        assert_eq!(joined, python, "{mode:?}");
        let core = "_rocm_sdk_core";
        let libraries = match mode {
            ExampleMode::Kpack => "_rocm_sdk_libraries",
            ExampleMode::Legacy => "_rocm_sdk_libraries_gfx94X_dcgpu",
        };
        let expected: Vec<String> = [
            format!("{libraries}/lib"),
            format!("{core}/lib"),
            format!("{core}/lib/rocm_sysdeps/lib"),
            format!("{core}/lib/host-math/lib"),
            format!("{core}/lib/llvm/lib"),
            "_rocm_profiler/lib".to_owned(),
        ]
        .into_iter()
        .filter(|d| sp.join(d).is_dir())
        .map(|d| sp.join(d).display().to_string())
        .collect();
        assert!(expected.len() >= 3, "{mode:?}: {expected:?}");
        assert_eq!(joined.trim_end(), expected.join(":"), "{mode:?}");
        // Never unpacks devel, though it is installed.
        assert!(!sp.join("_rocm_sdk_devel").exists(), "{mode:?}");
        let json: serde_json::Value = serde_json::from_str(&ok(
            &venv.run("rocm-sdk", &["path", "--library-path", "--json"])
        ))
        .unwrap();
        assert_eq!(json["schema"], 1);
        assert_eq!(
            json["directories"].as_array().unwrap().len(),
            expected.len()
        );
    }
}

/// A fully installed and initialised venv of `mode`, broken by `damage`;
/// `rocm-sdk test` must fail and its output must contain each of `causes`.
fn assert_test_names(mode: ExampleMode, damage: impl FnOnce(&Venv), causes: &[&str]) {
    let venv = installed(mode, full(mode));
    ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
    damage(&venv);
    let out = venv.run("rocm-sdk", &["test"]);
    let text = out_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let (_, failed) = totals(&String::from_utf8_lossy(&out.stdout));
    assert!(failed > 0, "{text}");
    for cause in causes {
        assert!(
            text.lines()
                .any(|l| l.starts_with("FAIL") && l.contains(cause)),
            "no FAIL line names {cause:?}:\n{text}"
        );
    }
    let json = venv.run("rocm-sdk", &["test", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["failed"].as_u64().unwrap() as usize, failed);
}

#[test]
fn rocm_sdk_test_names_a_deleted_library() {
    assert_test_names(
        ExampleMode::Kpack,
        |venv| {
            fs::remove_file(
                venv.site_packages()
                    .join("_rocm_sdk_core/lib/libamdhip64.so.7"),
            )
            .unwrap();
        },
        &[
            "_rocm_sdk_core/lib/libamdhip64.so.7: missing",
            "NEEDED libamdhip64.so.7 not found",
            "libamdhip64.so.7: cannot open shared object file",
        ],
    );
}

#[test]
fn rocm_sdk_test_names_a_tampered_file() {
    assert_test_names(
        ExampleMode::Legacy,
        |venv| {
            let header = venv
                .site_packages()
                .join("_rocm_sdk_core/include/hip/hip_version.h");
            let mut bytes = fs::read(&header).unwrap();
            bytes[0] ^= 1; // same size, different bytes
            fs::write(&header, bytes).unwrap();
        },
        &["_rocm_sdk_core/include/hip/hip_version.h: sha256 differs"],
    );
}

#[test]
fn rocm_sdk_test_names_a_mismatched_version() {
    let mode = ExampleMode::Kpack;
    let newer = Build::new(mode, &["--version", "7.2.0"]);
    assert_test_names(
        mode,
        |venv| {
            ok(&pip(
                venv,
                &[newer.dist()],
                &[
                    "install",
                    "--no-deps",
                    "--force-reinstall",
                    "rocm-sdk-libraries==7.2.0",
                ],
            ));
        },
        &["rocm-sdk-libraries is 7.2.0 but rocm-sdk-core is 7.1.0"],
    );
}

#[test]
fn commands_answer_and_errors_say_what_to_do() {
    let mode = ExampleMode::Kpack;
    let venv = installed(mode, &["rocm[libraries]"]);
    let sp = venv.site_packages();

    let help = ok(&venv.run("rocm-sdk", &["--help"]));
    assert!(help.contains("Usage:"), "{help}");
    for command in ["init", "path", "version", "targets", "test"] {
        assert!(help.contains(command), "{help}");
    }
    assert_eq!(
        venv.run("rocm-sdk", &["no-such-command"]).status.code(),
        Some(2)
    );

    assert_eq!(
        ok(&venv.run("rocm-sdk", &["version"])).trim(),
        fixtures::VERSION
    );
    let version: serde_json::Value =
        serde_json::from_str(&ok(&venv.run("rocm-sdk", &["version", "--json"]))).unwrap();
    assert_eq!(version["version"], fixtures::VERSION);

    let raw: serde_json::Value = serde_json::from_slice(
        &fs::read(sp.join("_rocm_sdk_core/share/therock/dist_info.json")).unwrap(),
    )
    .unwrap();
    let raw = raw["dist_amdgpu_targets"].as_str().unwrap();
    assert_eq!(ok(&venv.run("rocm-sdk", &["targets"])).trim(), raw);
    let targets: serde_json::Value =
        serde_json::from_str(&ok(&venv.run("rocm-sdk", &["targets", "--json"]))).unwrap();
    let expected: Vec<&str> = raw.split(';').collect();
    assert_eq!(targets["targets"], serde_json::json!(expected));
    assert_eq!(
        ok(&venv.run("python", &["-m", "rocm_sdk", "targets"])).trim(),
        raw
    );

    // No devel: `path` says which extra to install, exit 1.
    let out = venv.run("rocm-sdk", &["path", "--cmake"]);
    assert_eq!(out.status.code(), Some(1));
    let text = out_text(&out);
    insta::assert_snapshot!(redact_site(&text, &sp), @r#"rocm-sdk: error: rocm-sdk-devel is not installed in [site-packages]; install it with `pip install "rocm[devel]==7.1.0"`"#);

    ok(&pip(
        &venv,
        &find_links(mode),
        &["install", "rocm-sdk-devel"],
    ));
    let devel_info = fixtures::files::entry_starting_with(&sp, "rocm_sdk_devel-");

    // Read-only site-packages (another user): nothing changes, the message
    // says what to do.
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(native(&venv))
        .arg("init")
        .output()
        .unwrap();
    let text = out_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    insta::assert_snapshot!(redact_site(&text, &sp), @"rocm-sdk: error: site-packages [site-packages] is read-only for this user; run `rocm-sdk init` once as the user who installed the packages, or install into a writable virtual environment: Permission denied (os error 13)");
    assert!(!sp.join("_rocm_sdk_devel").exists());

    // A site-packages not managed by pip (no RECORD).
    let record = devel_info.join("RECORD");
    let saved = fs::read(&record).unwrap();
    fs::remove_file(&record).unwrap();
    let text = out_text(&venv.run("rocm-sdk", &["init"]));
    insta::assert_snapshot!(redact_site(&text, &sp), @"rocm-sdk: error: [site-packages]/rocm_sdk_devel-7.1.0.dist-info has no RECORD, so this site-packages is managed by something other than pip (a system package manager?); the devel tree cannot be recorded for uninstall. Install rocm-sdk-devel with pip into a virtual environment (`python -m venv`) instead");
    fs::write(&record, saved).unwrap();

    // A devel tarball truncated after install: its RECORD row says so.
    let tar = sp.join("rocm_sdk_devel/_devel.tar");
    let bytes = fs::read(&tar).unwrap();
    fs::write(&tar, &bytes[..bytes.len() / 2]).unwrap();
    let out = venv.run("rocm-sdk", &["path", "--root"]);
    let text = out_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let sizes = format!("{} bytes, RECORD lists {}", bytes.len() / 2, bytes.len());
    insta::assert_snapshot!(
        redact_site(&text, &sp).replace(&sizes, "[half] bytes, RECORD lists [whole]"),
        @"rocm-sdk: error: the devel tar [site-packages]/rocm_sdk_devel/_devel.tar changed after it was installed (it is [half] bytes, RECORD lists [whole]); nothing was unpacked. Reinstall it with `pip install --force-reinstall rocm-sdk-devel`"
    );
    // `rocm-sdk test` reports it as a failed check rather than stopping.
    let out = venv.run("rocm-sdk", &["test"]);
    let text = out_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL devel-unpack"), "{text}");
    fs::write(&tar, bytes).unwrap();

    let root = ok(&venv.run("rocm-sdk", &["path", "--root"]));
    assert_eq!(
        root.trim(),
        sp.join("_rocm_sdk_devel").display().to_string()
    );
    assert!(
        fs::metadata(sp.join("_rocm_sdk_devel/bin/hipconfig"))
            .unwrap()
            .permissions()
            .mode()
            & 0o111
            != 0
    );
    assert_eq!(
        ok(&venv.run("rocm-sdk", &["path", "--cmake"])).trim(),
        sp.join("_rocm_sdk_devel/lib/cmake").display().to_string()
    );
}

#[test]
fn a_release_with_a_nonce_installs_and_passes_the_self_check() {
    // `--version-suffix 123`: every platform package directory, the devel
    // tree and the device wheels' devel links carry it.
    let build = Build::new(ExampleMode::Kpack, &["--version-suffix", "123"]);
    let venv = Venv::new();
    ok(&pip(
        &venv,
        &[build.dist()],
        &["install", "rocm[libraries,devel,profiler,device-gfx942]"],
    ));
    ok(&venv.run("rocm-sdk", &["init"]));
    let sp = venv.site_packages();
    for dir in [
        "_rocm_sdk_core123",
        "_rocm_sdk_libraries123",
        "_rocm_profiler123",
    ] {
        assert!(sp.join(dir).join("__init__.py").is_file(), "{dir}");
    }
    assert!(sp.join("_rocm_sdk_devel123/bin").is_dir());
    for unsuffixed in ["_rocm_sdk_core", "_rocm_sdk_libraries", "_rocm_sdk_devel"] {
        assert!(!sp.join(unsuffixed).exists(), "{unsuffixed} exists");
    }
    // A device file is hard-linked into the suffixed devel tree.
    let device = sp.join("_rocm_sdk_libraries123/lib/rocblas/library/TensileLibrary_gfx942.co");
    let linked = sp.join("_rocm_sdk_devel123/lib/rocblas/library/TensileLibrary_gfx942.co");
    let (a, b) = (
        fs::metadata(&device).unwrap(),
        fs::metadata(&linked).unwrap(),
    );
    assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()));
    let out = venv.run("rocm-sdk", &["test"]);
    let text = out_text(&out);
    assert!(out.status.success(), "{text}");
    assert_eq!(totals(&String::from_utf8_lossy(&out.stdout)).1, 0, "{text}");
    assert!(
        ok(&venv.run("rocm-sdk", &["path", "--root"])).trim_end()
            == sp.join("_rocm_sdk_devel123").display().to_string()
    );
}

/// `program args…` on a pseudo-terminal, as a person's shell runs it;
/// everything the terminal showed.
fn on_a_terminal(program: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = fixtures::terminal::command(program, args);
    command.env_remove("ROCM_SDK_LOG").envs(env.iter().copied());
    ok(&command.output().expect("script (util-linux) runs"))
}

/// Reinstalls the devel wheel, so the next `init` unpacks again.
fn repack_devel(venv: &Venv) {
    ok(&pip(
        venv,
        &find_links(ExampleMode::Kpack),
        &[
            "install",
            "--force-reinstall",
            "--no-deps",
            "rocm-sdk-devel",
        ],
    ));
    assert!(!venv.site_packages().join("_rocm_sdk_devel").exists());
}

#[test]
fn terminal_logs_json_and_version_follow_the_conventions() {
    let venv = installed(ExampleMode::Kpack, &["rocm[libraries,devel]"]);
    let sp = venv.site_packages();
    let rocm_sdk = native(&venv);

    // `--version` prints what `version` prints, through every entry point.
    let version = ok(&venv.run("rocm-sdk", &["version"]));
    assert_eq!(version, format!("{}\n", fixtures::VERSION));
    assert_eq!(ok(&venv.run("rocm-sdk", &["--version"])), version);
    assert_eq!(
        ok(&venv.run("python", &["-m", "rocm_sdk", "--version"])),
        version
    );

    // A terminal: `init` shows the unpack's progress, in colour.
    // (An ETA only once it means something: a second of work measured,
    // which this unpack may not reach.)
    let screen = on_a_terminal(&rocm_sdk, &["init"], &[]);
    assert!(screen.contains(" files"), "{screen:?}");
    assert!(screen.contains("/s"), "{screen:?}");
    assert!(has_colour(&screen), "{screen:?}");
    assert!(screen.contains("devel tree ready: "), "{screen:?}");

    // NO_COLOR: the same display without colour.
    repack_devel(&venv);
    let screen = on_a_terminal(&rocm_sdk, &["init"], &[("NO_COLOR", "1")]);
    assert!(screen.contains(" files"), "{screen:?}");
    assert!(!has_colour(&screen), "{screen:?}");

    // A pipe: no display, no escape codes, only the warnings on stderr;
    // `-q`: nothing at all.
    repack_devel(&venv);
    let out = venv.run("rocm-sdk", &["init"]);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!log.contains('\x1b'), "{log:?}");
    assert!(
        log.lines().all(|l| l.starts_with("rocm-sdk: warning: ")),
        "{log}"
    );
    let text = ok(&out);
    assert!(text.starts_with("devel tree ready: "), "{text}");
    assert!(!text.contains('\x1b'), "{text:?}");
    let out = venv.run("rocm-sdk", &["-q", "init"]);
    assert_eq!(out_text(&out), "");
    ok(&out);

    // `init --json`: what was unpacked; then `null` when already there.
    repack_devel(&venv);
    let sp_text = sp.to_str().unwrap();
    let redact = |text: String| text.replace(sp_text, "[site-packages]");
    let first = redact(ok(&venv.run("rocm-sdk", &["init", "--json"])));
    insta::assert_snapshot!("rocm_sdk_init_json_unpacking", first);
    let again = redact(ok(&venv.run("rocm-sdk", &["init", "--json"])));
    insta::assert_snapshot!("rocm_sdk_init_json_already_unpacked", again);

    // `path --json`: all three paths; alone or with one of the flags.
    let paths = redact(ok(&venv.run("rocm-sdk", &["path", "--json"])));
    insta::assert_snapshot!("rocm_sdk_path_json", paths);
    assert_eq!(
        redact(ok(&venv.run("rocm-sdk", &["path", "--cmake", "--json"]))),
        paths
    );
    let json: serde_json::Value =
        serde_json::from_str(&paths.replace("[site-packages]", sp_text)).unwrap();
    assert_eq!(
        ok(&venv.run("rocm-sdk", &["path", "--cmake"])).trim(),
        json["cmake"]
    );
    // Still one of the flags (or `--json`), and only one of the three.
    assert_eq!(venv.run("rocm-sdk", &["path"]).status.code(), Some(2));
    assert_eq!(
        venv.run("rocm-sdk", &["path", "--root", "--bin"])
            .status
            .code(),
        Some(2)
    );

    // RUST_LOG gives debug lines (overriding `-q`); ROCM_SDK_LOG wins over it.
    let out = Command::new(&rocm_sdk)
        .args(["-q", "path", "--root"])
        .env("RUST_LOG", "debug")
        .env_remove("ROCM_SDK_LOG")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        log.contains("DEBUG") && log.contains("site-packages: "),
        "{log}"
    );
    assert!(!log.contains('\x1b'), "{log:?}");
    let out = Command::new(&rocm_sdk)
        .args(["path", "--root"])
        .env("RUST_LOG", "debug")
        .env("ROCM_SDK_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Runs `program ARGS` with `env` set (and `cwd`, when given), within 4
/// GiB of address space, killing it after `deadline`: a case that once
/// hung or grew without bound fails its test instead of stalling the suite
/// or the machine.
fn run_within(
    program: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
    cwd: Option<&Path>,
    deadline: Duration,
) -> Output {
    let mut command = Command::new("prlimit");
    command
        .args(["--as=4294967296", "--"])
        .arg(program)
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PYTHONPATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{} {args:?} did not finish within {deadline:?}:\n{}",
                program.display(),
                out_text(&out)
            );
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// docs/rocm-sdk.md#reading-an-installation: a RECORD row leading out of
/// site-packages (to `/dev/zero`) and a RECORD that is a link to
/// `/dev/zero` are failures the self-check names, never files it reads
/// (the first read forever, the second grew until allocation failed).
#[test]
fn the_self_check_reads_nothing_outside_and_no_device() {
    let venv = installed(ExampleMode::Kpack, full(ExampleMode::Kpack));
    ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
    let sp = venv.site_packages();
    let core_record = fs::read_dir(&sp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("rocm_sdk_core-"))
        .unwrap()
        .join("RECORD");
    let mut record = fs::read_to_string(&core_record).unwrap();
    record.push_str(
        "../../../../../../../../../../dev/zero,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,5\n",
    );
    fs::write(&core_record, record).unwrap();
    let libraries_record = sp.join(format!(
        "rocm_sdk_libraries-{}.dist-info/RECORD",
        fixtures::VERSION
    ));
    fs::remove_file(&libraries_record).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &libraries_record).unwrap();
    let python = venv.bin("python");
    let out = run_within(
        &native(&venv),
        &["test"],
        &[("ROCM_SDK_PYTHON", &python)],
        None,
        Duration::from_mins(5),
    );
    let text = out_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let fail = |needle: &str| {
        assert!(
            text.lines()
                .any(|l| l.starts_with("FAIL") && l.contains(needle)),
            "no FAIL line names {needle:?}:\n{text}"
        );
    };
    fail("../../../../../../../../../../dev/zero: it lies outside site-packages");
    fail("RECORD: it is not a regular file");
}

/// A `rocm_sdk` that `PYTHONPATH` puts before site-packages is what every
/// Python of the user imports: a failure, though the self-check's own
/// isolated Python never sees it. One in the working directory is what
/// `python -c`, `-m` and the interactive interpreter import: a warning.
#[test]
fn a_shadowing_rocm_sdk_is_reported() {
    let venv = &reference(ExampleMode::Kpack).0;
    let shadow = tempfile::tempdir().unwrap();
    fs::create_dir(shadow.path().join("rocm_sdk")).unwrap();
    fs::write(shadow.path().join("rocm_sdk/__init__.py"), "").unwrap();
    let python = venv.bin("python");
    let run = |env: &[(&str, &Path)], cwd: Option<&Path>| {
        let out = run_within(&native(venv), &["test"], env, cwd, Duration::from_mins(5));
        out_text(&out)
    };
    let text = run(
        &[("ROCM_SDK_PYTHON", &python), ("PYTHONPATH", shadow.path())],
        None,
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("FAIL packages: rocm_sdk shadowed")),
        "{text}"
    );
    assert!(
        text.contains("remove that directory from PYTHONPATH"),
        "{text}"
    );
    let text = run(&[("ROCM_SDK_PYTHON", &python)], Some(shadow.path()));
    assert!(
        text.lines()
            .any(|l| l.starts_with("WARN packages: rocm_sdk shadowed")),
        "{text}"
    );
    assert!(!text.contains("FAIL packages"), "{text}");
}

/// docs/devel-tar.md#confinement: a state naming files outside
/// site-packages for a device that is gone, with the stamp stale: no
/// command and no tool launch deletes anything outside.
#[test]
fn a_hostile_state_touches_nothing_outside_on_any_launch() {
    let venv = installed(ExampleMode::Kpack, full(ExampleMode::Kpack));
    ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
    let sp = venv.site_packages();
    let outside = venv.scratch().join("outside");
    fs::create_dir_all(outside.join("emptydir")).unwrap();
    fs::write(outside.join("file.txt"), "file").unwrap();
    let tree = sp.join("_rocm_sdk_devel");
    for launch in [
        ["rocm-sdk", "init"],
        ["rocm-sdk", "path"],
        ["hipconfig", "--rocmpath"],
    ] {
        let state = serde_json::json!({"devices": {
            format!("rocm_sdk_device_gfx1100-{}.dist-info", fixtures::VERSION): {
                "links": [outside.join("file.txt"), "../../../../outside/file.txt"],
                "sources": [],
                "created_dirs": [outside.join("emptydir")],
            }
        }});
        fs::write(tree.join(".device-links-state.json"), state.to_string()).unwrap();
        fs::write(tree.join(".device-links-stamp"), "stale\n").unwrap();
        let args = if launch[1] == "path" {
            vec!["path", "--root"]
        } else {
            vec![launch[1]]
        };
        let out = venv.run(launch[0], &args);
        assert!(out.status.success(), "{launch:?}: {}", out_text(&out));
        assert_eq!(
            fs::read(outside.join("file.txt")).unwrap(),
            b"file",
            "{launch:?}"
        );
        assert!(outside.join("emptydir").is_dir(), "{launch:?}");
    }
}

/// docs/devel-tar.md#owner: root running `init` or a devel tool in another
/// user's venv changes nothing there (before, the tree became root's and
/// the owner's `pip uninstall` failed), and says what to do.
#[test]
fn root_does_not_change_another_users_venv() {
    if !fixtures::privileges::bypasses_permissions() {
        // Making a tree another user's takes root.
        return;
    }
    let venv = installed(ExampleMode::Kpack, full(ExampleMode::Kpack));
    let chown = Command::new("chown")
        .args(["-R", "4321:4321"])
        .arg(venv.root())
        .status()
        .unwrap();
    assert!(chown.success());
    let before = venv.site_files();
    for (program, args) in [
        ("rocm-sdk", &["init"][..]),
        ("hipconfig", &["--rocmpath"][..]),
    ] {
        let out = venv.run(program, args);
        let text = out_text(&out);
        assert_eq!(out.status.code(), Some(1), "{program}: {text}");
        assert!(
            text.contains("belongs to another user (uid 4321; this is uid 0)")
                && text.contains("run `rocm-sdk init` once as the user who installed the packages"),
            "{program}: {text}"
        );
    }
    assert_eq!(venv.site_files(), before);
    let mut foreign = Vec::new();
    for rel in walk(&venv.root(), &venv.root()) {
        if fs::symlink_metadata(venv.root().join(&rel)).unwrap().uid() != 4321 {
            foreign.push(rel);
        }
    }
    assert!(foreign.is_empty(), "now root's: {foreign:?}");
}
