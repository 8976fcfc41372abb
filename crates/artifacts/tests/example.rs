//! The built-in example: a tree and the same tree as archives give identical catalogs.

use std::io::Read;
use std::sync::Mutex;

use artifacts::{ArtifactDir, ArtifactFilter, Dangling, EntryKind, PathFilter, Resolution};
use dist_info::package::Mode;
use fixtures::{Example, ExampleMode, Layout};

fn example() -> &'static Example {
    fixtures::shared()
}

/// Everything observable about an entry, bytes included, minus where it is stored.
type Row = (String, String, u32, u64, String, Vec<u8>);

fn rows(dir: &ArtifactDir) -> Vec<Row> {
    let catalog = dir
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    let bytes = Mutex::new(std::collections::HashMap::new());
    catalog
        .for_each_file(|e, r| {
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            bytes.lock().unwrap().insert(e.relpath().to_owned(), v);
            Ok::<(), artifacts::Error>(())
        })
        .unwrap();
    let bytes = bytes.into_inner().unwrap();
    catalog
        .entries()
        .map(|e| {
            (
                e.relpath().to_owned(),
                format!("{:?}", e.kind()),
                e.mode(),
                e.size(),
                e.artifact().to_string(),
                bytes.get(e.relpath()).cloned().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn tree_and_archives_give_identical_entries_in_both_modes() {
    for mode in ExampleMode::ALL {
        let tree = ArtifactDir::open(&example().artifact_dir(mode, Layout::Tree)).unwrap();
        let expected = rows(&tree);
        assert!(expected.len() > 40, "{mode:?}: {} entries", expected.len());
        for layout in [Layout::TarZst, Layout::TarXz] {
            let archives = ArtifactDir::open(&example().artifact_dir(mode, layout)).unwrap();
            assert_eq!(rows(&archives), expected, "{mode:?} {layout:?}");
            assert_eq!(archives.notices(), tree.notices());
            let names = |d: &ArtifactDir| {
                d.artifacts()
                    .iter()
                    .map(|a| a.name().clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(&archives), names(&tree));
            for (a, b) in archives.artifacts().iter().zip(tree.artifacts()) {
                assert_eq!(a.stats(), b.stats(), "{}", a.name());
            }
        }
    }
}

#[test]
fn single_reads_match_streamed_reads() {
    let dir =
        ArtifactDir::open(&example().artifact_dir(ExampleMode::Kpack, Layout::TarXz)).unwrap();
    let tree =
        ArtifactDir::open(&example().artifact_dir(ExampleMode::Kpack, Layout::Tree)).unwrap();
    let (a, b) = (
        dir.catalog(&ArtifactFilter::new(), &PathFilter::new())
            .unwrap(),
        tree.catalog(&ArtifactFilter::new(), &PathFilter::new())
            .unwrap(),
    );
    for e in a.entries().filter(|e| e.is_file()) {
        let mut x = Vec::new();
        e.open().unwrap().read_to_end(&mut x).unwrap();
        let mut y = Vec::new();
        b.get(e.relpath())
            .unwrap()
            .open()
            .unwrap()
            .read_to_end(&mut y)
            .unwrap();
        assert_eq!(x, y, "{}", e.relpath());
        assert_eq!(x.len() as u64, e.size());
    }
}

#[test]
fn modes_versions_and_targets_are_read_from_the_build() {
    for (mode, expected, targets) in [
        (ExampleMode::Legacy, Mode::Legacy, "gfx942;gfx1100;gfx1101"),
        (
            ExampleMode::Kpack,
            Mode::Kpack,
            "gfx942;gfx942:xnack+;gfx1100",
        ),
    ] {
        for layout in Layout::ALL {
            let dir = ArtifactDir::open(&example().artifact_dir(mode, layout)).unwrap();
            let m = dir.therock_manifest().unwrap();
            assert_eq!(m.mode, expected);
            assert_eq!(m.version.as_deref(), Some(fixtures::VERSION));
            assert_eq!(dir.dist_info().unwrap().raw, targets);
        }
    }
}

#[test]
fn symlinks_resolve_across_artifacts_in_the_merged_tree() {
    let dir =
        ArtifactDir::open(&example().artifact_dir(ExampleMode::Legacy, Layout::TarZst)).unwrap();
    let all = dir
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    let res = |p: &str| match all.get(p).unwrap().kind() {
        EntryKind::Symlink { resolution, .. } => resolution.clone(),
        k => panic!("{p}: {k:?}"),
    };
    // dev link -> lib chain, across artifacts.
    assert_eq!(
        res("lib/libamdhip64.so"),
        Resolution::File("lib/libamdhip64.so.7.1.0".into())
    );
    assert_eq!(
        res("lib/llvm/lib/clang/current"),
        Resolution::Dir("lib/llvm/lib/clang/20".into())
    );
    assert_eq!(
        res("bin/rocm-smi"),
        Resolution::File("libexec/rocm_smi/rocm_smi.py".into())
    );
    // Without the lib artifact the same link dangles.
    let dev_only = dir
        .catalog(
            &ArtifactFilter::new().components(["dev"]),
            &PathFilter::new(),
        )
        .unwrap();
    match dev_only.get("lib/libamdhip64.so").unwrap().kind() {
        EntryKind::Symlink { resolution, .. } => {
            assert_eq!(resolution, &Resolution::Dangling(Dangling::Missing));
        }
        k => panic!("{k:?}"),
    }
    // The hard link in the archive reads as the file it links to.
    let (a, b) = (
        all.get("lib/llvm/bin/clang").unwrap(),
        all.get("lib/llvm/bin/clang-20").unwrap(),
    );
    assert_eq!((a.size(), a.mode()), (b.size(), b.mode()));
    assert_eq!(a.source(), b.source());
}

#[test]
fn catalog_filters_select_artifacts_and_paths() {
    let dir = ArtifactDir::open(&example().artifact_dir(ExampleMode::Kpack, Layout::Tree)).unwrap();
    let device = dir
        .catalog(
            &ArtifactFilter::new()
                .components(["lib"])
                .target_where(|t| t.split(':').next() == Some("gfx942")),
            &PathFilter::new(),
        )
        .unwrap();
    let names: Vec<String> = device.artifacts().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "blas_lib_gfx942",
            "blas_lib_gfx942:xnack+",
            "fft_lib_gfx942",
            "fft_lib_gfx942:xnack+"
        ]
    );
    assert!(
        device
            .get("lib/rocblas/library/Kernels.so-000-gfx942:xnack+.hsaco")
            .is_some()
    );
    let core = dir
        .catalog(
            &ArtifactFilter::new().names(["core-hip"]),
            &PathFilter::new().exclude("**/cmake/**"),
        )
        .unwrap();
    assert!(core.get("lib/cmake").is_none());
    assert!(core.get("lib/cmake/hip/hip-config.cmake").is_none());
    assert!(core.tree_get("lib/cmake/hip/hip-config.cmake").is_some());
    assert!(core.get("include/hip/hip_runtime.h").is_some());
    let relpaths: Vec<&str> = core.entries().map(artifacts::Entry::relpath).collect();
    let mut sorted = relpaths.clone();
    sorted.sort_unstable();
    assert_eq!(relpaths, sorted);
}
