//! Running launchers: what the target receives, what the caller sees, and
//! how the target is resolved (docs/behaviour.md#launchers).

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::Path;
use std::process::Command;

use common::{
    Report, install_launcher, install_probe, install_script, run, run_probe, starting_programs,
    writing_executables,
};

/// A tree with `bin/tool` → `../libexec/tool/probe`.
fn probe_tree() -> tempfile::TempDir {
    let tree = tempfile::tempdir().unwrap();
    install_probe(&tree.path().join("libexec/tool/probe"));
    install_launcher(&tree.path().join("bin/tool"), "../libexec/tool/probe");
    tree
}

#[test]
fn arguments_pass_through_byte_for_byte() {
    let tree = probe_tree();
    let args = [
        "plain",
        "with spaces",
        "",
        "new\nline",
        "tab\there",
        "ünïcödé ✓ 日本",
        "--flag=a b",
        "'quotes' \"and\" $dollar \\back",
    ];
    let report = run_probe(Command::new(tree.path().join("bin/tool")).args(args));
    let expected: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    assert_eq!(report.argv[1..], expected);
    assert_eq!(
        report.exe,
        tree.path()
            .canonicalize()
            .unwrap()
            .join("libexec/tool/probe")
    );
}

#[test]
fn non_utf8_arguments_pass_through() {
    use std::os::unix::ffi::OsStrExt as _;
    let tree = probe_tree();
    let raw = std::ffi::OsStr::from_bytes(b"\xff\xfe raw");
    let report = run_probe(Command::new(tree.path().join("bin/tool")).arg(raw));
    assert_eq!(report.argv[1], b"\xff\xfe raw");
}

#[test]
fn argv0_is_preserved() {
    let tree = probe_tree();
    let launcher = tree.path().join("bin/tool");

    let report = run_probe(&mut Command::new(&launcher));
    assert_eq!(report.argv, [launcher.as_os_str().as_encoded_bytes()]);

    let report = run_probe(Command::new(&launcher).arg0("hipcc as invoked").arg("x"));
    assert_eq!(report.argv, [&b"hipcc as invoked"[..], b"x"]);
}

#[test]
fn environment_is_passed_unchanged() {
    let tree = probe_tree();
    let report = run_probe(
        Command::new(tree.path().join("bin/tool"))
            .env_clear()
            .env("ROCM_TEST", "a value with spaces\nand a newline")
            .env("EMPTY", ""),
    );
    // Exactly the caller's environment, nothing added or lost (std's
    // Command passes it sorted by name).
    assert_eq!(
        report.env,
        [
            &b"EMPTY="[..],
            b"ROCM_TEST=a value with spaces\nand a newline"
        ]
    );

    let report = run_probe(Command::new(tree.path().join("bin/tool")).env("PATH_EXTRA", "1"));
    assert_eq!(report.env_var("PATH_EXTRA"), Some(&b"1"[..]));
}

#[test]
fn exit_codes_pass_through() {
    let tree = probe_tree();
    for code in [0, 1, 42, 255] {
        let output =
            run(Command::new(tree.path().join("bin/tool")).env("PROBE_EXIT", code.to_string()));
        assert_eq!(output.status.code(), Some(code), "PROBE_EXIT={code}");
    }
}

#[test]
fn death_by_signal_passes_through() {
    let tree = probe_tree();
    for signal in [libc::SIGTERM, libc::SIGKILL, libc::SIGSEGV, libc::SIGABRT] {
        let output =
            run(Command::new(tree.path().join("bin/tool")).env("PROBE_SIGNAL", signal.to_string()));
        assert_eq!(output.status.signal(), Some(signal), "{:?}", output.status);
        assert_eq!(output.status.code(), None);
    }
}

#[test]
fn the_launcher_becomes_the_target_process() {
    // execve, not fork: a signal sent to the launcher's pid reaches the target.
    let tree = tempfile::tempdir().unwrap();
    install_script(
        &tree.path().join("libexec/sleeper"),
        "#!/bin/sh\nexec sleep 30\n",
    );
    install_launcher(&tree.path().join("bin/sleeper"), "../libexec/sleeper");
    let mut child = {
        let _starting = starting_programs();
        Command::new(tree.path().join("bin/sleeper"))
            .spawn()
            .unwrap()
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
}

#[test]
fn targets_through_dotdot_chains() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    install_probe(&root.join("lib/llvm/bin/clang"));
    install_launcher(&root.join("bin/amdclang"), "../lib/llvm/bin/clang");
    install_launcher(&root.join("a/b/c/deep"), "../../../lib/llvm/bin/clang");
    // `..` after a real directory and a sideways hop.
    install_launcher(
        &root.join("bin/sideways"),
        "../share/../lib/./llvm/bin/clang",
    );
    std::fs::create_dir_all(root.join("share")).unwrap();
    let expected = root.canonicalize().unwrap().join("lib/llvm/bin/clang");
    for launcher in ["bin/amdclang", "a/b/c/deep", "bin/sideways"] {
        let report = run_probe(&mut Command::new(root.join(launcher)));
        assert_eq!(report.exe, expected, "{launcher}");
    }
}

#[test]
fn target_in_the_same_directory() {
    let tree = tempfile::tempdir().unwrap();
    install_probe(&tree.path().join("bin/real-tool"));
    install_launcher(&tree.path().join("bin/tool"), "real-tool");
    let report = run_probe(&mut Command::new(tree.path().join("bin/tool")));
    assert!(report.exe.ends_with("bin/real-tool"));
}

#[test]
fn hard_linked_launcher_resolves_from_its_new_place() {
    let a = probe_tree();
    let b = tempfile::tempdir().unwrap();
    install_probe(&b.path().join("libexec/tool/probe"));
    std::fs::create_dir_all(b.path().join("bin")).unwrap();
    std::fs::hard_link(a.path().join("bin/tool"), b.path().join("bin/tool")).unwrap();

    let report = run_probe(&mut Command::new(b.path().join("bin/tool")));
    assert_eq!(
        report.exe,
        b.path().canonicalize().unwrap().join("libexec/tool/probe")
    );
    let report = run_probe(&mut Command::new(a.path().join("bin/tool")));
    assert_eq!(
        report.exe,
        a.path().canonicalize().unwrap().join("libexec/tool/probe")
    );
}

#[test]
fn copied_launcher_resolves_from_its_new_place() {
    let a = probe_tree();
    let b = tempfile::tempdir().unwrap();
    install_probe(&b.path().join("libexec/tool/probe"));
    std::fs::create_dir_all(b.path().join("bin")).unwrap();
    {
        let _writing = writing_executables();
        std::fs::copy(a.path().join("bin/tool"), b.path().join("bin/tool")).unwrap();
    }
    let report = run_probe(&mut Command::new(b.path().join("bin/tool")));
    assert_eq!(
        report.exe,
        b.path().canonicalize().unwrap().join("libexec/tool/probe")
    );
}

#[test]
fn launcher_invoked_through_symlinks_resolves_from_its_real_file() {
    let a = probe_tree();
    let c = tempfile::tempdir().unwrap();
    // A decoy target where a symlink-relative resolution would land.
    install_probe(&c.path().join("libexec/tool/probe"));
    std::fs::create_dir_all(c.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(a.path().join("bin/tool"), c.path().join("bin/tool")).unwrap();
    // And a chain: link to a link, through a relative symlinked directory.
    std::os::unix::fs::symlink("bin", c.path().join("bin-alias")).unwrap();
    std::os::unix::fs::symlink("tool", c.path().join("bin/tool-again")).unwrap();

    let expected = a.path().canonicalize().unwrap().join("libexec/tool/probe");
    for link in ["bin/tool", "bin-alias/tool-again"] {
        let invoked = c.path().join(link);
        let report = run_probe(&mut Command::new(&invoked));
        assert_eq!(report.exe, expected, "{link}");
        assert_eq!(report.argv[0], invoked.as_os_str().as_encoded_bytes());
    }
}

#[test]
fn script_target_reads_a_file_next_to_itself() {
    // The case the reference breaks: bin/rocm-smi -> ../libexec/rocm_smi/rocm_smi.py.
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    install_script(
        &root.join("libexec/rocm_smi/rocm_smi.sh"),
        "#!/bin/sh\nhere=$(dirname \"$0\")\nprintf '%s|' \"$@\"\ncat \"$here/data.txt\"\nexit 7\n",
    );
    std::fs::write(
        root.join("libexec/rocm_smi/data.txt"),
        "data next to the script\n",
    )
    .unwrap();
    install_launcher(
        &root.join("bin/rocm-smi"),
        "../libexec/rocm_smi/rocm_smi.sh",
    );

    let output = run(Command::new(root.join("bin/rocm-smi")).args(["--show", "a b"]));
    assert_eq!(
        output.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.stdout, b"--show|a b|data next to the script\n");
}

#[test]
fn path_of_1024_bytes_runs() {
    let tree = tempfile::tempdir().unwrap();
    // "../", four directories of 250 bytes (near NAME_MAX), a file name.
    let mut target = String::from("../");
    for digit in ['0', '1', '2', '3'] {
        target.push(digit);
        target.push_str(&"d".repeat(249));
        target.push('/');
    }
    target.push_str(&"p".repeat(1024 - target.len()));
    assert_eq!(target.len(), 1024);
    install_probe(&tree.path().join("bin").join(&target));
    install_launcher(&tree.path().join("bin/tool"), &target);
    let report = run_probe(&mut Command::new(tree.path().join("bin/tool")));
    assert!(report.exe.ends_with(&target[3..]));
}

#[test]
fn missing_target_exits_127_with_one_line_naming_the_resolved_path() {
    let tree = tempfile::tempdir().unwrap();
    install_launcher(&tree.path().join("bin/tool"), "../libexec/gone");
    let output = run(&mut Command::new(tree.path().join("bin/tool")));
    assert_eq!(output.status.code(), Some(127));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let resolved = format!(
        "{}/bin/../libexec/gone",
        tree.path().canonicalize().unwrap().display()
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.ends_with('\n'));
    assert!(
        stderr.contains(&resolved),
        "{stderr:?} should name {resolved}"
    );
    assert!(stderr.contains("not found"), "{stderr:?}");
}

#[test]
fn missing_directory_on_the_way_exits_127() {
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("file"), "").unwrap();
    install_launcher(&tree.path().join("bin/tool"), "../file/tool");
    let output = run(&mut Command::new(tree.path().join("bin/tool")));
    assert_eq!(output.status.code(), Some(127));
}

#[test]
fn missing_interpreter_exits_127_and_says_so() {
    let tree = tempfile::tempdir().unwrap();
    install_script(
        &tree.path().join("libexec/tool"),
        "#!/nonexistent/python9\n",
    );
    install_launcher(&tree.path().join("bin/tool"), "../libexec/tool");
    let output = run(&mut Command::new(tree.path().join("bin/tool")));
    assert_eq!(output.status.code(), Some(127));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("interpreter"), "{stderr:?}");
    assert!(stderr.contains("libexec/tool"), "{stderr:?}");
}

#[test]
fn non_executable_target_exits_126() {
    let tree = tempfile::tempdir().unwrap();
    install_probe(&tree.path().join("libexec/tool"));
    std::fs::set_permissions(
        tree.path().join("libexec/tool"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    install_launcher(&tree.path().join("bin/tool"), "../libexec/tool");
    let output = run(&mut Command::new(tree.path().join("bin/tool")));
    assert_eq!(output.status.code(), Some(126));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("libexec/tool"), "{stderr:?}");
}

#[test]
fn directory_target_exits_126() {
    let tree = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tree.path().join("libexec/tool")).unwrap();
    install_launcher(&tree.path().join("bin/tool"), "../libexec/tool");
    let output = run(&mut Command::new(tree.path().join("bin/tool")));
    assert_eq!(output.status.code(), Some(126));
}

#[test]
fn unfilled_image_refuses_to_run() {
    let tree = tempfile::tempdir().unwrap();
    let path = tree.path().join("blank");
    {
        let _writing = writing_executables();
        std::fs::write(&path, trampoline_gen::Platform::LinuxX86_64.image()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let output = run(&mut Command::new(&path));
    assert_eq!(output.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no target"));
}

/// The test helper itself reads the probe format right.
#[test]
fn report_parses_probe_output() {
    let report = Report::parse(b"/x\x002\x00a\x00b c\x00K=V\x00");
    assert_eq!(report.exe, Path::new("/x"));
    assert_eq!(report.argv, [&b"a"[..], b"b c"]);
    assert_eq!(report.env_var("K"), Some(&b"V"[..]));
}
