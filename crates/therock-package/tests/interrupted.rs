//! A failed or killed build leaves `dist/` as it was, and the next run
//! cleans up after it.

mod common;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Build, artifacts, ok, therock_package};
use fixtures::ExampleMode;

/// A copy of the kpack example whose HIP library carries `mib` MiB of
/// incompressible bytes, so a build takes long enough to be interrupted.
fn slow_example(mib: usize) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", artifacts(ExampleMode::Kpack).display()))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    let lib = copy
        .path()
        .join("core-hip_lib_generic/core/clr/stage/lib/libamdhip64.so.7.1.0");
    let mut file = fs::OpenOptions::new().append(true).open(&lib).unwrap();
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for chunk in block.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes());
        }
        file.write_all(&block).unwrap();
    }
    copy
}

fn listing(dist: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn killed_build_leaves_dist_as_it_was_and_the_next_run_cleans_up() {
    let dest = tempfile::tempdir().unwrap();
    let dest_arg = dest.path().to_str().unwrap();
    let dist = dest.path().join("dist");
    let first = Build::new(ExampleMode::Kpack, &[]);
    // An earlier release is in dist/.
    fs::create_dir_all(&dist).unwrap();
    for (name, bytes) in listing(&first.dist()) {
        fs::write(dist.join(name), bytes).unwrap();
    }
    let before = listing(&dist);

    let slow = slow_example(400);
    let mut child = Command::new(env!("CARGO_BIN_EXE_therock-package"))
        .args([
            "build",
            "-q",
            "--artifact-dir",
            slow.path().to_str().unwrap(),
            "--dest-dir",
            dest_arg,
        ])
        .spawn()
        .unwrap();
    // Wait until the run has started writing, then kill it.
    let staging_started = || {
        fs::read_dir(&dist).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".therock-package-staging-")
        })
    };
    for _ in 0..400 {
        if staging_started() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(staging_started(), "the build never started writing");
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the build finished before it could be killed"
    );
    assert_eq!(listing(&dist), before, "a killed build changed dist/");

    // The next run removes the abandoned staging directory and succeeds.
    ok(&therock_package(&[
        "build",
        "--artifact-dir",
        artifacts(ExampleMode::Kpack).to_str().unwrap(),
        "--dest-dir",
        dest_arg,
    ]));
    assert!(
        !staging_started(),
        "the abandoned staging directory is still there"
    );
    assert_eq!(listing(&dist), before);
}

#[test]
fn failed_build_leaves_dist_as_it_was() {
    let dest = tempfile::tempdir().unwrap();
    let dest_arg = dest.path().to_str().unwrap();
    let args = |families: &'static str| {
        vec![
            "build".to_owned(),
            "--artifact-dir".into(),
            artifacts(ExampleMode::Kpack).display().to_string(),
            "--dest-dir".into(),
            dest_arg.to_owned(),
            "--linux-amdgpu-families".into(),
            families.into(),
        ]
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        therock_package(&a)
    };
    ok(&run(args("gfx94X-dcgpu;gfx1100")));
    let before = listing(&dest.path().join("dist"));
    let failed = run(args("gfx94X-dcgpu;gfx1100;gfx1101"));
    assert_eq!(failed.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("gfx1101"), "{stderr}");
    assert_eq!(listing(&dest.path().join("dist")), before);
}
