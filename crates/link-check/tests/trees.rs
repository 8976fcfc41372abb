//! Real ELF files built with gcc, checked in a directory on disk and as a
//! set of wheels: in-tree resolution through `$ORIGIN`, system libraries,
//! the loader, unresolved names, hard links, device code and broken files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use link_check::{
    DirTree, FileTree, LinkChecker, LinkReport, Resolution, SearchDir, SearchKind, SystemPolicy,
    WheelSetTree,
};
use wheel_writer::{BytesSource, CoreMetadata, WheelBuilder, WheelTag, WriteOptions};

fn gcc(args: &[&str]) {
    let out = Command::new("gcc").args(args).output().expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds, into `dir`:
/// - `pkg_b/lib/libb.so.1` (SONAME libb.so.1; needs only libc);
/// - `pkg_a/lib/liba.so` (SONAME liba.so; needs libb.so.1 through
///   `$ORIGIN/../../pkg_b/lib`, plus libm and libmissing.so.7, which nothing provides);
/// - `pkg_a/bin/prog` (needs liba.so through RUNPATH `$ORIGIN/../lib`, and the loader).
fn build_elves(dir: &Path) {
    let src = dir.join("src");
    fs::create_dir_all(&src).unwrap();
    fs::create_dir_all(dir.join("pkg_a/lib")).unwrap();
    fs::create_dir_all(dir.join("pkg_a/bin")).unwrap();
    fs::create_dir_all(dir.join("pkg_b/lib")).unwrap();
    fs::write(src.join("b.c"), "int b(void) { return 2; }\n").unwrap();
    fs::write(src.join("missing.c"), "int missing(void) { return 7; }\n").unwrap();
    fs::write(
        src.join("a.c"),
        "#include <math.h>\nint b(void); int missing(void);\nint a(double x) { return b() + missing() + (int)sqrt(x); }\n",
    )
    .unwrap();
    fs::write(
        src.join("prog.c"),
        "int a(double); int main(void) { return a(4.0); }\n",
    )
    .unwrap();
    let s = |n: &str| src.join(n).display().to_string();
    let o = |n: &str| dir.join(n).display().to_string();
    gcc(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libb.so.1",
        "-o",
        &o("pkg_b/lib/libb.so.1"),
        &s("b.c"),
    ]);
    gcc(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libmissing.so.7",
        "-o",
        &s("libmissing.so.7"),
        &s("missing.c"),
    ]);
    gcc(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,liba.so",
        "-Wl,--disable-new-dtags",
        "-Wl,-rpath,$ORIGIN/../../pkg_b/lib",
        "-o",
        &o("pkg_a/lib/liba.so"),
        &s("a.c"),
        &o("pkg_b/lib/libb.so.1"),
        &s("libmissing.so.7"),
        "-lm",
    ]);
    gcc(&[
        "-Wl,--enable-new-dtags",
        "-Wl,-rpath,$ORIGIN/../lib",
        "-o",
        &o("pkg_a/bin/prog"),
        &s("prog.c"),
        &o("pkg_a/lib/liba.so"),
        // The linker needs liba's own dependencies found to link the program.
        &format!("-Wl,-rpath-link,{}", dir.join("pkg_b/lib").display()),
        &format!("-Wl,-rpath-link,{}", src.display()),
    ]);
    fs::remove_dir_all(&src).unwrap();
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("site-packages");
    build_elves(&root);
    // Not ELF, device code (EM_AMDGPU = 224) and a broken ELF.
    fs::write(root.join("pkg_a/lib/notes.txt"), "not elf\n").unwrap();
    let mut device = fs::read(root.join("pkg_b/lib/libb.so.1")).unwrap();
    device[18..20].copy_from_slice(&224u16.to_le_bytes());
    // A truncated library: its program headers lie past the end.
    fs::write(root.join("pkg_a/lib/broken.so"), &device[..100]).unwrap();
    fs::write(root.join("pkg_a/lib/kernels.co"), device).unwrap();
    Fixture { _tmp: tmp, root }
}

fn resolution<'a>(report: &'a LinkReport, path: &str, needed: &str) -> &'a Resolution {
    let file = report
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not in report: {report:#?}"));
    &file
        .needed
        .iter()
        .find(|n| n.name == needed)
        .unwrap_or_else(|| panic!("{path} does not need {needed}"))
        .resolution
}

#[test]
fn directory_tree_resolves_like_the_loader() {
    let f = fixture();
    let tree = DirTree::open(&f.root).unwrap();
    let report = LinkChecker::new().check(&tree).unwrap();
    let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
    // Device code and text are skipped; the broken file is reported apart.
    assert_eq!(
        paths,
        ["pkg_a/bin/prog", "pkg_a/lib/liba.so", "pkg_b/lib/libb.so.1"]
    );
    assert_eq!(report.unreadable.len(), 1);
    assert_eq!(report.unreadable[0].path, "pkg_a/lib/broken.so");

    assert_eq!(
        resolution(&report, "pkg_a/lib/liba.so", "libb.so.1"),
        &Resolution::Tree {
            path: "pkg_b/lib/libb.so.1".into()
        }
    );
    assert_eq!(
        resolution(&report, "pkg_a/lib/liba.so", "libm.so.6"),
        &Resolution::System
    );
    assert_eq!(
        resolution(&report, "pkg_a/lib/liba.so", "libmissing.so.7"),
        &Resolution::Unresolved
    );
    assert_eq!(
        resolution(&report, "pkg_a/bin/prog", "liba.so"),
        &Resolution::Tree {
            path: "pkg_a/lib/liba.so".into()
        }
    );
    let prog = report
        .files
        .iter()
        .find(|f| f.path == "pkg_a/bin/prog")
        .unwrap();
    assert_eq!(prog.search_kind, Some(SearchKind::Runpath));
    assert_eq!(prog.search_dirs, [SearchDir::Tree("pkg_a/lib".into())]);
    let liba = report
        .files
        .iter()
        .find(|f| f.path == "pkg_a/lib/liba.so")
        .unwrap();
    assert_eq!(liba.search_kind, Some(SearchKind::Rpath));

    let unresolved: Vec<String> = report.unresolved().map(|u| u.to_string()).collect();
    assert_eq!(unresolved.len(), 1, "{unresolved:?}");
    assert!(
        unresolved[0]
            .starts_with("pkg_a/lib/liba.so: NEEDED libmissing.so.7 not found in pkg_b/lib")
    );
    assert!(!report.is_ok());

    // Allowing the name through the policy resolves it.
    let report = LinkChecker::new()
        .with_policy(SystemPolicy::manylinux_2_28().with_allowed(["libmissing.so.7"]))
        .check(&tree)
        .unwrap();
    assert_eq!(report.unresolved().count(), 0);
}

#[test]
fn loader_counts_when_named() {
    let f = fixture();
    // A library linked against the loader itself names it in DT_NEEDED.
    let dir = f.root.join("pkg_c/lib");
    fs::create_dir_all(&dir).unwrap();
    let src = f.root.join("c.c");
    fs::write(&src, "int c(void) { return 0; }\n").unwrap();
    let loader = [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("x86-64 loader present");
    gcc(&[
        "-shared",
        "-fPIC",
        "-Wl,--no-as-needed",
        "-o",
        &dir.join("libc_user.so").display().to_string(),
        &src.display().to_string(),
        loader,
    ]);
    fs::remove_file(&src).unwrap();
    let tree = DirTree::open(&f.root).unwrap();
    let report = LinkChecker::new()
        .only_under(["pkg_c"])
        .check(&tree)
        .unwrap();
    assert_eq!(report.files.len(), 1);
    assert_eq!(
        resolution(&report, "pkg_c/lib/libc_user.so", "ld-linux-x86-64.so.2"),
        &Resolution::Loader
    );
    assert!(report.is_ok(), "{report:#?}");
}

#[test]
fn hard_links_and_symlinks() {
    let f = fixture();
    fs::remove_file(f.root.join("pkg_a/lib/broken.so")).unwrap();
    // A devel-like tree: hard links at the same depth, and a symlinked name.
    fs::create_dir_all(f.root.join("devel/lib")).unwrap();
    fs::hard_link(
        f.root.join("pkg_a/lib/liba.so"),
        f.root.join("devel/lib/liba.so"),
    )
    .unwrap();
    std::os::unix::fs::symlink("libb.so.1", f.root.join("pkg_b/lib/libmissing.so.7")).unwrap();
    let tree = DirTree::open(&f.root).unwrap();
    let report = LinkChecker::new().check(&tree).unwrap();
    // The hard link is reported under its own path; `$ORIGIN` is relative to it.
    assert_eq!(
        resolution(&report, "devel/lib/liba.so", "libb.so.1"),
        &Resolution::Tree {
            path: "pkg_b/lib/libb.so.1".into()
        }
    );
    // A symlink provides a name (the loader follows it) but is not checked itself.
    assert_eq!(
        resolution(&report, "pkg_a/lib/liba.so", "libmissing.so.7"),
        &Resolution::Tree {
            path: "pkg_b/lib/libmissing.so.7".into()
        }
    );
    assert!(
        !report
            .files
            .iter()
            .any(|f| f.path == "pkg_b/lib/libmissing.so.7")
    );
    assert!(report.is_ok(), "{report:#?}");
    // only_under restricts what is checked, not what is found.
    let only_a = LinkChecker::new()
        .only_under(["pkg_a/"])
        .check(&tree)
        .unwrap();
    let paths: Vec<&str> = only_a.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["pkg_a/bin/prog", "pkg_a/lib/liba.so"]);
}

fn wheel(dir: &Path, name: &str, root: &Path, files: &[&str], platlib: bool) -> PathBuf {
    let mut builder = WheelBuilder::new(
        CoreMetadata::new(name, "1.0"),
        WheelTag::py3_none("linux_x86_64").unwrap(),
    )
    .unwrap();
    for &rel in files {
        let bytes = fs::read(root.join(rel)).unwrap();
        let source = Arc::new(BytesSource::new(bytes, true, rel));
        if platlib {
            builder.add_data("platlib", rel, source).unwrap();
        } else {
            builder.add_file(rel, source).unwrap();
        }
    }
    builder
        .write(dir, &WriteOptions::default(), None)
        .unwrap()
        .path
}

#[test]
fn wheel_set_is_the_union_of_its_wheels() {
    let f = fixture();
    let out = f.root.parent().unwrap().join("wheels");
    fs::create_dir_all(&out).unwrap();
    let a = wheel(
        &out,
        "pkg-a",
        &f.root,
        &[
            "pkg_a/bin/prog",
            "pkg_a/lib/liba.so",
            "pkg_a/lib/notes.txt",
            "pkg_a/lib/kernels.co",
        ],
        false,
    );
    let b = wheel(&out, "pkg-b", &f.root, &["pkg_b/lib/libb.so.1"], true);

    // Alone, pkg-a cannot find libb.
    let alone = LinkChecker::new()
        .check(&WheelSetTree::open([&a]).unwrap())
        .unwrap();
    let names: Vec<&str> = alone.unresolved().map(|u| u.name).collect();
    assert_eq!(names, ["libb.so.1", "libmissing.so.7"]);

    let set = WheelSetTree::open([&b, &a]).unwrap();
    assert!(
        set.contains_file("pkg_b/lib/libb.so.1"),
        "platlib members land at the root"
    );
    assert!(!set.contains_file("pkg_a/lib"));
    let report = LinkChecker::new().check(&set).unwrap();
    let names: Vec<&str> = report.unresolved().map(|u| u.name).collect();
    assert_eq!(names, ["libmissing.so.7"]);
    assert_eq!(
        report.files[0].origin.as_deref(),
        Some("pkg_a-1.0-py3-none-linux_x86_64.whl")
    );
    let text: Vec<String> = report.unresolved().map(|u| u.to_string()).collect();
    assert!(
        text[0].contains("(in pkg_a-1.0-py3-none-linux_x86_64.whl)"),
        "{text:?}"
    );

    // The same files on disk give the same resolutions.
    fs::remove_file(f.root.join("pkg_a/lib/broken.so")).unwrap();
    let on_disk = LinkChecker::new()
        .check(&DirTree::open(&f.root).unwrap())
        .unwrap();
    let strip = |r: &LinkReport| {
        r.files
            .iter()
            .map(|f| (f.path.clone(), f.needed.clone(), f.search_dirs.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&report), strip(&on_disk));

    // The JSON form (the machine-readable report) is stable. Which system
    // libraries gcc records, and in which order, depends on the toolchain:
    // drop those entries and sort the rest.
    let mut json = serde_json::to_value(&report).unwrap();
    for file in json["files"].as_array_mut().unwrap() {
        let needed = file["needed"].as_array_mut().unwrap();
        needed.retain(|n| n["resolution"]["kind"] != "system");
        needed.sort_by_key(|n| n["name"].as_str().unwrap().to_owned());
    }
    insta::assert_json_snapshot!("wheel_set_report", json);
}

#[test]
fn errors_name_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let e = DirTree::open(&missing).unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let e = DirTree::open(&file).unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
    let e = WheelSetTree::open([&file]).unwrap_err().to_string();
    assert!(
        e.contains("not a zip archive every installer reads the same way") && e.contains("file"),
        "{e}"
    );
}
