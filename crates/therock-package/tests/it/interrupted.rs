//! A failed or killed build leaves `dist/` as it was (or, killed after the
//! swap, fully new), the next run cleans up after it, a staging directory
//! whose build still runs survives, and `verify`/`index` never read one.

use crate::common;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Build, artifacts, ok, therock_package};
use fixtures::files::files_with_bytes;
use fixtures::{ExampleMode, Layout};

/// A copy of the kpack example whose HIP library carries `mib` MiB of
/// incompressible bytes, so a build takes long enough to be interrupted.
fn slow_example(mib: usize) -> tempfile::TempDir {
    let copy = common::copy_of_artifacts(Layout::Tree);
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

/// The staging directories and lock files beside `dist/` in `dest`.
fn staging_entries(dest: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dest)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".therock-package-staging-"))
        .collect();
    names.sort();
    names
}

fn names(files: &[(String, Vec<u8>)]) -> Vec<&str> {
    files.iter().map(|(n, _)| n.as_str()).collect()
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
    let staging_started = || !staging_entries(dest.path()).is_empty();
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

fn build_args(artifact_dir: &Path, dest: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "build".into(),
        "-q".into(),
        "--artifact-dir".into(),
        artifact_dir.display().to_string(),
        "--dest-dir".into(),
        dest.display().to_string(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

/// Opens the FIFO `gate` for writing once the build has opened it for
/// reading (it then waits at that point of the commit); `None` when the
/// build ended without reaching it.
fn wait_at_gate(gate: &Path, child: &mut std::process::Child) -> Option<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        // Non-blocking: ENXIO until a reader has the FIFO open.
        match fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(gate)
        {
            Ok(file) => return Some(file),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => panic!("{}: {e}", gate.display()),
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_build_killed_during_its_commit_leaves_dist_fully_old_or_fully_new() {
    let kpack = artifacts(ExampleMode::Kpack);
    // What the new release alone looks like.
    let reference = tempfile::tempdir().unwrap();
    ok(&therock_package(
        &build_args(&kpack, reference.path(), &["--version", "7.2.0"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    let new_release = files_with_bytes(&reference.path().join("dist"));
    for (gate, expect_new) in [("before-swap", false), ("after-swap", true)] {
        let dest = tempfile::tempdir().unwrap();
        let dist = dest.path().join("dist");
        // An earlier release, and a file the build knows nothing about.
        ok(&therock_package(
            &build_args(&kpack, dest.path(), &[])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ));
        fs::write(dist.join("notes.txt"), "kept").unwrap();
        let old = files_with_bytes(&dist);
        let mut new = old.clone();
        new.extend(new_release.iter().cloned());
        new.sort();

        let gates = tempfile::tempdir().unwrap();
        let fifo = gates.path().join(gate);
        ok(&Command::new("mkfifo").arg(&fifo).output().unwrap());
        let mut child = Command::new(env!("CARGO_BIN_EXE_therock-package"))
            .args(build_args(&kpack, dest.path(), &["--version", "7.2.0"]))
            .env("THEROCK_PACKAGE_TEST_COMMIT_GATE", gates.path())
            .spawn()
            .unwrap();
        let held = wait_at_gate(&fifo, &mut child);
        assert!(held.is_some(), "the build never reached its {gate} point");
        child.kill().unwrap();
        child.wait().unwrap();
        let after = files_with_bytes(&dist);
        if expect_new {
            assert_eq!(names(&after), names(&new), "killed {gate}");
            assert!(after == new, "killed {gate}: dist/ is not the new release");
        } else {
            assert_eq!(names(&after), names(&old), "killed {gate}");
            assert!(after == old, "killed {gate}: dist/ changed");
        }
        assert!(!staging_entries(dest.path()).is_empty());

        // The next build removes what the killed one left and publishes.
        ok(&therock_package(
            &build_args(&kpack, dest.path(), &["--version", "7.2.0"])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ));
        assert_eq!(staging_entries(dest.path()), Vec::<String>::new());
        assert_eq!(names(&files_with_bytes(&dist)), names(&new));
    }
}

#[test]
fn a_staging_directory_whose_build_still_runs_survives_another_build() {
    let dest = tempfile::tempdir().unwrap();
    // A build on another host (its pid means nothing here) holds its lock.
    let live = dest.path().join(".therock-package-staging-4194305-1");
    let abandoned = dest.path().join(".therock-package-staging-4194306-2");
    for dir in [&live, &abandoned] {
        fs::create_dir_all(dir.join("dist")).unwrap();
        fs::write(dir.join("dist/half.whl"), "half").unwrap();
        fs::write(dir.with_extension("lock"), "").unwrap();
    }
    let live_lock = format!("{}.lock", live.display());
    let mut holder = Command::new("flock")
        .args([live_lock.as_str(), "sleep", "600"])
        .spawn()
        .unwrap();
    // `flock` has the lock once the file is locked for anyone else.
    let lock_file = fs::File::open(&live_lock).unwrap();
    for _ in 0..500 {
        if matches!(lock_file.try_lock(), Err(fs::TryLockError::WouldBlock)) {
            break;
        }
        let _ = lock_file.unlock();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(
        lock_file.try_lock(),
        Err(fs::TryLockError::WouldBlock)
    ));

    ok(&therock_package(&[
        "build",
        "--artifact-dir",
        artifacts(ExampleMode::Kpack).to_str().unwrap(),
        "--dest-dir",
        dest.path().to_str().unwrap(),
    ]));
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(
        live.join("dist/half.whl").is_file(),
        "a live build's staging directory was removed"
    );
    assert!(
        !abandoned.exists(),
        "the abandoned staging directory is still there"
    );
    assert!(dest.path().join("dist").read_dir().unwrap().count() > 0);
}

#[test]
fn verify_and_index_never_read_a_staging_directory() {
    let dest = tempfile::tempdir().unwrap();
    let dist = dest.path().join("dist");
    let build = Build::new(ExampleMode::Kpack, &[]);
    common::publish(&[build.dist()], &dist);
    // What a killed build of an earlier version left inside dist/.
    let staging = dist.join(".therock-package-staging-4194307");
    fs::create_dir_all(&staging).unwrap();
    fs::write(
        staging.join("rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl"),
        "half-written",
    )
    .unwrap();
    fs::copy(
        build
            .dist()
            .join("rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl"),
        staging.join("rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl"),
    )
    .unwrap();
    let report = ok(&therock_package(&["verify", dist.to_str().unwrap()]));
    assert!(!report.contains("staging"), "{report}");
    ok(&therock_package(&["index", dist.to_str().unwrap()]));
    let page = fs::read_to_string(dist.join("index.html")).unwrap();
    assert!(!page.contains("staging"), "{page}");
    assert!(page.contains("rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl"));
}

#[test]
fn sigint_and_sigterm_remove_the_staging_directory_before_the_process_ends() {
    use std::os::unix::process::ExitStatusExt as _;
    let kpack = artifacts(ExampleMode::Kpack);
    for (signal, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let dest = tempfile::tempdir().unwrap();
        // An earlier release the interrupted build must leave as it was.
        ok(&therock_package(
            &build_args(&kpack, dest.path(), &[])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ));
        let dist = dest.path().join("dist");
        let before = files_with_bytes(&dist);
        // The build waits mid-way, right after its first bytes were read.
        let gates = tempfile::tempdir().unwrap();
        let fifo = gates.path().join("first-bytes");
        ok(&Command::new("mkfifo").arg(&fifo).output().unwrap());
        let mut child = Command::new(env!("CARGO_BIN_EXE_therock-package"))
            .args(build_args(&kpack, dest.path(), &["--version", "7.2.0"]))
            .env("THEROCK_PACKAGE_TEST_COMMIT_GATE", gates.path())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let held = wait_at_gate(&fifo, &mut child);
        assert!(held.is_some(), "{name}: the build never started writing");
        assert!(
            !staging_entries(dest.path()).is_empty(),
            "{name}: no staging directory while the build writes"
        );
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        // SAFETY: `pid` is the child this test spawned and has not reaped.
        #[allow(unsafe_code)]
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0);
        let out = child.wait_with_output().unwrap();
        drop(held);
        assert_eq!(
            out.status.signal(),
            Some(signal),
            "{name}: the exit status does not say the signal ended it: {:?}",
            out.status
        );
        assert_eq!(
            staging_entries(dest.path()),
            Vec::<String>::new(),
            "{name}: the staging directory outlived the process"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("therock-package: interrupted: removed the staging directory"),
            "{name}: {stderr}"
        );
        assert!(files_with_bytes(&dist) == before, "{name}: dist/ changed");
    }
}
