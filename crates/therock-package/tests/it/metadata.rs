//! The descriptive core metadata of every package (docs/pipeline.md,
//! docs/formats.md): `Summary`, `License-Expression`, `Project-URL` and
//! `Requires-Python` on every wheel and the `rocm` sdist, the defaults
//! without flags, a release's own from `--metadata FILE` and flags, and
//! `pip show` printing them from an installed wheel.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Build, Venv, artifacts, ok, therock_package};
use fixtures::ExampleMode;

/// `(file name, METADATA or PKG-INFO text)` of every package of a dist
/// directory, read by Python's zipfile and tarfile.
fn core_metadata(dist: &Path) -> Vec<(String, String)> {
    let script = r#"
import sys, tarfile, zipfile, pathlib
for path in sorted(pathlib.Path(sys.argv[1]).glob("*")):
    if path.suffix == ".whl":
        z = zipfile.ZipFile(path)
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(name).decode()
    elif path.name.endswith(".tar.gz"):
        t = tarfile.open(path)
        text = t.extractfile(next(m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))).read().decode()
    else:
        continue
    print(f"=== {path.name}")
    print(text.split("\n\n")[0])
"#;
    let out = ok(&Command::new("python3")
        .args(["-c", script])
        .arg(dist)
        .output()
        .unwrap());
    out.split("=== ")
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (name, text) = s.split_once('\n').unwrap();
            (name.to_owned(), text.to_owned())
        })
        .collect()
}

#[test]
fn every_package_carries_the_default_metadata() {
    let build = Build::new(ExampleMode::Kpack, &[]);
    let packages = core_metadata(&build.dist());
    assert!(packages.len() >= 6, "{packages:?}");
    for (name, text) in &packages {
        for line in [
            "Metadata-Version: 2.4",
            "License-Expression: MIT",
            "Project-URL: Homepage, https://github.com/ROCm/TheRock",
            "Project-URL: Documentation, https://rocm.docs.amd.com",
            "Project-URL: Source, https://github.com/ROCm/TheRock",
            "Project-URL: Issues, https://github.com/ROCm/TheRock/issues",
            "Requires-Python: >=3.9",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{name} lacks {line}:\n{text}"
            );
        }
        assert!(
            text.lines().any(|l| l.starts_with("Summary: ROCm")),
            "{name}:\n{text}"
        );
    }
    let core = &packages
        .iter()
        .find(|(n, _)| n.starts_with("rocm_sdk_core-"))
        .unwrap()
        .1;
    insta::assert_snapshot!("default_core_metadata", core);
}

#[test]
fn a_release_sets_its_own_metadata_and_pip_show_prints_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("release-metadata.toml");
    fs::write(
        &file,
        r#"
license-expression = "MIT OR Apache-2.0"
[project-urls]
Homepage = "https://example.org/rocm"
Changelog = "https://example.org/rocm/changes"
[summaries]
core = "Example ROCm core"
device = "Example device code for {target}"
"#,
    )
    .unwrap();
    let build = Build::new(
        ExampleMode::Kpack,
        &[
            "--metadata",
            file.to_str().unwrap(),
            "--license-expression",
            "MIT",
        ],
    );
    let packages = core_metadata(&build.dist());
    let text = |prefix: &str| {
        packages
            .iter()
            .find(|(n, _)| n.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}"))
            .1
            .clone()
    };
    let core = text("rocm_sdk_core-");
    // The flag wins over the file; the file's URLs replace the defaults.
    assert!(core.contains("\nLicense-Expression: MIT\n"), "{core}");
    assert!(core.contains("\nSummary: Example ROCm core\n"), "{core}");
    assert!(
        core.contains(
            "Project-URL: Homepage, https://example.org/rocm\nProject-URL: Changelog, https://example.org/rocm/changes\n"
        ),
        "{core}"
    );
    assert!(!core.contains("TheRock"), "{core}");
    assert!(
        text("rocm_sdk_device_gfx942-").contains("\nSummary: Example device code for gfx942\n")
    );
    // Kinds the file leaves out keep their default summary.
    assert!(text("rocm-7.1.0.tar.gz").contains(
        "\nSummary: ROCm SDK: selects the packages this machine needs at install time\n"
    ));

    // `pip show` of the installed core wheel.
    let venv = Venv::new();
    let wheel = fixtures::files::entry_starting_with(&build.dist(), "rocm_sdk_core-");
    ok(&venv.pip(&["install", "-q", "--no-deps", wheel.to_str().unwrap()]));
    let shown = ok(&Command::new(common::pinned_pip_python())
        .args(["-m", "pip", "--python"])
        .arg(venv.bin("python"))
        .args([
            "show",
            "--verbose",
            "--disable-pip-version-check",
            "rocm-sdk-core",
        ])
        .output()
        .unwrap());
    for line in [
        "Summary: Example ROCm core",
        "Home-page: https://example.org/rocm",
        "License-Expression: MIT",
        "Metadata-Version: 2.4",
        "  Homepage, https://example.org/rocm",
        "  Changelog, https://example.org/rocm/changes",
    ] {
        assert!(
            shown.lines().any(|l| l == line),
            "{line:?} not in:\n{shown}"
        );
    }
    let requires_python = ok(&venv.run(
        "python",
        &[
            "-c",
            "import importlib.metadata as m; print(m.metadata('rocm-sdk-core')['Requires-Python'])",
        ],
    ));
    assert_eq!(requires_python.trim(), ">=3.9");
}

#[test]
fn a_bad_metadata_file_is_refused_naming_it_and_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("release-metadata.toml");
    fs::write(&file, "[summaries]\nkernel = \"x\"\n").unwrap();
    let out = therock_package(&[
        "plan",
        "--artifact-dir",
        artifacts(ExampleMode::Kpack).to_str().unwrap(),
        "--metadata",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err =
        String::from_utf8_lossy(&out.stderr).replace(&tmp.path().display().to_string(), "[tmp]");
    insta::assert_snapshot!(err, @r#"therock-package: error: the metadata file [tmp]/release-metadata.toml cannot be used; fix it: summaries "kernel": not a package; use meta, core, libraries, device, devel or profiler"#);
}
