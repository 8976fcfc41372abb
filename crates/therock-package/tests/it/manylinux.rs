//! `therock-package verify --policy/--exclude` and the manylinux check:
//! libraries built here with gcc and g++ in wheels tagged
//! `manylinux_2_28_x86_64` (one needing glibc 2.34 is rejected, one at
//! glibc 2.28 accepted), a library left to the system accepted only with
//! `--exclude`, the example built for manylinux_2_28 on this Debian system
//! rejected; and every verdict compared with `auditwheel show` from PyPI.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use common::{Build, auditwheel, fails, ok, stdout, verify};
use fixtures::ExampleMode;
use fixtures::files::relative_files;
use serde_json::Value;
use wheel_writer::{BytesSource, CoreMetadata, WheelBuilder, WheelTag, WriteOptions};

const TAG: &str = "manylinux_2_28_x86_64";

fn json(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// The audit of the wheel whose file name starts with `prefix`.
fn audit<'a>(report: &'a Value, prefix: &str) -> &'a Value {
    report["manylinux"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["wheel"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no audit of {prefix}*: {report:#}"))
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap()
}

/// Builds a shared library `name` (its SONAME too) from C or C++ source.
fn compile(compiler: &str, dir: &Path, name: &str, source: &str, args: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.src"));
    fs::write(&src, source).unwrap();
    let out = dir.join(name);
    let lang = if compiler == "g++" { "c++" } else { "c" };
    ok(&Command::new(compiler)
        .args(["-shared", "-fPIC", &format!("-Wl,-soname,{name}"), "-o"])
        .arg(&out)
        .args(["-x", lang])
        .arg(&src)
        .args(["-x", "none"])
        .args(args)
        .output()
        .unwrap());
    fs::remove_file(&src).unwrap();
    out
}

/// A wheel `{name}-1.0-py3-none-{TAG}.whl` in `dist` holding `lib` as
/// `{name}/{file name}`.
fn wheel(dist: &Path, name: &str, lib: &Path) -> PathBuf {
    let rel = format!("{name}/{}", lib.file_name().unwrap().to_string_lossy());
    let mut builder = WheelBuilder::new(
        CoreMetadata::new(name, "1.0"),
        WheelTag::py3_none(TAG).unwrap(),
    )
    .unwrap();
    let source = Arc::new(BytesSource::new(fs::read(lib).unwrap(), true, &rel));
    builder.add_file(&rel, source).unwrap();
    fs::create_dir_all(dist).unwrap();
    builder
        .write(dist, &WriteOptions::default(), None)
        .unwrap()
        .path
}

/// What `auditwheel show --json` says of `wheel`.
fn auditwheel_show(wheel: &Path) -> Value {
    let out = Command::new(auditwheel())
        .args(["show", "--json"])
        .arg(wheel)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "auditwheel show {}: {e}\n{text}\n{}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Compares every audit of `report` with `auditwheel show` on the same
/// wheel (found under `dirs`). Ours judged alone must equal auditwheel's
/// overall tag, our symbol tag its `sym_tag`, the versions read its
/// `versioned_symbols`, and the libraries we find missing or in other
/// wheels its `external_libs`. Our tightest tag differs from auditwheel's
/// only where a wheel takes libraries from another wheel of the set;
/// returns those differences as `(wheel, ours, auditwheel's, libraries)`.
fn compare_with_auditwheel(
    report: &Value,
    dirs: &[&Path],
) -> Vec<(String, String, String, String)> {
    let mut differences = Vec::new();
    let audits = report["manylinux"].as_array().unwrap();
    assert!(!audits.is_empty());
    for audit in audits {
        let name = audit["wheel"].as_str().unwrap();
        let path = dirs
            .iter()
            .flat_map(|d| relative_files(d).into_iter().map(move |rel| d.join(rel)))
            .find(|p| p.file_name().unwrap() == name)
            .unwrap();
        let theirs = auditwheel_show(&path);
        if audit["host_elf_files"] == 0 {
            assert!(
                theirs["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("does not look like a platform wheel")),
                "{name}: {theirs:#}"
            );
            assert_eq!(audit["tightest_tag"], Value::Null);
            continue;
        }
        assert_eq!(
            audit["standalone_tag"], theirs["overall_tag"],
            "{name}: {theirs:#}"
        );
        assert_eq!(audit["symbol_tag"], theirs["sym_tag"], "{name}: {theirs:#}");
        assert_eq!(
            audit["versioned_symbols"], theirs["versioned_symbols"],
            "{name}"
        );
        let external: BTreeSet<&str> = theirs["external_libs"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let from_others: BTreeSet<&str> = audit["from_other_wheels"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let ours: BTreeSet<&str> = audit["missing_libraries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .chain(from_others.iter().copied())
            .collect();
        assert_eq!(ours, external, "{name}: {theirs:#}");
        if from_others.is_empty() {
            assert_eq!(audit["tightest_tag"], theirs["overall_tag"], "{name}");
        } else {
            differences.push((
                name.to_owned(),
                audit["tightest_tag"].as_str().unwrap().to_owned(),
                theirs["overall_tag"].as_str().unwrap().to_owned(),
                from_others.into_iter().collect::<Vec<_>>().join(", "),
            ));
        }
    }
    differences
}

#[test]
fn example_verdicts_equal_auditwheels() {
    for mode in [ExampleMode::Kpack, ExampleMode::Legacy] {
        let build = Build::new(mode, &[]);
        let dist = build.dist();
        let out = verify(&[&dist], &["--json"]);
        let report = json(&out);
        assert_eq!(report["ok"], true, "{report:#}");
        // The example's programs are built by this system's gcc: its crt
        // start code needs glibc 2.34.
        assert_eq!(
            audit(&report, "rocm_sdk_core-")["tightest_tag"],
            "manylinux_2_34_x86_64"
        );
        let differences = compare_with_auditwheel(&report, &[&dist]);
        // The only differences: wheels whose libraries link against the HIP
        // runtime of the core wheel (their Requires-Dist pulls it in), and
        // the core wheel, whose runtime alias `librocblas.so` stands for
        // the libraries wheel's library (docs/behaviour.md#runtime-aliases),
        // are external-dependency wheels to auditwheel, which judges one
        // wheel alone.
        assert!(!differences.is_empty());
        for (wheel, ours, theirs, libraries) in &differences {
            let expected = if wheel.starts_with("rocm_sdk_core-") {
                ("manylinux_2_34_x86_64", "linux_x86_64", "librocblas.so.5")
            } else {
                ("manylinux_2_5_x86_64", "linux_x86_64", "libamdhip64.so.7")
            };
            assert_eq!(
                (ours.as_str(), theirs.as_str(), libraries.as_str()),
                expected,
                "{wheel}"
            );
        }
    }
}

const GLIBC_2_34: &str =
    "#define _GNU_SOURCE\n#include <unistd.h>\nvoid close_all(int fd) { closefrom(fd); }\n";
const GLIBC_2_28: &str = "#define _GNU_SOURCE\n#include <fcntl.h>\n#include <sys/stat.h>\n\
    int stat_here(void) { struct statx st; return statx(AT_FDCWD, \".\", 0, STATX_BASIC_STATS, &st); }\n";

#[test]
fn a_glibc_2_34_library_is_rejected_for_manylinux_2_28() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let new = compile("gcc", tmp.path(), "libnew.so", GLIBC_2_34, &[]);
    let old = compile("gcc", tmp.path(), "libold.so", GLIBC_2_28, &[]);
    wheel(&dist, "new", &new);
    wheel(&dist, "old", &old);

    // By default each wheel keeps to the policy its tag claims.
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("ok      elf-links"), "{report}");
    assert!(
        report.contains(
            "FAILED  manylinux: every host ELF file of a Linux wheel keeps to its manylinux policy: \
             symbol versions, system libraries, no blacklisted symbols (each wheel's manylinux tag)\n\
             \x20       - new-1.0-py3-none-manylinux_2_28_x86_64.whl does not keep to manylinux_2_28_x86_64 \
             (it satisfies manylinux_2_34_x86_64): build it on an older system (a manylinux_2_28 image), \
             or tag it manylinux_2_34_x86_64\n\
             \x20       - new-1.0-py3-none-manylinux_2_28_x86_64.whl: needs GLIBC_2.34 from libc.so.6, newer \
             than manylinux_2_28_x86_64 allows (GLIBC up to 2.28): new/libnew.so (closefrom)\n\
             \x20       new-1.0-py3-none-manylinux_2_28_x86_64.whl: satisfies manylinux_2_34_x86_64 (needs up to GLIBC_2.34)\n\
             \x20       old-1.0-py3-none-manylinux_2_28_x86_64.whl: satisfies manylinux_2_28_x86_64 (needs up to GLIBC_2.28)\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("release NOT verified: 1 of 16 checks failed"),
        "{report}"
    );

    let report = json(&verify(&[&dist], &["--json"]));
    assert_eq!(report["ok"], false);
    assert_eq!(check(&report, "manylinux")["status"], "failed");
    let new = audit(&report, "new-");
    assert_eq!(new["policy"], "manylinux_2_28_x86_64");
    assert_eq!(new["tightest_tag"], "manylinux_2_34_x86_64");
    assert_eq!(
        new["violations"],
        serde_json::json!([{
            "kind": "symbol_version",
            "file": "new/libnew.so",
            "library": "libc.so.6",
            "version": "GLIBC_2.34",
            "symbols": ["closefrom"]
        }])
    );
    let old = audit(&report, "old-");
    assert_eq!(old["violations"], serde_json::json!([]));
    assert_eq!(old["tightest_tag"], "manylinux_2_28_x86_64");

    // --policy overrides the tags: both keep to manylinux_2_34, neither to 2_27.
    let report = ok(&verify(&[&dist], &["--policy", "manylinux_2_34"]));
    assert!(
        report.contains("ok      manylinux: ") && report.contains("(--policy manylinux_2_34)"),
        "{report}"
    );
    let report = json(&verify(&[&dist], &["--policy", "manylinux_2_27", "--json"]));
    assert_eq!(
        audit(&report, "old-")["violations"][0]["version"],
        "GLIBC_2.28"
    );

    // auditwheel agrees on both, with nothing to explain.
    assert_eq!(compare_with_auditwheel(&report, &[&dist]), []);
}

#[test]
fn other_namespaces_and_blacklisted_symbols_agree_with_auditwheel() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    // GLIBCXX_3.4.30 (GCC 12's condition_variable::wait): manylinux_2_35.
    let cxx = compile(
        "g++",
        tmp.path(),
        "libcv.so",
        "#include <condition_variable>\n#include <mutex>\n\
         static std::mutex m; static std::condition_variable cv;\n\
         void wait_ready() { std::unique_lock<std::mutex> l(m); cv.wait(l); }\n",
        &[],
    );
    wheel(&dist, "cv", &cxx);
    // A stand-in zlib: importing its internal fill_window is forbidden up
    // to manylinux_2_35.
    let zlib = compile(
        "gcc",
        tmp.path(),
        "libz.so.1",
        "void fill_window(void) {}\n",
        &[],
    );
    let fill = compile(
        "gcc",
        tmp.path(),
        "libfill.so",
        "void fill_window(void); void f(void) { fill_window(); }\n",
        &[&zlib.display().to_string()],
    );
    wheel(&dist, "fill", &fill);

    let report = json(&verify(&[&dist], &["--json"]));
    let cv = audit(&report, "cv-");
    assert_eq!(cv["tightest_tag"], "manylinux_2_35_x86_64");
    assert!(
        cv["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["version"] == "GLIBCXX_3.4.30"),
        "{cv:#}"
    );
    let fill = audit(&report, "fill-");
    assert_eq!(fill["tightest_tag"], "manylinux_2_36_x86_64");
    assert_eq!(fill["symbol_tag"], "manylinux_2_5_x86_64");
    assert_eq!(fill["violations"][0]["kind"], "blacklisted");
    assert_eq!(compare_with_auditwheel(&report, &[&dist]), []);
}

#[test]
fn exclude_accepts_a_library_left_to_the_system() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let driver = compile(
        "gcc",
        tmp.path(),
        "libdriver.so.1",
        "int drive(void) { return 1; }\n",
        &[],
    );
    let gpu = compile(
        "gcc",
        tmp.path(),
        "libgpu.so",
        "int drive(void); int gpu(void) { return drive(); }\n",
        &[&driver.display().to_string()],
    );
    wheel(&dist, "gpu", &gpu);

    let report = fails(&verify(&[&dist], &[]));
    assert!(
        report.contains("gpu/libgpu.so (in gpu-1.0-py3-none-manylinux_2_28_x86_64.whl): NEEDED libdriver.so.1 not found"),
        "{report}"
    );
    assert!(
        report.contains(
            "gpu-1.0-py3-none-manylinux_2_28_x86_64.whl: needs libdriver.so.1, which neither the set \
             provides nor manylinux_2_28_x86_64 lets it leave to the system: gpu/libgpu.so"
        ),
        "{report}"
    );
    let report = json(&verify(&[&dist], &["--json"]));
    assert_eq!(audit(&report, "gpu-")["tightest_tag"], "linux_x86_64");
    assert_eq!(compare_with_auditwheel(&report, &[&dist]), []);

    let report = ok(&verify(&[&dist], &["--exclude", "libdriver.so.1"]));
    assert!(
        report.contains("ok      elf-links: ")
            && report.contains("(1 ELF files; excluded: libdriver.so.1)"),
        "{report}"
    );
    assert!(
        report
            .contains("gpu-1.0-py3-none-manylinux_2_28_x86_64.whl: satisfies manylinux_2_5_x86_64"),
        "{report}"
    );
    let report = json(&verify(
        &[&dist],
        &[
            "--exclude",
            "libdriver.so.1",
            "--exclude",
            "libother.so.2",
            "--json",
        ],
    ));
    assert_eq!(
        audit(&report, "gpu-")["excluded_libraries"],
        serde_json::json!(["libdriver.so.1"])
    );
}

#[test]
fn the_example_built_here_for_manylinux_2_28_is_rejected() {
    let build = Build::new(ExampleMode::Kpack, &["--platform-tag", TAG]);
    let report = fails(&verify(&[&build.dist()], &[]));
    assert!(
        report.contains(
            "- rocm_sdk_core-7.1.0-py3-none-manylinux_2_28_x86_64.whl does not keep to manylinux_2_28_x86_64 \
             (it satisfies manylinux_2_34_x86_64)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rocm_sdk_core-7.1.0-py3-none-manylinux_2_28_x86_64.whl: needs GLIBC_2.34 from libc.so.6, \
             newer than manylinux_2_28_x86_64 allows (GLIBC up to 2.28): _rocm_sdk_core/bin/"
        ),
        "{report}"
    );
    assert!(report.contains("(__libc_start_main)"), "{report}");
    // Wheels without programs of their own keep to it.
    assert!(
        !report.contains("- rocm_sdk_libraries-7.1.0-py3-none-manylinux_2_28_x86_64.whl"),
        "{report}"
    );
    let report = json(&verify(&[&build.dist()], &["--json"]));
    // The three wheels linking core's HIP runtime, and core for its alias
    // of the libraries wheel's librocblas.
    assert_eq!(compare_with_auditwheel(&report, &[&build.dist()]).len(), 4);
}

#[test]
fn policy_names_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = verify(&[dir.path()], &["--policy", "manylinux_2_28_x86_64"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("manylinux_2_28_x86_64: that is a platform tag; give the policy without the architecture"),
        "{stderr}"
    );
    let out = verify(&[dir.path()], &["--policy", "manylinux_3_0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a manylinux policy auditwheel defines"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Legacy names are the policies they alias.
    let out = verify(&[dir.path()], &["--policy", "manylinux2014"]);
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
