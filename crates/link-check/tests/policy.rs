//! Policy audits of wheels holding libraries built here with gcc and g++:
//! the tightest manylinux tag follows the newest symbol version a file
//! needs (GLIBC, GLIBCXX, CXXABI), the libraries it leaves to the system
//! and the blacklisted symbols it imports; libraries taken from another
//! wheel of the set count inside the set but not alone; excluded libraries
//! are accepted.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use link_check::{
    Arch, LinkChecker, LinkReport, Policies, SystemPolicy, Violation, WheelAudit, WheelSetTree,
    audit_wheel,
};
use wheel_writer::{BytesSource, CoreMetadata, WheelBuilder, WheelTag, WriteOptions};

const TAG: &str = "manylinux_2_28_x86_64";

fn compile(compiler: &str, dir: &Path, name: &str, source: &str, args: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.src"));
    fs::write(&src, source).unwrap();
    let out = dir.join(name);
    let lang = if compiler == "g++" { "c++" } else { "c" };
    let result = Command::new(compiler)
        .args(["-shared", "-fPIC", &format!("-Wl,-soname,{name}"), "-o"])
        .arg(&out)
        .args(["-x", lang])
        .arg(&src)
        .args(["-x", "none"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{compiler}: {e}"));
    assert!(
        result.status.success(),
        "{compiler} {name}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// A wheel `{name}-1.0-py3-none-{TAG}.whl` holding `files` as
/// `(path in the wheel, file on disk)`.
fn wheel(dir: &Path, name: &str, files: &[(&str, &Path)]) -> PathBuf {
    let mut builder = WheelBuilder::new(
        CoreMetadata::new(name, "1.0"),
        WheelTag::py3_none(TAG).unwrap(),
    )
    .unwrap();
    for (rel, path) in files {
        let source = Arc::new(BytesSource::new(fs::read(path).unwrap(), true, *rel));
        builder.add_file(rel, source).unwrap();
    }
    builder
        .write(dir, &WriteOptions::default(), None)
        .unwrap()
        .path
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn check(wheels: &[&Path], policy: SystemPolicy) -> (WheelSetTree, LinkReport) {
    let tree = WheelSetTree::open(wheels).unwrap();
    let report = LinkChecker::new()
        .with_policy(policy)
        .with_imports()
        .check(&tree)
        .unwrap();
    (tree, report)
}

fn audit(wheels: &[&Path], wheel: &Path, required: &str) -> WheelAudit {
    let (tree, report) = check(wheels, SystemPolicy::default());
    audit_wheel(
        &report,
        &tree,
        &file_name(wheel),
        Arch::X86_64,
        Policies::auditwheel().get(required),
    )
}

fn tags(audit: &WheelAudit) -> [&str; 3] {
    [
        audit.tightest_tag.as_deref().unwrap(),
        audit.standalone_tag.as_deref().unwrap(),
        audit.symbol_tag.as_deref().unwrap(),
    ]
}

const NEW_GLIBC: &str = r"
#define _GNU_SOURCE
#include <unistd.h>
void close_all(int fd) { closefrom(fd); }
";

const GLIBC_2_28: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
int stat_here(void) { struct statx st; puts("stat"); return statx(AT_FDCWD, ".", 0, STATX_BASIC_STATS, &st); }
"#;

#[test]
fn newest_glibc_version_decides_the_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let new = compile("gcc", dir, "libnew.so", NEW_GLIBC, &[]);
    let old = compile("gcc", dir, "libold.so", GLIBC_2_28, &[]);
    let new_wheel = wheel(dir, "new", &[("new/libnew.so", &new)]);
    let old_wheel = wheel(dir, "old", &[("old/libold.so", &old)]);
    let set = [new_wheel.as_path(), old_wheel.as_path()];

    let rejected = audit(&set, &new_wheel, "manylinux_2_28");
    assert_eq!(tags(&rejected), ["manylinux_2_34_x86_64"; 3]);
    assert_eq!(rejected.policy.as_deref(), Some("manylinux_2_28_x86_64"));
    assert_eq!(
        rejected.violations,
        [Violation::SymbolVersion {
            file: "new/libnew.so".into(),
            library: "libc.so.6".into(),
            version: "GLIBC_2.34".into(),
            symbols: vec!["closefrom".into()],
        }]
    );
    assert!(!rejected.is_ok());
    assert_eq!(
        rejected.problems(),
        [
            "new-1.0-py3-none-manylinux_2_28_x86_64.whl does not keep to manylinux_2_28_x86_64 \
             (it satisfies manylinux_2_34_x86_64): build it on an older system (a manylinux_2_28 image), \
             or tag it manylinux_2_34_x86_64",
            "new-1.0-py3-none-manylinux_2_28_x86_64.whl: needs GLIBC_2.34 from libc.so.6, newer than \
             manylinux_2_28_x86_64 allows (GLIBC up to 2.28): new/libnew.so (closefrom)",
        ]
    );
    assert_eq!(rejected.newest_versions(), ["GLIBC_2.34"]);
    assert_eq!(
        rejected.summary(),
        "new-1.0-py3-none-manylinux_2_28_x86_64.whl: satisfies manylinux_2_34_x86_64 (needs up to GLIBC_2.34)"
    );

    let accepted = audit(&set, &old_wheel, "manylinux_2_28");
    assert!(accepted.is_ok(), "{:?}", accepted.violations);
    assert_eq!(tags(&accepted), ["manylinux_2_28_x86_64"; 3]);
    assert_eq!(
        accepted.versioned_symbols["libc.so.6"]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["GLIBC_2.2.5", "GLIBC_2.28"]
    );
    assert_eq!(
        accepted.system_libraries.iter().collect::<Vec<_>>(),
        ["libc.so.6"]
    );
    // One step older is too old.
    let older = audit(&set, &old_wheel, "manylinux_2_27");
    assert_eq!(older.violations.len(), 1);
}

#[test]
fn cxx_namespaces_are_limited_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cxx = compile(
        "g++",
        dir,
        "libcv.so",
        "#include <condition_variable>\n#include <mutex>\n\
         static std::mutex m; static std::condition_variable cv;\n\
         void wait_ready() { std::unique_lock<std::mutex> l(m); cv.wait(l); }\n",
        &[],
    );
    let w = wheel(dir, "cv", &[("cv/libcv.so", &cxx)]);
    let audit = audit(&[&w], &w, "manylinux_2_28");
    // GLIBCXX_3.4.30 (GCC 12's condition_variable::wait) arrives with manylinux_2_35.
    assert_eq!(tags(&audit), ["manylinux_2_35_x86_64"; 3]);
    assert!(audit.violations.iter().any(|v| matches!(
        v,
        Violation::SymbolVersion { version, symbols, .. }
            if version == "GLIBCXX_3.4.30"
                && symbols == &["_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"]
    )));
    assert!(
        audit
            .newest_versions()
            .contains(&"GLIBCXX_3.4.30".to_owned())
    );
}

#[test]
fn libraries_from_other_wheels_count_only_inside_the_set() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let provider = compile(
        "gcc",
        dir,
        "libprovider.so.1",
        "int provided(void) { return 1; }\n",
        &[],
    );
    let user = compile(
        "gcc",
        dir,
        "libuser.so",
        "int provided(void); int use(void) { return provided(); }\n",
        &[
            &provider.display().to_string(),
            "-Wl,-rpath,$ORIGIN/../provider",
        ],
    );
    let provider_wheel = wheel(dir, "provider", &[("provider/libprovider.so.1", &provider)]);
    let user_wheel = wheel(dir, "user", &[("user/libuser.so", &user)]);
    let set = [provider_wheel.as_path(), user_wheel.as_path()];

    let audit = audit(&set, &user_wheel, "manylinux_2_28");
    assert!(audit.is_ok(), "{:?}", audit.violations);
    assert_eq!(
        tags(&audit),
        [
            "manylinux_2_5_x86_64",
            "linux_x86_64",
            "manylinux_2_5_x86_64"
        ]
    );
    assert_eq!(
        audit.from_other_wheels["libprovider.so.1"]
            .iter()
            .collect::<Vec<_>>(),
        ["provider-1.0-py3-none-manylinux_2_28_x86_64.whl"]
    );
    assert!(
        audit
            .summary()
            .ends_with("satisfies manylinux_2_5_x86_64; alone, as auditwheel show judges it: linux_x86_64 (takes libprovider.so.1 from provider-1.0-py3-none-manylinux_2_28_x86_64.whl)"),
        "{}",
        audit.summary()
    );
}

#[test]
fn unallowed_libraries_fail_unless_excluded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let driver = compile(
        "gcc",
        dir,
        "libdriver.so.1",
        "int drive(void) { return 1; }\n",
        &[],
    );
    let user = compile(
        "gcc",
        dir,
        "libgpu.so",
        "int drive(void); int gpu(void) { return drive(); }\n",
        &[&driver.display().to_string()],
    );
    let w = wheel(dir, "gpu", &[("gpu/libgpu.so", &user)]);

    let audit = audit(&[&w], &w, "manylinux_2_28");
    assert_eq!(
        tags(&audit),
        ["linux_x86_64", "linux_x86_64", "manylinux_2_5_x86_64"]
    );
    assert_eq!(
        audit.violations,
        [Violation::Library {
            file: "gpu/libgpu.so".into(),
            library: "libdriver.so.1".into()
        }]
    );
    assert_eq!(
        audit.missing_libraries.iter().collect::<Vec<_>>(),
        ["libdriver.so.1"]
    );
    assert!(
        audit.problems()[0].ends_with(
            "(it satisfies linux_x86_64): ship the libraries it needs in the set, or --exclude the ones the release leaves to the system on purpose"
        ),
        "{:?}",
        audit.problems()
    );

    let (tree, report) = check(
        &[&w],
        SystemPolicy::default().with_excluded(["libdriver.so.1"]),
    );
    assert!(report.is_ok());
    let excluded = audit_wheel(
        &report,
        &tree,
        &file_name(&w),
        Arch::X86_64,
        Policies::auditwheel().get("manylinux_2_28"),
    );
    assert!(excluded.is_ok());
    assert_eq!(tags(&excluded), ["manylinux_2_5_x86_64"; 3]);
    assert_eq!(
        excluded.excluded_libraries.iter().collect::<Vec<_>>(),
        ["libdriver.so.1"]
    );
    assert!(excluded.missing_libraries.is_empty());
}

#[test]
fn blacklisted_symbols_follow_each_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A stand-in zlib exporting internals the policies forbid importing.
    let zlib = compile(
        "gcc",
        dir,
        "libz.so.1",
        "void _tr_init(void) {} void fill_window(void) {} void zlibVersion(void) {}\n",
        &[],
    );
    let zlib_arg = zlib.display().to_string();
    // fill_window is forbidden up to manylinux_2_35 only; _tr_init always.
    let old_internal = compile(
        "gcc",
        dir,
        "libfill.so",
        "void fill_window(void); void zlibVersion(void); void f(void) { fill_window(); zlibVersion(); }\n",
        &[&zlib_arg],
    );
    let always = compile(
        "gcc",
        dir,
        "libtr.so",
        "void _tr_init(void); void t(void) { _tr_init(); }\n",
        &[&zlib_arg],
    );
    // A weak reference is optional, so never forbidden.
    let weak = compile(
        "gcc",
        dir,
        "libweak.so",
        "void _tr_init(void) __attribute__((weak)); void w(void) { if (_tr_init) _tr_init(); }\n",
        &[&zlib_arg],
    );
    let one = |name: &str, lib: &Path| {
        let w = wheel(dir, name, &[(&format!("{name}/{}", file_name(lib)), lib)]);
        audit(&[&w], &w, "manylinux_2_28")
    };

    let fill = one("fill", &old_internal);
    assert_eq!(fill.tightest_tag.as_deref(), Some("manylinux_2_36_x86_64"));
    assert_eq!(fill.symbol_tag.as_deref(), Some("manylinux_2_5_x86_64"));
    assert_eq!(
        fill.violations,
        [Violation::Blacklisted {
            file: "fill/libfill.so".into(),
            library: "libz.so.1".into(),
            symbols: vec!["fill_window".into()],
        }]
    );
    assert_eq!(
        one("tr", &always).tightest_tag.as_deref(),
        Some("linux_x86_64")
    );
    let weak = one("weak", &weak);
    assert!(weak.is_ok());
    assert_eq!(weak.tightest_tag.as_deref(), Some("manylinux_2_5_x86_64"));
}

#[test]
fn a_wheel_without_host_code_has_no_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("README");
    fs::write(&text, "no code\n").unwrap();
    let w = wheel(tmp.path(), "docs", &[("docs/README", &text)]);
    let audit = audit(&[&w], &w, "manylinux_2_28");
    assert!(audit.is_ok());
    assert_eq!(audit.host_elf_files, 0);
    assert_eq!(audit.tightest_tag, None);
    assert_eq!(
        audit.summary(),
        "docs-1.0-py3-none-manylinux_2_28_x86_64.whl: no host ELF files"
    );
}

#[test]
fn a_file_of_another_architecture_is_a_wrong_architecture_not_an_old_glibc() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // An i386 library needs GLIBC_2.0 (`puts`), which is older than anything
    // x86_64 has: judged as x86_64 it read "newer than manylinux_2_28".
    let foreign = compile(
        "gcc",
        dir,
        "libfar.so",
        "#include <stdio.h>\nvoid hello(void) { puts(\"hi\"); }\n",
        &["-m32"],
    );
    let native = compile("gcc", dir, "libnear.so", GLIBC_2_28, &[]);
    let w = wheel(
        dir,
        "mixed",
        &[("mixed/libfar.so", &foreign), ("mixed/libnear.so", &native)],
    );

    let audit = audit(&[&w], &w, "manylinux_2_28");
    assert_eq!(
        audit.violations,
        [Violation::Architecture {
            file: "mixed/libfar.so".into(),
            machine: "i386".into(),
        }]
    );
    // Its symbol versions are left out: the x86_64 file alone decides.
    assert_eq!(
        tags(&audit),
        ["linux_x86_64", "linux_x86_64", "manylinux_2_28_x86_64"]
    );
    insta::assert_snapshot!(audit.problems().join("\n"), @r"
    mixed-1.0-py3-none-manylinux_2_28_x86_64.whl does not keep to manylinux_2_28_x86_64 (it satisfies linux_x86_64): leave out the files built for another architecture, or build them for x86_64
    mixed-1.0-py3-none-manylinux_2_28_x86_64.whl: built for i386, not x86_64 (a wrong architecture, as auditwheel says): mixed/libfar.so
    ");
}
