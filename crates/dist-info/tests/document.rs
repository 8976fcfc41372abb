//! The `_dist_info.json` document: deterministic bytes, round trip, schema.

use std::collections::BTreeSet;

use dist_info::document::{DistInfo, DocumentError};
use dist_info::families::{Family, FamilyTable};
use dist_info::package::{Mode, PackageKind};
use dist_info::selector::{Selector, SelectorInput};

fn document(
    mode: Mode,
    on_disk: &[&str],
    packages: &[PackageKind],
    linux: &str,
    windows: &str,
) -> Vec<u8> {
    let input = SelectorInput {
        packages: packages.iter().copied().collect::<BTreeSet<_>>(),
        on_disk: on_disk.iter().map(|s| (*s).to_owned()).collect(),
        linux_families: Some(Family::parse_list(linux).unwrap()),
        windows_families: Some(Family::parse_list(windows).unwrap()),
        restrict_to_family: None,
    };
    let version = "7.1.0rc1".parse().unwrap();
    let selector = Selector::plan(mode, &version, &input, FamilyTable::builtin()).unwrap();
    DistInfo::new(selector, &"_n1".parse().unwrap()).to_json()
}

/// A small deterministic shuffle (no RNG dependency): rotate and reverse.
fn shuffled<T: Clone>(items: &[T], seed: usize) -> Vec<T> {
    let mut v = items.to_vec();
    if !v.is_empty() {
        let n = v.len();
        v.rotate_left(seed % n);
    }
    if seed % 2 == 1 {
        v.reverse();
    }
    v
}

#[test]
fn shuffled_inputs_give_identical_bytes() {
    let on_disk = [
        "gfx942:xnack+",
        "gfx1100",
        "gfx942:xnack-",
        "gfx950",
        "gfx1201",
    ];
    let packages = [
        PackageKind::Libraries,
        PackageKind::Devel,
        PackageKind::Profiler,
    ];
    let linux = ["gfx94X-dcgpu", "gfx950-dcgpu", "gfx110X-dgpu"];
    let windows = ["gfx110X-dgpu", "gfx120X-all"];
    let reference = document(
        Mode::Kpack,
        &on_disk,
        &packages,
        &linux.join(";"),
        &windows.join(","),
    );
    for seed in 0..12 {
        let bytes = document(
            Mode::Kpack,
            &shuffled(&on_disk, seed),
            &shuffled(&packages, seed + 1),
            &shuffled(&linux, seed + 2).join(","),
            &format!(" ;{} ;", shuffled(&windows, seed).join(" ; ")),
        );
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            String::from_utf8(reference.clone()).unwrap()
        );
    }
}

/// The issue behind docs/behaviour.md#release-lists: Linux and Windows builds of one release must
/// write the same selector, although each sees only its own device targets
/// and only Linux builds the profiler.
#[test]
fn linux_and_windows_builds_agree() {
    let linux_flag = "gfx94X-dcgpu;gfx950-dcgpu;gfx110X-dgpu";
    let windows_flag = "gfx110X-dgpu;gfx120X-all";
    let on_linux = document(
        Mode::Kpack,
        &["gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102"],
        &[
            PackageKind::Libraries,
            PackageKind::Devel,
            PackageKind::Profiler,
        ],
        linux_flag,
        windows_flag,
    );
    let on_windows = document(
        Mode::Kpack,
        &["gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"],
        &[PackageKind::Libraries, PackageKind::Devel],
        linux_flag,
        windows_flag,
    );
    assert_eq!(on_linux, on_windows);
}

#[test]
fn round_trip() {
    for mode in [Mode::Kpack, Mode::Legacy] {
        let on_disk: &[&str] = match mode {
            Mode::Kpack => &["gfx942", "gfx1100"],
            Mode::Legacy => &["gfx94X-dcgpu", "gfx110X-all"],
        };
        let flags = match mode {
            Mode::Kpack => ("gfx94X-dcgpu;gfx110X-dgpu", "gfx110X-dgpu"),
            Mode::Legacy => ("gfx94X-dcgpu;gfx110X-all", "gfx110X-all"),
        };
        let bytes = document(
            mode,
            on_disk,
            &[PackageKind::Libraries, PackageKind::Profiler],
            flags.0,
            flags.1,
        );
        let doc = DistInfo::from_json(&bytes).unwrap();
        assert_eq!(doc.to_json(), bytes, "re-serialising gives the same bytes");
        assert_eq!(doc.schema, 1);
        assert_eq!(doc.selector.version, "7.1.0rc1");
        let has_device = doc
            .packages
            .iter()
            .any(|p| p.logical == PackageKind::Device);
        assert_eq!(
            has_device,
            mode == Mode::Kpack,
            "device package only in kpack mode"
        );
    }
}

/// Asserts every object in `v` lists its keys in sorted order.
fn check_sorted(v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            let keys: Vec<&String> = map.keys().collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted);
            map.values().for_each(check_sorted);
        }
        serde_json::Value::Array(items) => items.iter().for_each(check_sorted),
        _ => {}
    }
}

#[test]
fn keys_are_sorted_everywhere() {
    let bytes = document(
        Mode::Kpack,
        &["gfx942"],
        &[PackageKind::Libraries],
        "gfx942",
        "gfx1100",
    );
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    check_sorted(&value);
    // And the text itself lists top-level keys in order.
    let text = String::from_utf8(bytes).unwrap();
    let positions: Vec<usize> = [
        "\"available_targets\"",
        "\"libraries\"",
        "\"schema\"",
        "\"version\"",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
}

#[test]
fn schema_and_shape_are_checked() {
    let bytes = document(Mode::Kpack, &["gfx942"], &[], "gfx942", "");
    let text = String::from_utf8(bytes).unwrap();
    let newer = text.replace("\"schema\": 1", "\"schema\": 2");
    let err = DistInfo::from_json(newer.as_bytes()).unwrap_err();
    assert!(
        matches!(err, DocumentError::UnsupportedSchema { found: 2 }),
        "{err}"
    );
    insta::assert_snapshot!(err, @"_dist_info.json has schema 2, this tool reads schema 1; install matching versions of `rocm` and `rocm-sdk-core`");
    assert!(matches!(
        DistInfo::from_json(b"{}"),
        Err(DocumentError::UnsupportedSchema { found: 0 })
    ));
    let broken = text.replace("\"mode\": \"kpack\"", "\"mode\": \"fancy\"");
    assert!(matches!(
        DistInfo::from_json(broken.as_bytes()),
        Err(DocumentError::Invalid(_))
    ));
    assert!(matches!(
        DistInfo::from_json(b"not json"),
        Err(DocumentError::Invalid(_))
    ));
}

#[test]
fn snapshot_kpack_release() {
    let bytes = document(
        Mode::Kpack,
        &["gfx942"],
        &[
            PackageKind::Libraries,
            PackageKind::Devel,
            PackageKind::Profiler,
        ],
        "gfx94X-dcgpu",
        "gfx110X-igpu",
    );
    insta::assert_snapshot!("dist_info_kpack_release", String::from_utf8(bytes).unwrap());
}

#[test]
fn snapshot_legacy_requirements() {
    let input = SelectorInput {
        packages: [PackageKind::Libraries, PackageKind::Devel].into(),
        on_disk: vec!["gfx94X-dcgpu".into(), "gfx110X-all".into()],
        restrict_to_family: Some("gfx94X-dcgpu".into()),
        ..SelectorInput::default()
    };
    let selector = Selector::plan(
        Mode::Legacy,
        &"7.1.0".parse().unwrap(),
        &input,
        FamilyTable::builtin(),
    )
    .unwrap();
    let chosen = selector.select_target(None, None).unwrap();
    let lines = selector
        .metadata(chosen.as_ref())
        .requires_dist()
        .join("\n");
    insta::assert_snapshot!("legacy_restricted_requires_dist", lines);
}

/// The Python tests (`python/tests`) read documents from fixtures; they must
/// be what this crate writes today, or the two sides would drift apart.
#[test]
fn python_fixtures_are_current() {
    let fixture = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../python/tests/fixtures")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let packages = [
        PackageKind::Libraries,
        PackageKind::Devel,
        PackageKind::Profiler,
    ];
    let written = |mode: Mode, on_disk: &[&str], nonce: &str| {
        let input = SelectorInput {
            packages: packages.iter().copied().collect::<BTreeSet<_>>(),
            on_disk: on_disk.iter().map(|s| (*s).to_owned()).collect(),
            ..SelectorInput::default()
        };
        let version = "7.1.0".parse().unwrap();
        let selector = Selector::plan(mode, &version, &input, FamilyTable::builtin()).unwrap();
        DistInfo::new(selector, &nonce.parse().unwrap()).to_json()
    };
    assert!(
        written(Mode::Kpack, &["gfx942", "gfx1100"], "") == fixture("dist_info_kpack.json"),
        "python/tests/fixtures/dist_info_kpack.json is stale; regenerate it (see its README)"
    );
    assert!(
        written(Mode::Legacy, &["gfx94X-dcgpu", "gfx110X-all"], "_n1")
            == fixture("dist_info_legacy.json"),
        "python/tests/fixtures/dist_info_legacy.json is stale; regenerate it (see its README)"
    );
}

/// `target_families` holds what the reference's `_dist_info` module says
/// for the same build (docs/drop-in.md): the targets as built with their
/// features, the per-platform lists as given, a per-family selector alone.
#[test]
fn target_families_are_the_references() {
    use dist_info::selector::TargetFamilies;
    let plan = |mode: Mode,
                on_disk: &[&str],
                linux: Option<&str>,
                windows: Option<&str>,
                restrict: Option<&str>| {
        let input = SelectorInput {
            packages: [PackageKind::Libraries].into_iter().collect(),
            on_disk: on_disk.iter().map(|s| (*s).to_owned()).collect(),
            linux_families: linux.map(|l| Family::parse_list(l).unwrap()),
            windows_families: windows.map(|w| Family::parse_list(w).unwrap()),
            restrict_to_family: restrict.map(str::to_owned),
        };
        Selector::plan(
            mode,
            &"7.1.0".parse().unwrap(),
            &input,
            FamilyTable::builtin(),
        )
        .unwrap()
    };
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    // The Debian kpack tree: gfx90a built with xnack on and off.
    let debian = plan(
        Mode::Kpack,
        &["gfx90a:xnack-", "gfx1030", "gfx90a:xnack+"],
        None,
        None,
        None,
    );
    assert_eq!(debian.available_targets, ["gfx1030", "gfx90a"]);
    assert_eq!(
        debian.target_families,
        Some(TargetFamilies {
            available: strings(&["gfx1030", "gfx90a:xnack+", "gfx90a:xnack-"]),
            default: Some("gfx1030".into()),
            ..TargetFamilies::default()
        })
    );
    // Only xnack variants: the default is the first of them.
    let xnack = plan(
        Mode::Kpack,
        &["gfx90a:xnack+", "gfx90a:xnack-"],
        None,
        None,
        None,
    );
    assert_eq!(xnack.default_target.as_deref(), Some("gfx90a"));
    assert_eq!(
        xnack.target_families.unwrap().default.as_deref(),
        Some("gfx90a:xnack+")
    );
    // One release list given: it, expanded; the other `[]`.
    let linux = plan(
        Mode::Kpack,
        &["gfx942"],
        Some("gfx94X-dcgpu;gfx1100"),
        None,
        None,
    );
    assert_eq!(
        linux.target_families,
        Some(TargetFamilies {
            available: strings(&["gfx1100", "gfx942"]),
            default: Some("gfx1100".into()),
            linux: strings(&["gfx1100", "gfx942"]),
            ..TargetFamilies::default()
        })
    );
    let both = plan(
        Mode::Kpack,
        &["gfx942"],
        Some("gfx942,gfx1100"),
        Some("gfx1100;gfx1151"),
        None,
    );
    let families = both.target_families.unwrap();
    assert_eq!(families.available, ["gfx1100", "gfx1151", "gfx942"]);
    assert_eq!(families.default.as_deref(), Some("gfx1100"));
    assert_eq!(families.linux, ["gfx1100", "gfx942"]);
    assert_eq!(families.windows, ["gfx1100", "gfx1151"]);
    // A legacy per-family selector: that family alone, no platform lists.
    let restricted = plan(
        Mode::Legacy,
        &["gfx94X-dcgpu", "gfx110X-all"],
        Some("gfx94X-dcgpu;gfx110X-all"),
        None,
        Some("gfx94X-dcgpu"),
    );
    assert_eq!(
        restricted.target_families,
        Some(TargetFamilies {
            available: strings(&["gfx94X-dcgpu"]),
            default: Some("gfx94X-dcgpu".into()),
            this: Some("gfx94X-dcgpu".into()),
            ..TargetFamilies::default()
        })
    );
}

/// A post-release of the selector keeps pinning the release and says its
/// own version; documents without the new keys still read.
#[test]
fn selector_version_and_older_documents() {
    let bytes = document(Mode::Kpack, &["gfx942"], &[PackageKind::Libraries], "", "");
    let mut doc = DistInfo::from_json(&bytes).unwrap();
    assert_eq!(doc.selector.own_version(), "7.1.0rc1");
    doc.selector.selector_version = Some("7.1.0rc1.post1".into());
    let post = DistInfo::from_json(&doc.to_json()).unwrap();
    assert_eq!(post.selector.own_version(), "7.1.0rc1.post1");
    assert_eq!(post.selector.version, "7.1.0rc1");
    assert!(
        post.selector
            .metadata(None)
            .requires_dist()
            .iter()
            .all(|r| r.contains("==7.1.0rc1") && !r.contains("post")),
    );
    // Without `target_families`, `library_path` and `selector_version`.
    let mut value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let object = value.as_object_mut().unwrap();
    object.remove("target_families");
    object.remove("library_path");
    let old = DistInfo::from_json(&serde_json::to_vec(&value).unwrap()).unwrap();
    assert_eq!(old.selector.target_families, None);
    assert!(old.library_path.is_empty());
    assert_eq!(old.selector.selector_version, None);
}
