//! The built-in example: `example` generates it, `demo` runs the main job on it.

use std::path::PathBuf;
use std::process::Command;

use crate::cmd::root;

/// `cargo xtask example [--out DIR]`: writes both modes, in all three
/// layouts, and the Windows tree into DIR (default `example/`, git-ignored).
pub(crate) fn example(args: &[String]) -> Result<(), String> {
    let out = match args {
        [] => root().join("example"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask example [--out DIR]".into()),
    };
    let example = fixtures::generate(&out).map_err(|e| e.to_string())?;
    for mode in fixtures::ExampleMode::ALL {
        for layout in fixtures::Layout::ALL {
            eprintln!("wrote {}", example.artifact_dir(mode, layout).display());
        }
    }
    let windows = fixtures::generate_windows(&out).map_err(|e| e.to_string())?;
    eprintln!("wrote {}", windows.display());
    Ok(())
}

/// `cargo xtask demo [--windows]`: generates the example into `example/`,
/// runs `therock-package inspect` on both modes (checking that the archives
/// give the same report as the extracted tree), builds both modes' packages
/// into `example/out/{mode}/dist` (outside the artifact directories, which a
/// build refuses to write around), installs the kpack set into `example/venv`
/// with pip, and uses it: `rocm-sdk init`, `path`, `hipconfig --rocmpath`,
/// `rocm-sdk test`. Linux only unless `--windows`, which also installs the
/// Windows tools (mingw-w64, Wine) and builds the Windows example's
/// `win_amd64` packages into `example/out/windows/dist`.
pub(crate) fn demo(args: &[String]) -> Result<(), String> {
    let windows = match args {
        [] => false,
        [flag] if flag == "--windows" => true,
        _ => return Err("usage: cargo xtask demo [--windows]".into()),
    };
    if windows {
        crate::ci::setup(&[])?;
    } else {
        crate::ci::setup_linux()?;
    }
    let example = fixtures::generate(&root().join("example")).map_err(|e| e.to_string())?;
    crate::cmd::run("cargo", &["build", "--quiet", "-p", "therock-package"])?;
    let binary = root().join("target/debug/therock-package");
    for mode in fixtures::ExampleMode::ALL {
        let mut reports = Vec::new();
        for layout in fixtures::Layout::ALL {
            let dir = example.artifact_dir(mode, layout);
            let out = Command::new(&binary)
                .args(["inspect", "--artifact-dir"])
                .arg(&dir)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "inspect {} failed: {}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            reports.push((layout, String::from_utf8_lossy(&out.stdout).into_owned()));
        }
        let (_, tree) = &reports[0];
        println!(
            "== {} ({}) ==",
            mode.dir_name(),
            example.artifact_dir(mode, fixtures::Layout::Tree).display()
        );
        print!("{tree}");
        for (layout, report) in &reports[1..] {
            if report != tree {
                return Err(format!(
                    "{mode:?}: the {layout:?} archives give a different report than the tree"
                ));
            }
            println!(
                "{}: same report from the {} archives",
                mode.dir_name(),
                layout.dir_name()
            );
        }
        println!();
        let dest = example.root().join("out").join(mode.dir_name());
        crate::cmd::status(
            Command::new(&binary)
                .args(["build", "--artifact-dir"])
                .arg(example.artifact_dir(mode, fixtures::Layout::Tree))
                .arg("--dest-dir")
                .arg(&dest),
        )?;
    }
    if windows {
        let tree = fixtures::generate_windows(example.root()).map_err(|e| e.to_string())?;
        println!("== windows ({}) ==", tree.display());
        crate::cmd::status(
            Command::new(&binary)
                .args(["build", "--platform-tag", "win_amd64", "--artifact-dir"])
                .arg(&tree)
                .arg("--dest-dir")
                .arg(example.root().join("out/windows")),
        )?;
    }
    install_and_use(
        &example.root().join("out/kpack/dist"),
        &example.root().join("venv"),
    )
}

/// A fresh venv with `rocm[libraries,devel,device-gfx942]` from `dist`, and
/// the install-time commands run in it.
fn install_and_use(dist: &std::path::Path, venv: &std::path::Path) -> Result<(), String> {
    if venv.exists() {
        std::fs::remove_dir_all(venv)
            .map_err(|e| format!("cannot remove {}: {e}", venv.display()))?;
    }
    crate::cmd::status(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    let bin = venv.join("bin");
    // pip caches the `rocm` wheel it builds from the sdist under the sdist's
    // path; a rebuilt example keeps both path and version, so without
    // `--no-cache-dir` the venv would get the previous build's `rocm_sdk`.
    crate::cmd::status(
        Command::new(bin.join("pip"))
            .args([
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-cache-dir",
                "--no-index",
                "--find-links",
            ])
            .arg(dist)
            .arg("rocm[libraries,devel,device-gfx942]"),
    )?;
    for (program, args) in [
        ("rocm-sdk", &["version"][..]),
        ("rocm-sdk", &["init"][..]),
        ("rocm-sdk", &["path", "--root"][..]),
        ("hipconfig", &["--rocmpath"][..]),
        ("rocm-sdk", &["test"][..]),
    ] {
        println!("$ {program} {}", args.join(" "));
        crate::cmd::status(Command::new(bin.join(program)).args(args))?;
    }
    println!(
        "\ninstalled into {}; try {}/rocm-sdk --help",
        venv.display(),
        bin.display()
    );
    Ok(())
}
