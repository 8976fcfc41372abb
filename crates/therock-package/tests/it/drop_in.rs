//! End to end: code written against the reference's installed `rocm_sdk`
//! keeps working on packages built from the built-in example and installed
//! with pip (docs/drop-in.md): the platform packages, the devel tree
//! included, are regular packages; `rocm_sdk._devel.get_devel_root()`
//! unpacks and names the tree; `python -m rocm_sdk test` is `rocm-sdk test`.

use crate::common;

use std::fs;
use std::path::PathBuf;
use std::process::Output;

use common::{Build, Venv, ok};
use fixtures::ExampleMode;

/// A fresh venv with libraries, devel and profiler (and one device wheel in
/// kpack mode) installed; devel not unpacked yet.
fn installed(mode: ExampleMode) -> Venv {
    let dist = Build::shared(mode).dist();
    let (links, requirement) = match mode {
        ExampleMode::Kpack => (vec![dist], "rocm[libraries,devel,profiler,device-gfx942]"),
        ExampleMode::Legacy => (
            vec![dist.join("gfx94X-dcgpu"), dist],
            "rocm[libraries,devel,profiler]",
        ),
    };
    let venv = Venv::new();
    ok(&venv.pip_install_from(&links, &[requirement]));
    venv
}

fn python(venv: &Venv, code: &str) -> String {
    ok(&venv.run("python", &["-c", code]))
}

/// After `rocm-sdk init`, `import _rocm_sdk_devel` is the regular package
/// whose directory is the devel root, and every `_rocm_*` platform package
/// of the install imports from an `__init__.py`.
#[test]
fn platform_packages_and_the_devel_tree_are_regular_packages() {
    for mode in ExampleMode::ALL {
        let venv = installed(mode);
        let sp = venv.site_packages();
        ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
        let root = ok(&venv.run("rocm-sdk", &["path", "--root"]));
        let out = python(
            &venv,
            "import _rocm_sdk_devel\nfrom pathlib import Path\n\
             print(_rocm_sdk_devel.__file__)\nprint(Path(_rocm_sdk_devel.__file__).parent)",
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                sp.join("_rocm_sdk_devel/__init__.py").display().to_string(),
                root.trim().to_owned()
            ],
            "{mode:?}"
        );

        let platform_packages: Vec<String> = fs::read_dir(&sp)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("_rocm") && sp.join(n).is_dir())
            .collect();
        assert!(
            platform_packages.len() >= 4,
            "{mode:?}: {platform_packages:?}"
        );
        let code = format!(
            "import importlib\nfor name in {platform_packages:?}:\n    \
             m = importlib.import_module(name)\n    print(name, m.__file__)"
        );
        for line in python(&venv, &code).lines() {
            let (name, file) = line.split_once(' ').unwrap();
            assert_eq!(
                file,
                sp.join(name).join("__init__.py").display().to_string(),
                "{mode:?}: {name} is not a regular package"
            );
        }
    }
}

/// `rocm_sdk._devel.get_devel_root()` unpacks on first use (through the
/// native program) and returns the same root as `rocm-sdk path --root`.
#[test]
fn get_devel_root_unpacks_and_names_the_tree() {
    let venv = installed(ExampleMode::Kpack);
    let sp = venv.site_packages();
    assert!(sp.join("rocm_sdk_devel/_devel.tar").exists());
    let out = python(
        &venv,
        "from rocm_sdk import _devel\nprint(_devel.get_devel_root())\n\
         print(_devel.get_devel_root(force_initialize=True))",
    );
    let root = sp.join("_rocm_sdk_devel").display().to_string();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [root.as_str(), root.as_str()]
    );
    assert!(!sp.join("rocm_sdk_devel/_devel.tar").exists());
    assert!(sp.join("_rocm_sdk_devel/__init__.py").is_file());
    assert!(
        sp.join("_rocm_sdk_devel/lib/cmake/hip/hip-config.cmake")
            .is_file()
    );
    assert_eq!(ok(&venv.run("rocm-sdk", &["path", "--root"])).trim(), root);
}

fn same_outcome(a: &Output, b: &Output, what: &str) {
    assert_eq!(a.status.code(), b.status.code(), "{what}: exit status");
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout),
        "{what}: stdout"
    );
    assert_eq!(
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr),
        "{what}: stderr"
    );
}

/// `python -m rocm_sdk test` and the `rocm-sdk test` script give the same
/// exit status and output, on a healthy install and on a broken one.
#[test]
fn python_m_rocm_sdk_test_is_rocm_sdk_test() {
    let venv = installed(ExampleMode::Kpack);
    ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
    for broken in [false, true] {
        if broken {
            let lib: PathBuf = venv
                .site_packages()
                .join("_rocm_sdk_core/lib/libamdhip64.so.7");
            fs::remove_file(&lib).unwrap();
        }
        for args in [&["test"][..], &["test", "--json"][..]] {
            let script = venv.run("rocm-sdk", args);
            let mut module_args = vec!["-m", "rocm_sdk"];
            module_args.extend(args);
            let module = venv.run("python", &module_args);
            let what = format!("broken={broken} {args:?}");
            assert_eq!(script.status.code(), Some(i32::from(broken)), "{what}");
            same_outcome(&script, &module, &what);
        }
    }
    // And for a usage error.
    same_outcome(
        &venv.run("rocm-sdk", &["no-such-command"]),
        &venv.run("python", &["-m", "rocm_sdk", "no-such-command"]),
        "usage error",
    );
}
