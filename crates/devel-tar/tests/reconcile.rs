//! Device-link reconcile: device wheels added and removed after the first
//! unpack, version tolerance, the stamp and the fast path, concurrency, and
//! uninstall cleanliness in either order.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::MetadataExt;

use common::{SitePackages, VERSION, pip_uninstall, record_paths, snapshot, unpack_concurrently};
use devel_tar::{
    DEVICE_LINKS_STAMP, DevelWarning, Error, LinkState, RUNTIME_LINKS, UnpackOptions,
    UnpackOutcome, device_links_stamp_is_current, ensure, ensure_with, reconcile_device_links,
    runtime_links,
};

const GFX942: &[(&str, &[u8])] = &[
    ("lib/rocblas/library/Kernels_gfx942.co", b"co942"),
    ("lib/hipblaslt/library/gfx942/db.dat", b"db942"),
];

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let (a, b) = (fs::metadata(a).unwrap(), fs::metadata(b).unwrap());
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Every line of the stamp is a linked distribution's dist-info and the
/// inode of its RECORD, sorted (docs/behaviour.md#device-stamp).
fn assert_stamp_lines(sp: &std::path::Path, stamp: &str) {
    let mut names = Vec::new();
    for line in stamp.lines() {
        let (name, inode) = line.split_once(' ').expect("name and inode");
        let record = fs::metadata(sp.join(name).join("RECORD")).unwrap();
        assert_eq!(inode, record.ino().to_string(), "{line}");
        names.push(name);
    }
    assert!(names.is_sorted(), "{stamp}");
    assert!(
        names.iter().any(|n| n.starts_with("rocm_sdk_core-")),
        "{stamp}"
    );
}

#[test]
fn a_reinstalled_runtime_wheel_makes_the_stamp_stale_until_the_links_are_mended() {
    let site = SitePackages::standard();
    let sp = &site.sp;
    ensure(sp).unwrap();
    assert!(device_links_stamp_is_current(sp).unwrap());
    let links = runtime_links(sp)
        .unwrap()
        .expect("the unpack keeps a record");
    let (link, source) = links
        .iter()
        .map(|l| (sp.join(&l.link), sp.join(&l.source)))
        .find(|(_, source)| source.starts_with(sp.join("_rocm_sdk_core")))
        .expect("a devel path linked to a core file");

    // What `pip install --force-reinstall rocm-sdk-core` does: every file of
    // core, RECORD included, is written anew.
    for path in [&source, &site.dist_info("rocm_sdk_core").join("RECORD")] {
        let bytes = fs::read(path).unwrap();
        let fresh = path.with_extension("reinstalled");
        fs::write(&fresh, bytes).unwrap();
        fs::rename(&fresh, path).unwrap();
    }
    assert!(!same_file(&link, &source));
    assert!(
        !device_links_stamp_is_current(sp).unwrap(),
        "the console scripts must run `rocm-sdk init` before the next devel tool"
    );

    let sharing = links
        .iter()
        .filter(|l| sp.join(&l.source) == source)
        .count();
    let report = ensure(sp).unwrap();
    assert_eq!(
        report.relinked, sharing,
        "every devel path of that core file"
    );
    assert!(same_file(&link, &source));
    assert!(device_links_stamp_is_current(sp).unwrap());
}

/// `rocm-sdk path` and the console scripts trust a current stamp; `init`
/// checks every link (docs/behaviour.md#warm-path).
#[test]
fn a_current_stamp_is_trusted_only_when_asked_and_init_still_finds_a_copied_up_file() {
    let site = SitePackages::standard();
    let sp = &site.sp;
    ensure(sp).unwrap();
    let links = runtime_links(sp).unwrap().expect("a record");
    let (link, source) = links
        .iter()
        .map(|l| (sp.join(&l.link), sp.join(&l.source)))
        .find(|(_, source)| source.starts_with(sp.join("_rocm_sdk_core")))
        .expect("a devel path linked to a core file");
    // An image layer's copy-up of one file: its RECORD stays as it was.
    let bytes = fs::read(&source).unwrap();
    let fresh = source.with_extension("copied-up");
    fs::write(&fresh, bytes).unwrap();
    fs::rename(&fresh, &source).unwrap();
    assert!(device_links_stamp_is_current(sp).unwrap());

    let trusting = UnpackOptions {
        trust_current_stamp: true,
        ..UnpackOptions::default()
    };
    let report = ensure_with(sp, &trusting).unwrap();
    assert_eq!(report.unpack.outcome, UnpackOutcome::AlreadyUnpacked);
    assert_eq!(report.relinked, 0);
    assert!(!same_file(&link, &source), "trusted, so not checked");

    let report = ensure(sp).unwrap();
    assert!(report.relinked >= 1, "{report:?}");
    assert!(same_file(&link, &source));
}

#[test]
fn device_added_then_removed_after_the_first_unpack() {
    let site = SitePackages::standard();
    ensure(&site.sp).unwrap();
    let sp = &site.sp;
    let before = snapshot(&sp.join("_rocm_sdk_devel"));
    assert!(device_links_stamp_is_current(sp).unwrap());

    site.install_device("gfx942", VERSION, GFX942);
    assert!(!device_links_stamp_is_current(sp).unwrap());
    let report = reconcile_device_links(sp).unwrap();
    assert!(!report.fast_path);
    assert_eq!(report.linked, 2);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    for (rel, _) in GFX942 {
        assert!(same_file(
            &sp.join("_rocm_sdk_devel").join(rel),
            &sp.join("_rocm_sdk_libraries").join(rel)
        ));
    }
    let device_record = record_paths(&site.record("rocm_sdk_device_gfx942"));
    for (rel, _) in GFX942 {
        assert!(device_record.contains(&format!("_rocm_sdk_devel/{rel}")));
    }
    let stamp = fs::read_to_string(sp.join("_rocm_sdk_devel").join(DEVICE_LINKS_STAMP)).unwrap();
    assert_stamp_lines(sp, &stamp);
    assert!(
        stamp.contains("\nrocm_sdk_device_gfx942-7.1.0.dist-info "),
        "{stamp}"
    );
    assert!(device_links_stamp_is_current(sp).unwrap());

    // Nothing changed: the fast path, and the device RECORD is not touched.
    let record_before = site.record("rocm_sdk_device_gfx942");
    let again = reconcile_device_links(sp).unwrap();
    assert!(again.fast_path);
    assert_eq!(site.record("rocm_sdk_device_gfx942"), record_before);

    // A link removed by hand is noticed and repaired.
    fs::remove_file(sp.join("_rocm_sdk_devel").join(GFX942[0].0)).unwrap();
    let repaired = reconcile_device_links(sp).unwrap();
    assert_eq!((repaired.fast_path, repaired.linked), (false, 1));
    assert_eq!(site.record("rocm_sdk_device_gfx942"), record_before);

    // pip removes the device wheel; the next reconcile tidies up.
    pip_uninstall(sp, "rocm_sdk_device_gfx942");
    assert!(!device_links_stamp_is_current(sp).unwrap());
    reconcile_device_links(sp).unwrap();
    assert_eq!(snapshot(&sp.join("_rocm_sdk_devel")), before);
}

#[test]
fn links_of_a_device_removed_without_pip_are_removed() {
    let site = SitePackages::standard();
    site.install_device("gfx942", VERSION, GFX942);
    ensure(&site.sp).unwrap();
    let before_device = {
        let other = SitePackages::standard();
        ensure(&other.sp).unwrap();
        snapshot(&other.sp.join("_rocm_sdk_devel"))
    };
    fs::remove_dir_all(site.dist_info("rocm_sdk_device_gfx942")).unwrap();
    let report = reconcile_device_links(&site.sp).unwrap();
    assert_eq!(report.removed, 2);
    assert_eq!(snapshot(&site.sp.join("_rocm_sdk_devel")), before_device);
}

#[test]
fn versions_must_match_up_to_a_post_release() {
    let site = SitePackages::standard();
    site.install_device("gfx942", "7.1.0.post1", GFX942);
    site.install_device("gfx1100", "7.2.0", &[("lib/k_gfx1100.co", b"x")]);
    let report = ensure(&site.sp).unwrap();
    assert_eq!(report.reconcile.linked, 2);
    assert_eq!(
        report.warnings,
        [
            DevelWarning::DanglingLink {
                path: "_rocm_sdk_devel/lib/libmissing.so.1".into(),
                target: "../../_rocm_sdk_libraries/lib/libmissing.so.1".into(),
                missing: "_rocm_sdk_libraries/lib/libmissing.so.1".into(),
            },
            DevelWarning::VersionMismatch {
                distribution: "rocm_sdk_device_gfx1100-7.2.0.dist-info".into(),
                ours: VERSION.into(),
                theirs: "7.2.0".into()
            }
        ]
    );
    assert!(!site.sp.join("_rocm_sdk_devel/lib/k_gfx1100.co").exists());
    assert!(site.sp.join("_rocm_sdk_devel").join(GFX942[0].0).is_file());
    // The mismatched wheel is in the stamp all the same: nothing to redo.
    assert!(reconcile_device_links(&site.sp).unwrap().fast_path);
}

#[test]
fn reconcile_needs_the_unpacked_tree_and_refuses_escaping_documents() {
    let site = SitePackages::standard();
    let err = reconcile_device_links(&site.sp).unwrap_err();
    assert!(matches!(err, Error::NotUnpacked { .. }), "{err}");

    ensure(&site.sp).unwrap();
    site.install_device("gfx942", VERSION, GFX942);
    let doc = site.sp.join("_rocm_sdk_libraries/.devel_links/gfx942.json");
    let text = fs::read_to_string(&doc)
        .unwrap()
        .replace("../../../../_rocm_sdk_libraries", "../../../../../..");
    fs::write(&doc, text).unwrap();
    let err = reconcile_device_links(&site.sp).unwrap_err();
    assert!(matches!(err, Error::InvalidDevelLinks { .. }), "{err}");
}

#[test]
fn concurrent_inits_with_a_device_all_succeed_and_record_once() {
    let site = SitePackages::standard();
    site.install_device("gfx942", VERSION, GFX942);
    unpack_concurrently(&site.sp, 8);
    for dist in ["rocm_sdk_devel", "rocm_sdk_device_gfx942"] {
        let rows = record_paths(&site.record(dist));
        let unique: BTreeSet<_> = rows.iter().collect();
        assert_eq!(rows.len(), unique.len(), "duplicate rows in {dist}");
    }
    assert!(device_links_stamp_is_current(&site.sp).unwrap());
    assert!(site.sp.join("_rocm_sdk_devel").join(GFX942[1].0).is_file());
}

/// Device wheels overlay the libraries package, which owns
/// `_rocm_sdk_libraries/__init__.py` (docs/behaviour.md#device) and goes last in each order.
#[test]
fn uninstall_leaves_nothing_in_either_order() {
    let (devel, g942, g1100) = (
        "rocm_sdk_devel",
        "rocm_sdk_device_gfx942",
        "rocm_sdk_device_gfx1100",
    );
    for order in [
        [devel, g942, g1100],
        [g942, devel, g1100],
        [g1100, g942, devel],
    ] {
        let site = SitePackages::standard();
        site.install_dist(
            "rocm_sdk_libraries",
            VERSION,
            &[
                ("_rocm_sdk_libraries/__init__.py", b"", 0o644),
                (
                    "_rocm_sdk_libraries/lib/rocblas/library/host.dat",
                    b"h",
                    0o644,
                ),
            ],
            "\n",
        );
        ensure(&site.sp).unwrap();
        site.install_device("gfx942", VERSION, GFX942);
        site.install_device(
            "gfx1100",
            VERSION,
            &[("lib/rocblas/library/K_gfx1100.co", b"x")],
        );
        ensure(&site.sp).unwrap();
        for dist in order
            .into_iter()
            .chain(["rocm_sdk_libraries", "rocm_sdk_core"])
        {
            pip_uninstall(&site.sp, dist);
        }
        let left = snapshot(&site.sp);
        assert!(
            left.is_empty(),
            "{order:?} left {:?}",
            left.keys().collect::<Vec<_>>()
        );
    }
}

/// Replaces `path` by a copy of itself: what an overlayfs copy-up, a
/// `docker commit` or a reinstall of the other side leaves.
fn separate(path: &std::path::Path) {
    let bytes = fs::read(path).unwrap();
    let mode = fs::metadata(path).unwrap().permissions();
    fs::remove_file(path).unwrap();
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, mode).unwrap();
}

#[test]
fn links_separated_by_an_image_layer_are_found_and_linked_again_by_ensure() {
    let site = SitePackages::standard();
    site.install_device("gfx942", VERSION, GFX942);
    let sp = &site.sp;
    ensure(sp).unwrap();
    let devel = sp.join("_rocm_sdk_devel");
    let links = runtime_links(sp).unwrap().unwrap();
    let listed: Vec<(&str, &str)> = links
        .iter()
        .map(|l| (l.link.as_str(), l.source.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "_rocm_sdk_devel/bin/hipconfig",
                "_rocm_sdk_core/lib/llvm/bin/clang"
            ),
            (
                "_rocm_sdk_devel/lib/hipblaslt/library/gfx942/db.dat",
                "_rocm_sdk_libraries/lib/hipblaslt/library/gfx942/db.dat"
            ),
            (
                "_rocm_sdk_devel/lib/libamdhip64.so",
                "_rocm_sdk_core/lib/libamdhip64.so.6"
            ),
            (
                "_rocm_sdk_devel/lib/libamdhip64.so.6",
                "_rocm_sdk_core/lib/libamdhip64.so.6"
            ),
            (
                "_rocm_sdk_devel/lib/llvm/bin/amdclang",
                "_rocm_sdk_core/lib/llvm/bin/clang"
            ),
            (
                "_rocm_sdk_devel/lib/llvm/bin/clang",
                "_rocm_sdk_core/lib/llvm/bin/clang"
            ),
            (
                "_rocm_sdk_devel/lib/rocblas/library/Kernels_gfx942.co",
                "_rocm_sdk_libraries/lib/rocblas/library/Kernels_gfx942.co"
            ),
        ]
    );
    assert!(
        links.iter().all(|l| l.state == LinkState::Same),
        "{links:?}"
    );
    assert!(
        record_paths(&site.record("rocm_sdk_devel"))
            .contains(&format!("_rocm_sdk_devel/{RUNTIME_LINKS}")),
        "the record is listed, so uninstall removes it"
    );

    // A copy-up of the runtime side of one, the devel side of another, and
    // of a device link.
    separate(&sp.join("_rocm_sdk_core/lib/llvm/bin/clang"));
    separate(&devel.join("lib/libamdhip64.so.6"));
    separate(&devel.join(GFX942[0].0));
    let separated: Vec<String> = runtime_links(sp)
        .unwrap()
        .unwrap()
        .into_iter()
        .filter(|l| l.state == LinkState::Separate)
        .map(|l| l.link)
        .collect();
    assert_eq!(
        separated,
        [
            "_rocm_sdk_devel/bin/hipconfig",
            "_rocm_sdk_devel/lib/libamdhip64.so.6",
            "_rocm_sdk_devel/lib/llvm/bin/amdclang",
            "_rocm_sdk_devel/lib/llvm/bin/clang",
            "_rocm_sdk_devel/lib/rocblas/library/Kernels_gfx942.co",
        ]
    );

    let repaired = ensure(sp).unwrap();
    assert_eq!(repaired.relinked, 4);
    assert_eq!(repaired.reconcile.linked, 1, "the device link too");
    assert!(repaired.warnings.is_empty(), "{:?}", repaired.warnings);
    assert!(same_file(
        &devel.join("lib/llvm/bin/clang"),
        &sp.join("_rocm_sdk_core/lib/llvm/bin/clang")
    ));
    assert!(same_file(
        &devel.join(GFX942[0].0),
        &sp.join("_rocm_sdk_libraries").join(GFX942[0].0)
    ));
    assert!(
        runtime_links(sp)
            .unwrap()
            .unwrap()
            .iter()
            .all(|l| l.state == LinkState::Same)
    );
    // Idempotent, and the temporary name is gone.
    let again = ensure(sp).unwrap();
    assert_eq!((again.relinked, again.reconcile.fast_path), (0, true));
    assert!(!devel.join(".runtime-link.tmp").exists());

    // Uninstalling still leaves nothing.
    pip_uninstall(sp, "rocm_sdk_device_gfx942");
    pip_uninstall(sp, "rocm_sdk_devel");
    assert!(!devel.exists());
}

#[test]
fn a_runtime_links_record_leading_out_of_the_tree_is_refused() {
    let site = SitePackages::standard();
    let sp = &site.sp;
    ensure(sp).unwrap();
    let record = sp.join("_rocm_sdk_devel").join(RUNTIME_LINKS);
    fs::write(
        &record,
        r#"{"schema": 1, "links": [["_rocm_sdk_core/lib/libamdhip64.so.6", "_rocm_sdk_devel/bin/hipcc"]]}"#,
    )
    .unwrap();
    let err = ensure(sp).unwrap_err();
    assert!(matches!(err, Error::InvalidRuntimeLinks { .. }), "{err}");
    assert!(
        err.to_string().contains("reinstall rocm-sdk-devel"),
        "{err}"
    );
}
