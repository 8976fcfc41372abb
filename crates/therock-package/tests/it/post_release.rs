//! A post-release of the `rocm` selector (docs/releasing.md, "Post-releases
//! of the selector"), end to end: the example's release `7.1.0` is built,
//! the post-release `7.1.0.post1` is written by the commands the document
//! shows, installed with pip over the `7.1.0` installation, and checked
//! with `rocm-sdk test`, `rocm-sdk path` and the Python API; `verify`
//! accepts it and refuses a selector of another release.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Build, Venv, fails, ok, verify};
use fixtures::ExampleMode;

const RELEASE: &str = "7.1.0";
const POST: &str = "7.1.0.post1";

/// The ```` ```sh ```` block of the post-release section of
/// `docs/releasing.md`.
fn documented_commands() -> String {
    let doc = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/releasing.md"
    ))
    .unwrap();
    let section = doc
        .find("## Post-releases of the selector")
        .expect("docs/releasing.md has the post-release section");
    let start = doc[section..]
        .find("```sh\n")
        .expect("the section has a sh block")
        + section
        + 6;
    let len = doc[start..].find("\n```").expect("the sh block ends");
    doc[start..start + len].to_owned()
}

/// A copy of the shared kpack build's `dist/` in a temporary directory.
fn release_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    common::publish(&[Build::shared(ExampleMode::Kpack).dist()], &dist);
    (tmp, dist)
}

/// Runs the documented commands with `therock-package` of this build on
/// `PATH`, `RELEASE` the dist directory and `VERSION` the release.
fn run_documented(dist: &Path) -> String {
    let program = Path::new(env!("CARGO_BIN_EXE_therock-package"));
    let path = format!(
        "{}:{}",
        program.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    ok(&Command::new("bash")
        .args(["-euo", "pipefail", "-c", &documented_commands()])
        .env("PATH", path)
        .env("RELEASE", dist)
        .env("VERSION", RELEASE)
        .output()
        .unwrap())
}

fn installed_versions(venv: &Venv) -> String {
    let code = "import importlib.metadata as m\n\
        print(' '.join(f'{n}={m.version(n)}' for n in ['rocm', 'rocm-sdk-core', \
        'rocm-sdk-libraries', 'rocm-sdk-devel', 'rocm-sdk-device-gfx942']))";
    ok(&venv.run("python", &["-I", "-c", code]))
        .trim()
        .to_owned()
}

#[test]
fn a_post_release_of_the_selector_installs_over_the_release_and_passes_the_self_check() {
    let (_tmp, dist) = release_copy();
    let out = run_documented(&dist);
    assert!(
        out.contains(&format!(
            "rocm-{POST}.tar.gz (the rocm selector {POST} over the release {RELEASE})"
        )),
        "{out}"
    );
    assert!(out.contains("ok      versions"), "{out}");
    assert!(
        out.contains("release verified: every check passed"),
        "{out}"
    );
    assert!(dist.join(format!("rocm-{POST}.tar.gz")).is_file());
    assert!(dist.join(format!("rocm-{RELEASE}.tar.gz")).is_file());

    // The release as users have it, then the post-release over it, with a
    // device wheel of the release added at the same time.
    let venv = Venv::new();
    ok(&venv.pip_install(&dist, &[&format!("rocm[libraries,devel]=={RELEASE}")]));
    ok(&venv.run("rocm-sdk", &["init"]));
    let requirement = format!("rocm[libraries,devel,device-gfx942]=={POST}");
    ok(&venv.pip_install(&dist, &[&requirement]));
    assert_eq!(
        installed_versions(&venv),
        format!(
            "rocm={POST} rocm-sdk-core={RELEASE} rocm-sdk-libraries={RELEASE} \
             rocm-sdk-devel={RELEASE} rocm-sdk-device-gfx942={RELEASE}"
        )
    );

    // `rocm-sdk path` links the device files into the devel tree, warning
    // of nothing.
    let sp = venv.site_packages();
    let links: serde_json::Value = serde_json::from_slice(
        &fs::read(sp.join("_rocm_sdk_libraries/.devel_links/gfx942.json")).unwrap(),
    )
    .unwrap();
    let relpath = links["links"][0]["relpath"].as_str().unwrap().to_owned();
    assert!(
        !sp.join("_rocm_sdk_devel").join(&relpath).exists(),
        "{relpath}"
    );
    let path = venv.run("rocm-sdk", &["path", "--root"]);
    ok(&path);
    let stderr = String::from_utf8_lossy(&path.stderr);
    assert!(!stderr.contains("skipping"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(
        sp.join("_rocm_sdk_devel").join(&relpath).is_file(),
        "{relpath}"
    );

    let test = venv.run("rocm-sdk", &["test"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
    assert!(test.status.success(), "{text}");
    assert!(text.contains("PASS versions: ROCm distributions"), "{text}");
    assert!(text.contains(", 0 failed"), "{text}");

    let code = "import sys, rocm_sdk\n\
        rocm_sdk.initialize_process(check_version=sys.argv[1], fail_on_version_mismatch=True)\n\
        rocm_sdk.initialize_process(check_version=sys.argv[2], fail_on_version_mismatch=True)\n\
        print(rocm_sdk.__version__)";
    let out = ok(&venv.run("python", &["-I", "-c", code, POST, RELEASE]));
    assert_eq!(out.trim(), POST);
    assert_eq!(ok(&venv.run("rocm-sdk", &["version"])).trim(), POST);
}

/// The error text of a command that must exit 1.
fn refused(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn verify_refuses_a_selector_of_another_release_over_the_packages() {
    let (_tmp, dist) = release_copy();
    // A patch release is no post-release: post-release refuses to write it.
    let program = env!("CARGO_BIN_EXE_therock-package");
    let dist_text = dist.to_str().unwrap();
    let error =
        refused(Command::new(program).args(["post-release", dist_text, "--version", "7.1.1"]));
    assert!(
        error.contains("7.1.1 is not a post-release of the release 7.1.0"),
        "{error}"
    );
    assert!(!dist.join("rocm-7.1.1.tar.gz").exists());
    let again = Command::new(program)
        .args(["post-release", dist_text, "--version", "7.1.0-1", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&ok(&again)).unwrap();
    assert_eq!(report["schema"], 1);
    assert_eq!(report["release"], RELEASE);
    // The canonical form of the version asked for.
    assert_eq!(report["version"], POST);
    assert_eq!(report["written"].as_array().unwrap().len(), 1);
    let twice = refused(Command::new(program).args(["post-release", dist_text, "--version", POST]));
    assert!(twice.contains("exists already"), "{twice}");

    // The selector of 7.1.1, built by `build`, beside the 7.1.0 packages.
    let other = Build::new(ExampleMode::Kpack, &["--version", "7.1.1"]);
    fs::copy(
        other.dist().join("rocm-7.1.1.tar.gz"),
        dist.join("rocm-7.1.1.tar.gz"),
    )
    .unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("the rocm selector is 7.1.1 ("), "{report}");
    assert!(
        report.contains("but the rocm* packages are 7.1.0: a selector must carry the packages' version or a post-release of it"),
        "{report}"
    );
}

#[test]
fn post_release_needs_the_release_s_core_wheel_and_selector_and_writes_nothing_else() {
    let program = env!("CARGO_BIN_EXE_therock-package");
    let post = |dist: &Path| {
        refused(Command::new(program).args([
            "post-release",
            dist.to_str().unwrap(),
            "--version",
            POST,
        ]))
    };
    let (_tmp, dist) = release_copy();
    fs::remove_file(dist.join(format!("rocm-{RELEASE}.tar.gz"))).unwrap();
    let error = post(&dist);
    assert!(
        error.contains(&format!(
            "holds no rocm-{RELEASE}.tar.gz: post-release starts from the release's own selector"
        )),
        "{error}"
    );
    let (_tmp, dist) = release_copy();
    fs::remove_file(dist.join(format!("rocm_sdk_core-{RELEASE}-py3-none-linux_x86_64.whl")))
        .unwrap();
    let error = post(&dist);
    assert!(error.contains("holds no rocm-sdk-core wheel"), "{error}");
    assert!(!dist.join(format!("rocm-{POST}.tar.gz")).exists());
}
