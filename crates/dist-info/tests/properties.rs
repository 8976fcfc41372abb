//! Invariants of the selector over many release family lists.
//!
//! The normal suite checks a deterministic sample; the full sweep runs with
//! `cargo test -p dist-info -- --ignored`.

use std::collections::BTreeSet;

use dist_info::families::{Family, FamilyTable};
use dist_info::package::{Mode, Package, PackageKind};
use dist_info::requirement::Platform;
use dist_info::selector::{Selector, SelectorInput};
use pypa_formats::version::Version;

/// Every flag value to try: absent, empty, and each single family or target.
fn flag_values(extra_pairs: bool) -> Vec<Option<String>> {
    let table = FamilyTable::builtin();
    let names: Vec<String> = table
        .family_names()
        .chain(table.targets())
        .map(str::to_owned)
        .collect();
    let mut values = vec![None, Some(String::new())];
    values.extend(names.iter().cloned().map(Some));
    if extra_pairs {
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                values.push(Some(format!("{a};{b}")));
            }
        }
    }
    values
}

fn reversed_list(value: Option<&String>) -> Option<String> {
    value.map(|v| {
        let mut items: Vec<&str> = v.split(';').collect();
        items.reverse();
        format!(" {} ,", items.join(" , "))
    })
}

/// A flag value as the selector takes it.
fn list(value: Option<&String>) -> Option<Vec<Family>> {
    value.map(|v| Family::parse_list(v).unwrap())
}

fn check_pair(mode: Mode, linux: Option<&String>, windows: Option<&String>) {
    let table = FamilyTable::builtin();
    let version: Version = "7.1.0".parse().unwrap();
    let input = SelectorInput {
        packages: [
            PackageKind::Libraries,
            PackageKind::Devel,
            PackageKind::Profiler,
        ]
        .into(),
        on_disk: vec!["gfx942".into(), "gfx94X-dcgpu".into()],
        linux_families: list(linux),
        windows_families: list(windows),
        restrict_to_family: None,
    };
    let ctx = format!("{mode:?} linux={linux:?} windows={windows:?}");
    let s = Selector::plan(mode, &version, &input, table).unwrap();

    // Order of list items and of the build's own view never matters.
    let other = SelectorInput {
        packages: [PackageKind::Libraries, PackageKind::Devel].into(),
        on_disk: vec!["gfx1100".into()],
        linux_families: list(reversed_list(linux).as_ref()),
        windows_families: list(reversed_list(windows).as_ref()),
        restrict_to_family: None,
    };
    if linux.is_some() || windows.is_some() {
        assert_eq!(
            Selector::plan(mode, &version, &other, table).unwrap(),
            s,
            "{ctx}"
        );
    }

    let avail = &s.available_targets;
    assert!(
        avail.windows(2).all(|w| w[0] < w[1]),
        "{ctx}: sorted, distinct"
    );
    assert_eq!(s.default_target.is_some(), !avail.is_empty(), "{ctx}");
    if let Some(d) = &s.default_target {
        assert!(avail.contains(d), "{ctx}: default is available");
    }
    let units = |v: Option<&String>| -> BTreeSet<String> {
        let names = table.parse_list(v.map_or("", String::as_str)).unwrap();
        match mode {
            Mode::Kpack => table.expand(&names).unwrap().into_iter().collect(),
            Mode::Legacy => names.into_iter().collect(),
        }
    };
    if linux.is_some() || windows.is_some() {
        let (l, w) = (units(linux), units(windows));
        let both = !l.is_empty() && !w.is_empty();
        let inter: BTreeSet<&String> = l.intersection(&w).collect();
        if both && !inter.is_empty() {
            assert_eq!(s.default_target.as_ref(), inter.first().copied(), "{ctx}");
        }
        if !both {
            assert!(
                s.target_platforms.is_empty() && s.package_platforms.is_empty(),
                "{ctx}"
            );
        }
        for (t, p) in &s.target_platforms {
            let expected = match (l.contains(t), w.contains(t)) {
                (true, false) => Platform::Linux,
                (false, true) => Platform::Windows,
                _ => panic!("{ctx}: {t} marked but offered on both or neither"),
            };
            assert_eq!(*p, expected, "{ctx}");
        }
        assert_eq!(
            s.contents.contains(&PackageKind::Profiler),
            !l.is_empty(),
            "{ctx}"
        );
    }

    // Requirements name only packages the release has, pinned exactly.
    for chosen in [None, avail.first()] {
        let selection = s.select_target(chosen.map(String::as_str), None).unwrap();
        let metadata = s.metadata(selection.as_ref());
        let mut allowed: BTreeSet<String> = ["rocm-sdk-core".to_owned()].into();
        for kind in &s.contents {
            let p = Package::new(*kind, mode, &dist_info::nonce::Nonce::NONE);
            if p.is_target_specific() {
                for t in avail {
                    allowed.insert(p.dist_name(Some(t)).unwrap());
                }
            } else {
                allowed.insert(p.dist_name(None).unwrap());
            }
        }
        for r in metadata
            .install_requires
            .iter()
            .chain(metadata.extras.iter().flat_map(|e| &e.requirements))
        {
            assert!(
                allowed.contains(&r.name),
                "{ctx}: {r} names a package the release lacks"
            );
            assert_eq!(r.version, "7.1.0", "{ctx}");
            assert_ne!(r.name, "rocm", "{ctx}: never itself");
        }
        let extras = metadata.provides_extra();
        if mode == Mode::Kpack {
            for t in avail {
                assert!(extras.contains(&format!("device-{t}").as_str()), "{ctx}");
            }
            assert_eq!(extras.contains(&"device-all"), !avail.is_empty(), "{ctx}");
        } else {
            assert!(!extras.iter().any(|e| e.starts_with("device")), "{ctx}");
        }
    }
}

fn sweep(extra_pairs: bool, stride: usize) -> usize {
    let values = flag_values(extra_pairs);
    let mut checked = 0;
    let mut index = 0usize;
    for l in &values {
        for w in &values {
            index += 1;
            if !index.is_multiple_of(stride) {
                continue;
            }
            for mode in [Mode::Kpack, Mode::Legacy] {
                check_pair(mode, l.as_ref(), w.as_ref());
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn sampled_release_lists() {
    // Every 7th pair of single names: a fixed, deterministic sample.
    assert!(sweep(false, 7) > 400);
}

#[test]
#[ignore = "exhaustive sweep (about 90 s in debug); run with --ignored"]
fn every_release_list_pair() {
    assert!(sweep(false, 1) > 3000);
    // Two-name Linux lists against every Windows value, sampled by 5.
    assert!(sweep(true, 5) > 100_000);
}
