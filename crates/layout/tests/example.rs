//! Plans of the built-in example, pinned with insta snapshots.

use artifacts::ArtifactDir;
use dist_info::families::Family;
use dist_info::package::PackageKind;
use fixtures::{Example, ExampleMode, Layout};
use layout::{Action, DevelEntry, PlanInput, plan};

/// The example's version.
fn version() -> pypa_formats::version::Version {
    fixtures::VERSION.parse().unwrap()
}

/// A wheel platform tag.
fn platform_tag(tag: &str) -> pypa_formats::filename::PlatformTag {
    tag.parse().unwrap()
}

fn example() -> &'static Example {
    fixtures::shared()
}

fn plan_json(mode: ExampleMode, layout: Layout, tag: &str) -> String {
    let dir = ArtifactDir::open(&example().artifact_dir(mode, layout)).unwrap();
    let input = PlanInput::new(&dir, version(), platform_tag(tag));
    plan(&input).unwrap().to_json()
}

/// Sizes of compiled files depend on the host compiler; the plan's
/// decisions must not.
fn redact_sizes(json: &str) -> String {
    json.lines()
        .map(|line| match line.find("\"size\": ") {
            Some(at) => format!("{}\"size\": \"[size]\",", &line[..at]),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn kpack_plan() {
    insta::assert_snapshot!(redact_sizes(&plan_json(
        ExampleMode::Kpack,
        Layout::Tree,
        "linux_x86_64"
    )));
}

#[test]
fn legacy_plan() {
    insta::assert_snapshot!(redact_sizes(&plan_json(
        ExampleMode::Legacy,
        Layout::Tree,
        "linux_x86_64"
    )));
}

#[test]
fn archives_plan_like_trees() {
    for mode in ExampleMode::ALL {
        let tree = plan_json(mode, Layout::Tree, "linux_x86_64");
        for layout in [Layout::TarZst, Layout::TarXz] {
            assert_eq!(
                tree,
                plan_json(mode, layout, "linux_x86_64"),
                "{mode:?} {layout:?}"
            );
        }
    }
}

#[test]
fn windows_plans_have_no_launchers() {
    let dir = ArtifactDir::open(&example().artifact_dir(ExampleMode::Kpack, Layout::Tree)).unwrap();
    let plan = plan(&PlanInput::new(&dir, version(), platform_tag("win_amd64"))).unwrap();
    assert!(
        plan.packages
            .iter()
            .flat_map(|p| &p.files)
            .all(|f| !matches!(f.action, Action::Launcher { .. }))
    );
}

/// Each devel tree is a regular Python package, as its runtime siblings:
/// it carries an empty `__init__.py`, so `import _rocm_sdk_devel` has a
/// `__file__` after `rocm-sdk init` (docs/drop-in.md).
#[test]
fn every_devel_tree_is_a_regular_package() {
    for mode in ExampleMode::ALL {
        let dir = ArtifactDir::open(&example().artifact_dir(mode, Layout::Tree)).unwrap();
        let plan = plan(&PlanInput::new(
            &dir,
            version(),
            platform_tag("linux_x86_64"),
        ))
        .unwrap();
        let devel: Vec<_> = plan
            .packages
            .iter()
            .filter(|p| p.kind == PackageKind::Devel)
            .collect();
        assert!(!devel.is_empty(), "{mode:?} plans no devel package");
        for package in devel {
            let markers: Vec<_> = package
                .devel_tree
                .iter()
                .filter(|e| e.relpath() == "__init__.py")
                .collect();
            assert!(
                matches!(
                    markers.as_slice(),
                    [DevelEntry::Generated { bytes, .. }] if bytes.is_empty()
                ),
                "{mode:?} {}: {markers:?}",
                package.dist_name
            );
        }
    }
}

/// A copy of the kpack tree without the artifacts whose names start with
/// one of `prefixes`.
fn kpack_without(prefixes: &[&str]) -> tempfile::TempDir {
    let from = example().artifact_dir(ExampleMode::Kpack, Layout::Tree);
    let to = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !prefixes.iter().any(|p| name.starts_with(p)) {
            let status = std::process::Command::new("cp")
                .arg("-a")
                .arg(entry.path())
                .arg(to.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    to
}

fn plan_error(dir: &std::path::Path, tag: &str, linux_families: Option<&str>) -> String {
    let dir = ArtifactDir::open(dir).unwrap();
    let mut input = PlanInput::new(&dir, version(), platform_tag(tag));
    input.linux_families = linux_families.map(|list| Family::parse_list(list).unwrap());
    plan(&input).unwrap_err().to_string()
}

#[test]
fn kpack_refuses_a_listed_target_without_device_artifacts() {
    let dir = example().artifact_dir(ExampleMode::Kpack, Layout::Tree);
    let error = plan_error(&dir, "linux_x86_64", Some("gfx94X-dcgpu;gfx1101"));
    insta::assert_snapshot!(error, @"kpack build is incomplete: no device artifacts for gfx1101; expected gfx1101, gfx942 from the family list, discovered gfx1100, gfx942; fetch the missing targets' artifacts or fix the family list");
}

#[test]
fn refuses_a_set_without_libraries() {
    let dir = kpack_without(&["blas_", "fft_"]);
    let error = plan_error(dir.path(), "linux_x86_64", None);
    insta::assert_snapshot!(error, @"no libraries artifacts (blas, fft, hipdnn, miopen, miopenprovider, hipblasltprovider, hipkernelprovider, rand, rccl, rpp with component lib, target generic): refusing to build a set without rocm-sdk-libraries; include them in the artifact directory");
}

#[test]
fn profiler_is_required_on_linux_and_skipped_on_windows() {
    let dir = kpack_without(&["rocprofiler-"]);
    let error = plan_error(dir.path(), "linux_x86_64", None);
    insta::assert_snapshot!(error, @"no profiler artifacts (rocprofiler-compute, rocprofiler-systems): refusing to build an empty rocm-profiler package; include them in the artifact directory");
    let artifacts = ArtifactDir::open(dir.path()).unwrap();
    let plan = plan(&PlanInput::new(
        &artifacts,
        version(),
        platform_tag("win_amd64"),
    ))
    .unwrap();
    assert!(plan.packages.iter().all(|p| p.dist_name != "rocm-profiler"));
}

/// `(dest, text)` of every generated file of `mode`'s plan named `name`.
fn generated_files(mode: ExampleMode, tag: &str, name: &str) -> Vec<(String, String)> {
    let dir = ArtifactDir::open(&example().artifact_dir(mode, Layout::Tree)).unwrap();
    let plan = plan(&PlanInput::new(&dir, version(), platform_tag(tag))).unwrap();
    plan.packages
        .iter()
        .flat_map(|p| &p.files)
        .filter(|f| f.dest.rsplit('/').next() == Some(name))
        .map(|f| match &f.action {
            Action::Generated { bytes, .. } => {
                (f.dest.clone(), String::from_utf8(bytes.clone()).unwrap())
            }
            other => panic!("{} is not generated: {other:?}", f.dest),
        })
        .collect()
}

#[test]
fn library_records_name_the_files_each_runtime_package_ships() {
    let render = |files: Vec<(String, String)>| {
        let mut out = String::new();
        for (dest, text) in files {
            out.push_str("== ");
            out.push_str(&dest);
            out.push('\n');
            out.push_str(&text);
        }
        out
    };
    insta::assert_snapshot!(
        render(generated_files(ExampleMode::Kpack, "linux_x86_64", "_libraries.json")),
        @r#"
    == rocm_sdk_core/_libraries.json
    {
      "aliases": {
        "lib/libamdhip64.so": "libamdhip64.so.7",
        "lib/librocblas.so": "librocblas.so.5"
      },
      "distribution": "rocm-sdk-core",
      "libraries": {
        "amd_comgr": "lib/libamd_comgr.so.3",
        "amdhip64": "lib/libamdhip64.so.7",
        "rocm_sysdeps_liblzma": "lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5"
      },
      "schema": 1
    }
    == rocm_sdk_libraries/_libraries.json
    {
      "distribution": "rocm-sdk-libraries",
      "libraries": {
        "hipfft": "lib/libhipfft.so.0"
      },
      "schema": 1
    }
    "#
    );
    // Legacy: one record per family package, in its own pure package.
    let legacy = generated_files(ExampleMode::Legacy, "linux_x86_64", "_libraries.json");
    let dests: Vec<&str> = legacy.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(
        dests,
        [
            "rocm_sdk_core/_libraries.json",
            "rocm_sdk_libraries_gfx110X_all/_libraries.json",
            "rocm_sdk_libraries_gfx94X_dcgpu/_libraries.json",
        ]
    );
    assert!(
        legacy[1]
            .1
            .contains("\"distribution\": \"rocm-sdk-libraries-gfx110X-all\""),
        "{}",
        legacy[1].1
    );
    // A Windows build looks for DLLs under `bin/`: the example has none,
    // and the records say so.
    for (dest, text) in generated_files(ExampleMode::Kpack, "win_amd64", "_libraries.json") {
        assert!(text.contains("\"libraries\": {}"), "{dest}: {text}");
    }
}

#[test]
fn every_package_ships_the_selector_document_unchanged() {
    for mode in ExampleMode::ALL {
        let dir = ArtifactDir::open(&example().artifact_dir(mode, Layout::Tree)).unwrap();
        let plan = plan(&PlanInput::new(
            &dir,
            version(),
            platform_tag("linux_x86_64"),
        ))
        .unwrap();
        let sdist = &plan.selectors[0].dist_info_json;
        let document = dist_info::document::DistInfo::from_json(sdist).unwrap();
        assert!(
            !String::from_utf8_lossy(sdist).contains("_libraries.json"),
            "the per-package record stays out of the shared document"
        );
        assert_eq!(document.to_json(), *sdist, "{mode:?}");
        for (dest, text) in generated_files(mode, "linux_x86_64", "_dist_info.json") {
            assert_eq!(text.as_bytes(), sdist.as_slice(), "{mode:?} {dest}");
        }
    }
}

/// A devel link the install would refuse (out of site-packages, absolute, a
/// loop, or to a path no package installs) is left out of the devel tree
/// with its reason; a harmless link beside them stays.
#[test]
fn devel_links_the_install_would_refuse_are_left_out() {
    let copy = kpack_without(&[]);
    let include = copy
        .path()
        .join("core-hip_dev_generic/core/clr/stage/include/hip");
    let links = [
        ("escape", "../../../../../../../etc/passwd"),
        ("absolute", "/etc/passwd"),
        ("loop_a", "loop_b"),
        ("loop_b", "loop_a"),
        ("beside", "../../../x"),
        ("through_loop", "loop_a/x"),
        ("fine", "hip_runtime.h"),
    ];
    for (name, target) in links {
        std::os::unix::fs::symlink(target, include.join(name)).unwrap();
    }
    let dir = ArtifactDir::open(copy.path()).unwrap();
    let plan = plan(&PlanInput::new(
        &dir,
        version(),
        platform_tag("linux_x86_64"),
    ))
    .unwrap();
    let devel = plan
        .packages
        .iter()
        .find(|p| p.kind == dist_info::package::PackageKind::Devel)
        .unwrap();
    let in_tree = |name: &str| {
        let relpath = format!("include/hip/{name}");
        devel.devel_tree.iter().any(|e| e.relpath() == relpath)
    };
    assert!(in_tree("fine"));
    let dropped: Vec<(&str, &str)> = devel
        .dropped
        .iter()
        .map(|d| (d.relpath.as_str(), d.reason.as_str()))
        .collect();
    for (name, why) in [
        ("absolute", "absolute path \"/etc/passwd\""),
        ("beside", "outside the devel tree"),
        ("escape", "outside site-packages"),
        ("loop_a", "more than 40 links"),
        ("loop_b", "more than 40 links"),
        ("through_loop", "more than 40 links"),
    ] {
        assert!(!in_tree(name), "{name} is in the devel tree");
        let relpath = format!("include/hip/{name}");
        assert!(
            dropped
                .iter()
                .any(|(p, r)| *p == relpath && r.contains(why)),
            "{name}: {dropped:?}"
        );
    }
    assert_eq!(dropped.len(), 6, "{dropped:?}");
}
