//! `therock-package index` (docs/package-index.md): the published pages of the
//! two-platform release (the flat find-links page and the PEP 503 simple
//! tree) are sorted, encoded, hashed and deterministic; pip and uv resolve
//! from the wheels' `.metadata` files without downloading a wheel, and
//! install `rocm[device-gfx942]` through both layouts on Linux.

// Wheel and sdist file names are lower-case by specification.
#![allow(clippy::case_sensitive_file_extension_comparisons)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Build, Venv, ok, publish, therock_package, two_platform_release};
use fixtures::ExampleMode;

/// The Linux and Windows outputs of the release published into one
/// directory (the sdist is the same bytes on both), indexed.
fn published() -> &'static (tempfile::TempDir, PathBuf) {
    static PUBLISHED: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    PUBLISHED.get_or_init(|| {
        let (linux, windows) = two_platform_release(true);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("whl");
        publish(&[linux.dist(), windows.dist()], &dir);
        ok(&therock_package(&[
            "index",
            "--layout",
            "both",
            dir.to_str().unwrap(),
        ]));
        (tmp, dir)
    })
}

fn index_page() -> PathBuf {
    published().1.join("index.html")
}

/// The page with every `sha256=<hex>` redacted: wheel hashes depend on
/// the host's gcc output (the example's ELF files).
fn redact_hashes(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(at) = rest.find("sha256=") {
        let (head, tail) = rest.split_at(at + "sha256=".len());
        out.push_str(head);
        let hex = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        assert_eq!(hex, 64, "a sha256 in {page}");
        out.push_str("[sha256]");
        rest = &tail[hex..];
    }
    out.push_str(rest);
    out
}

/// `(href, attributes)` of every anchor of a page.
fn anchors(page: &str) -> Vec<(String, String)> {
    page.lines()
        .filter_map(|l| l.trim().strip_prefix("<a href=\""))
        .map(|l| {
            let (href, rest) = l.split_once('"').unwrap();
            let attrs = rest.split_once('>').unwrap().0.trim().to_owned();
            (href.to_owned(), attrs)
        })
        .collect()
}

fn sha256(path: &Path) -> String {
    let out = ok(&Command::new("sha256sum").arg(path).output().unwrap());
    out.split_whitespace().next().unwrap().to_owned()
}

#[test]
fn page_is_sorted_hashed_and_deterministic() {
    let dir = &published().1;
    let page = fs::read_to_string(index_page()).unwrap();
    // Every package once, with the sha256 of its bytes.
    let mut hrefs = Vec::new();
    for line in page.lines().filter(|l| l.contains("<a href=")) {
        let href = line.split('"').nth(1).unwrap();
        let (file, sha) = href.split_once("#sha256=").unwrap();
        assert_eq!(sha, sha256(&dir.join(file)), "{file}");
        hrefs.push(file.to_owned());
    }
    let mut sorted = hrefs.clone();
    sorted.sort();
    assert_eq!(hrefs, sorted);
    assert_eq!(
        hrefs.len(),
        12,
        "7 Linux packages + 5 Windows wheels (one shared sdist)"
    );
    // Regenerating gives the same bytes and leaves no temporary file.
    let simple_page = dir.join("simple/rocm-sdk-core/index.html");
    let simple = fs::read_to_string(&simple_page).unwrap();
    ok(&therock_package(&[
        "index",
        "--layout",
        "both",
        dir.to_str().unwrap(),
    ]));
    assert_eq!(fs::read_to_string(index_page()).unwrap(), page);
    assert_eq!(fs::read_to_string(&simple_page).unwrap(), simple);
    assert!(
        fs::read_dir(dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp"))
    );
    insta::assert_snapshot!("release_index", redact_hashes(&page));
}

#[test]
fn pip_resolves_the_device_wheel_through_the_page() {
    let venv = Venv::new();
    ok(&venv.pip_install(&index_page(), &["rocm[device-gfx942]"]));
    let files = venv.site_files();
    for dist_info in [
        "rocm_sdk_device_gfx942-7.1.0.dist-info",
        "rocm_sdk_libraries-7.1.0.dist-info",
        "rocm_sdk_core-7.1.0.dist-info",
    ] {
        assert!(
            files.iter().any(|f| f == dist_info),
            "{dist_info} not installed"
        );
    }
    assert!(
        !files
            .iter()
            .any(|f| f.starts_with("rocm_sdk_device_gfx1100"))
    );
}

#[test]
fn uv_resolves_the_device_wheel_through_the_page() {
    let venv = Venv::new();
    ok(&venv.uv_install(&index_page(), &["rocm[device-gfx942]"]));
    let files = venv.site_files();
    assert!(
        files
            .iter()
            .any(|f| f == "rocm_sdk_device_gfx942-7.1.0.dist-info"),
        "{files:?}"
    );
}

#[test]
fn legacy_release_gets_one_page_per_family() {
    let build = Build::new(ExampleMode::Legacy, &[]);
    let dist = build.dist();
    // Several families: each dist/{F}/ has its own rocm sdist, so one page cannot serve all.
    let out = therock_package(&["index", dist.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).replace(&dist.display().to_string(), "[dist]");
    insta::assert_snapshot!(err, @"therock-package: error: [dist] holds rocm-7.1.0.tar.gz twice (gfx110X-all/rocm-7.1.0.tar.gz and gfx94X-dcgpu/rocm-7.1.0.tar.gz); one page cannot offer both: use --per-family for a legacy release with several families");

    let report = ok(&therock_package(&[
        "index",
        "--per-family",
        dist.to_str().unwrap(),
    ]));
    let families: Vec<String> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(families.len() >= 2, "{families:?}");
    let shared: Vec<String> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "whl"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for family in &families {
        let page = fs::read_to_string(dist.join(family).join("index.html")).unwrap();
        assert!(report.contains(&format!("{family}/index.html")), "{report}");
        assert!(page.contains("href=\"rocm-7.1.0.tar.gz#sha256="), "{page}");
        for wheel in &shared {
            assert!(
                page.contains(&format!("href=\"../{wheel}#sha256=")),
                "{wheel} missing from {family}"
            );
        }
    }
    // A family page is a complete find-links source: pip resolves from it alone.
    let family = &families[0];
    let venv = Venv::new();
    ok(&venv.pip_install(&dist.join(family).join("index.html"), &["rocm[libraries]"]));
    let libraries = format!(
        "rocm_sdk_libraries_{}-7.1.0.dist-info",
        family.replace('-', "_").to_lowercase()
    );
    assert!(
        venv.site_files().contains(&libraries),
        "{libraries} not installed"
    );
}

/// The METADATA member of a wheel, read by Python's zipfile.
fn wheel_metadata(wheel: &Path) -> Vec<u8> {
    let script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
                  name = next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))\n\
                  sys.stdout.buffer.write(z.read(name))";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(wheel)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn simple_tree_links_every_file_with_its_hashes_and_metadata() {
    let dir = &published().1;
    let root = fs::read_to_string(dir.join("simple/index.html")).unwrap();
    insta::assert_snapshot!("simple_root", root);
    let projects: Vec<String> = anchors(&root).into_iter().map(|(h, _)| h).collect();
    assert_eq!(
        projects,
        [
            "rocm/",
            "rocm-profiler/",
            "rocm-sdk-core/",
            "rocm-sdk-devel/",
            "rocm-sdk-device-gfx1100/",
            "rocm-sdk-device-gfx942/",
            "rocm-sdk-libraries/",
        ]
    );
    let mut files = 0;
    for project in &projects {
        let page_dir = dir.join("simple").join(project);
        let page = fs::read_to_string(page_dir.join("index.html")).unwrap();
        for (href, attrs) in anchors(&page) {
            files += 1;
            let (file, sha) = href.split_once("#sha256=").unwrap();
            let file = file
                .strip_prefix("../../")
                .expect("files sit beside simple/");
            let path = dir.join(file);
            assert_eq!(sha, sha256(&path), "{file}");
            assert!(
                attrs.contains("data-requires-python=\"&gt;=3.9\""),
                "{file}: {attrs}"
            );
            if file.ends_with(".whl") {
                // PEP 658/714: the metadata file is the wheel's METADATA, and
                // both attribute spellings carry its hash.
                let metadata = dir.join(format!("{file}.metadata"));
                assert_eq!(
                    fs::read(&metadata).unwrap(),
                    wheel_metadata(&path),
                    "{file}"
                );
                let digest = sha256(&metadata);
                assert!(
                    attrs.contains(&format!(
                        "data-core-metadata=\"sha256={digest}\" data-dist-info-metadata=\"sha256={digest}\""
                    )),
                    "{file}: {attrs}"
                );
            } else {
                assert!(
                    !attrs.contains("metadata"),
                    "the sdist is built at install time: {attrs}"
                );
            }
        }
    }
    assert_eq!(files, 12, "every file once, on its project's page");
    let core = fs::read_to_string(dir.join("simple/rocm-sdk-core/index.html")).unwrap();
    insta::assert_snapshot!("simple_core_page", redact_hashes(&core));
}

/// The published release with every wheel's bytes replaced by garbage
/// (their `#sha256=` then wrong): a resolver that downloaded a wheel
/// would fail, one that reads the `.metadata` files succeeds.
fn garbled() -> &'static (tempfile::TempDir, PathBuf) {
    static GARBLED: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    GARBLED.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("whl");
        ok(&Command::new("cp")
            .arg("-a")
            .arg(&published().1)
            .arg(&dir)
            .output()
            .unwrap());
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "whl") {
                fs::write(&path, b"not a wheel").unwrap();
            }
        }
        (tmp, dir)
    })
}

const DEVICE_CHAIN: [(&str, &str); 3] = [
    ("rocm-sdk-device-gfx942", "rocm_sdk_device_gfx942"),
    ("rocm-sdk-libraries", "rocm_sdk_libraries"),
    ("rocm-sdk-core", "rocm_sdk_core"),
];

#[test]
fn pip_resolves_from_metadata_files_without_downloading_a_wheel() {
    let dir = &garbled().1;
    let report = dir.parent().unwrap().join("pip-report.json");
    let out = Command::new(common::pinned_pip_python())
        .args([
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "-v",
            "--report",
        ])
        .arg(&report)
        .arg("--index-url")
        .arg(format!("file://{}/simple/", dir.display()))
        .arg("rocm-sdk-device-gfx942")
        .env_remove("PIP_FIND_LINKS")
        .output()
        .unwrap();
    let log = ok(&out);
    for (project, file) in DEVICE_CHAIN {
        // "Obtaining dependency information for rocm-sdk-core==7.1.0 from …"
        let metadata = format!(
            " from file://{}/{file}-7.1.0-py3-none-linux_x86_64.whl.metadata",
            dir.display()
        );
        assert!(
            log.lines()
                .any(|l| l.contains("Obtaining dependency information for ")
                    && l.contains(project)
                    && l.ends_with(&metadata)),
            "{metadata}\nnot in:\n{log}"
        );
    }
    assert!(
        !log.lines()
            .any(|l| l.contains("Downloading") && l.contains(".whl ")),
        "a wheel was downloaded:\n{log}"
    );
    assert!(log.contains("Would install"), "{log}");
    let report = fs::read_to_string(&report).unwrap();
    for (project, _) in DEVICE_CHAIN {
        assert!(
            report.contains(&format!("\"name\": \"{project}\"")),
            "{report}"
        );
    }
}

/// `python3 -m http.server` over a directory on a free local port; killed
/// when dropped.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Server {
    fn start(dir: &Path) -> Self {
        use std::io::BufRead;
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Self { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// uv reads a wheel on a `file://` index from disk (the zip's central
/// directory), so its use of the metadata files shows over HTTP: a local
/// server of the same directory.
#[test]
fn uv_resolves_from_metadata_files_without_downloading_a_wheel() {
    let dir = &garbled().1;
    let server = Server::start(dir);
    let requirements = dir.parent().unwrap().join("requirements.in");
    fs::write(&requirements, "rocm-sdk-device-gfx942\n").unwrap();
    let out = Command::new(common::uv())
        .args([
            "pip",
            "compile",
            "--no-cache",
            "-v",
            "--python-platform",
            "x86_64-unknown-linux-gnu",
            "--index-url",
        ])
        .arg(format!("http://127.0.0.1:{}/simple/", server.port))
        .arg(&requirements)
        .output()
        .unwrap();
    let resolved = ok(&out);
    let log = String::from_utf8_lossy(&out.stderr);
    for (project, file) in DEVICE_CHAIN {
        assert!(
            resolved.contains(&format!("{project}==7.1.0")),
            "{resolved}"
        );
        let metadata = format!(
            "GET request for: http://127.0.0.1:{}/{file}-7.1.0-py3-none-linux_x86_64.whl.metadata",
            server.port
        );
        assert!(log.contains(&metadata), "{metadata}\nnot in:\n{log}");
    }
    assert!(
        !log.lines()
            .any(|l| l.contains("GET request") && l.trim_end().ends_with(".whl")),
        "a wheel was downloaded:\n{log}"
    );
}

#[test]
fn pip_installs_through_the_simple_tree() {
    let dir = &published().1;
    let venv = Venv::new();
    ok(&venv.pip(&[
        "install",
        "-q",
        "--no-cache-dir",
        "--index-url",
        &format!("file://{}/simple/", dir.display()),
        "rocm[device-gfx942]",
    ]));
    let files = venv.site_files();
    for (_, file) in DEVICE_CHAIN {
        let dist_info = format!("{file}-7.1.0.dist-info");
        assert!(files.contains(&dist_info), "{dist_info} not installed");
    }
}

#[test]
fn uv_installs_through_the_simple_tree() {
    let dir = &published().1;
    let venv = Venv::new();
    ok(&Command::new(common::uv())
        .args(["pip", "install", "--no-cache", "--index-url"])
        .arg(format!("file://{}/simple/", dir.display()))
        .arg("--python")
        .arg(venv.bin("python"))
        .arg("rocm[device-gfx942]")
        .output()
        .unwrap());
    let files = venv.site_files();
    for (_, file) in DEVICE_CHAIN {
        let dist_info = format!("{file}-7.1.0.dist-info");
        assert!(files.contains(&dist_info), "{dist_info} not installed");
    }
}

/// Every `(file name, sha256)` a page links, and whether each link
/// announces a `.metadata` file with its sha256.
fn linked_hashes(page: &str) -> Vec<(String, String, Option<String>)> {
    anchors(page)
        .into_iter()
        .map(|(href, attrs)| {
            let (path, sha) = href.split_once("#sha256=").unwrap();
            let name = path.rsplit('/').next().unwrap().replace("%2B", "+");
            let metadata = attrs
                .split_once("data-core-metadata=\"sha256=")
                .map(|(_, rest)| rest.split('"').next().unwrap().to_owned());
            (name, sha.to_owned(), metadata)
        })
        .collect()
}

#[test]
fn a_rebuild_into_an_indexed_dist_writes_its_index_again_and_verify_checks_it() {
    let dest = tempfile::tempdir().unwrap();
    let dist = dest.path().join("dist");
    let kpack = common::artifacts(ExampleMode::Kpack);
    ok(&common::build_into(&kpack, dest.path(), &[]));
    ok(&therock_package(&[
        "index",
        "--layout",
        "both",
        dist.to_str().unwrap(),
    ]));
    let stale_page = fs::read(dist.join("index.html")).unwrap();
    // One flag changed: every wheel gets new bytes under the same name.
    ok(&common::build_into(
        &kpack,
        dest.path(),
        &["--no-wheel-compression"],
    ));
    for page in [
        dist.join("index.html"),
        dist.join("simple/rocm-sdk-core/index.html"),
    ] {
        let text = fs::read_to_string(&page).unwrap();
        let links = linked_hashes(&text);
        assert!(!links.is_empty(), "{}", page.display());
        for (name, sha, metadata) in links {
            let file = dist.join(&name);
            assert_eq!(
                sha,
                sha256(&file),
                "{} links a stale {name}",
                page.display()
            );
            if let Some(metadata_sha) = metadata {
                let beside = dist.join(format!("{name}.metadata"));
                assert_eq!(fs::read(&beside).unwrap(), wheel_metadata(&file));
                assert_eq!(metadata_sha, sha256(&beside));
            }
        }
    }
    let report = ok(&common::verify(&[&dist], &[]));
    assert!(report.contains("ok      index-pages"), "{report}");
    // pip takes the packages through the pages written again.
    let venv = Venv::new();
    ok(&venv.pip(&[
        "install",
        "-q",
        "--no-cache-dir",
        "--index-url",
        &format!("file://{}/simple/", dist.display()),
        "rocm-sdk-core",
    ]));

    // A page of the earlier build is what `verify` now reports.
    fs::write(dist.join("index.html"), stale_page).unwrap();
    let report = common::fails(&common::verify(&[&dist], &[]));
    let failed: Vec<&str> = report.lines().filter(|l| l.starts_with("FAILED")).collect();
    assert_eq!(
        failed,
        [
            "FAILED  index-pages: index pages and .metadata files beside the packages describe them as they are"
        ],
        "{report}"
    );
    assert!(
        report.contains(
            "index.html: the link to rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl carries sha256 "
        ) && report.contains(
            "(a page of an earlier build), so pip refuses the download; run `therock-package index"
        ),
        "{report}"
    );
}

#[test]
fn metadata_files_of_packages_no_longer_there_are_reported() {
    let dest = tempfile::tempdir().unwrap();
    let dist = dest.path().join("dist");
    ok(&common::build_into(
        &common::artifacts(ExampleMode::Kpack),
        dest.path(),
        &[],
    ));
    fs::write(
        dist.join("rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl.metadata"),
        b"Metadata-Version: 2.1\nName: rocm-sdk-core\nVersion: 7.0.0\n\n",
    )
    .unwrap();
    let report = common::fails(&common::verify(&[&dist], &[]));
    assert!(
        report.contains(
            "rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl.metadata: describes \
             rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl, which is not in the directory"
        ),
        "{report}"
    );
}
