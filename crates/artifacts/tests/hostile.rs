//! Hostile and odd inputs: nothing leaves the artifact tree, errors name the culprit.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use artifacts::{
    ArtifactDir, ArtifactFilter, CatalogWarning, Dangling, EntryKind, Error, Notice, PathFilter,
    Resolution,
};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn link(target: &str, path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, path).unwrap();
}

/// `{dir}/{name}/` with a manifest naming `stage`.
fn artifact(dir: &Path, name: &str) -> std::path::PathBuf {
    write(&dir.join(name).join("artifact_manifest.txt"), "stage\n");
    let stage = dir.join(name).join("stage");
    fs::create_dir_all(&stage).unwrap();
    stage
}

fn catalog(dir: &Path) -> artifacts::Catalog {
    ArtifactDir::open(dir)
        .unwrap()
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap()
}

fn resolution(c: &artifacts::Catalog, relpath: &str) -> Resolution {
    match c.get(relpath).unwrap().kind() {
        EntryKind::Symlink { resolution, .. } => resolution.clone(),
        k => panic!("{relpath}: {k:?}"),
    }
}

#[test]
fn links_out_of_the_tree_are_dangling_and_warned() {
    let t = tempfile::tempdir().unwrap();
    let stage = artifact(t.path(), "base_lib_generic");
    link("/etc/passwd", &stage.join("etc/passwd"));
    link("../../../../../../../etc/passwd", &stage.join("lib/up"));
    link("../lib/up", &stage.join("bin/via"));
    let c = catalog(t.path());
    assert_eq!(
        resolution(&c, "etc/passwd"),
        Resolution::Dangling(Dangling::Absolute)
    );
    assert_eq!(
        resolution(&c, "lib/up"),
        Resolution::Dangling(Dangling::LeavesTree)
    );
    assert_eq!(
        resolution(&c, "bin/via"),
        Resolution::Dangling(Dangling::LeavesTree)
    );
    let escaped: Vec<&str> = c
        .warnings()
        .iter()
        .filter_map(|w| match w {
            CatalogWarning::LinkNotFollowed { relpath, .. } => Some(relpath.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(escaped, ["bin/via", "etc/passwd", "lib/up"]);
    // Links carry no bytes; nothing of the host is read.
    assert_eq!(c.get("etc/passwd").unwrap().size(), 0);
    assert!(c.get("etc/passwd").unwrap().source().is_none());
}

#[test]
fn link_loops_terminate() {
    let t = tempfile::tempdir().unwrap();
    let stage = artifact(t.path(), "base_lib_generic");
    link("b", &stage.join("a"));
    link("a", &stage.join("b"));
    link("loopdir/x", &stage.join("loopdir"));
    let c = catalog(t.path());
    assert_eq!(resolution(&c, "a"), Resolution::Dangling(Dangling::Loop));
    assert_eq!(
        resolution(&c, "loopdir"),
        Resolution::Dangling(Dangling::Loop)
    );
}

#[test]
fn unsafe_manifest_lines_are_errors_naming_artifact_and_line() {
    for line in ["../../etc", "/etc", "stage/../../x"] {
        let t = tempfile::tempdir().unwrap();
        artifact(t.path(), "base_lib_generic");
        write(
            &t.path().join("base_lib_generic/artifact_manifest.txt"),
            &format!("stage\n{line}\n"),
        );
        let e = ArtifactDir::open(t.path()).unwrap_err();
        assert!(
            matches!(e, Error::UnsafeManifestLine { line_number: 2, .. }),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("base_lib_generic") && msg.contains("line 2"),
            "{msg}"
        );
    }
}

#[test]
fn odd_directories_are_skipped_with_a_notice() {
    let t = tempfile::tempdir().unwrap();
    artifact(t.path(), "base_lib_generic");
    fs::create_dir_all(t.path().join("not-an-artifact")).unwrap();
    fs::create_dir_all(t.path().join("x_y_z")).unwrap(); // no manifest
    write(&t.path().join("README.md"), "hi");
    write(
        &t.path().join("blas_lib_generic/artifact_manifest.txt"),
        "\nmissing/stage\n",
    );
    let d = ArtifactDir::open(t.path()).unwrap();
    let n = d.notices();
    assert!(
        n.contains(&Notice::NotAnArtifact {
            file_name: "not-an-artifact".into()
        }),
        "{n:?}"
    );
    assert!(n.contains(&Notice::NotAnArtifact {
        file_name: "README.md".into()
    }));
    assert!(n.contains(&Notice::NoManifest {
        artifact: "x_y_z".into()
    }));
    assert!(n.contains(&Notice::MissingBaseDir {
        artifact: "blas_lib_generic".into(),
        line: "missing/stage".into()
    }));
    assert_eq!(d.artifacts().len(), 2);
}

#[test]
fn non_utf8_names_are_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let stage = artifact(t.path(), "base_lib_generic");
    fs::write(stage.join(std::ffi::OsStr::from_bytes(b"bad\xffname")), "x").unwrap();
    let e = ArtifactDir::open(t.path()).unwrap_err();
    assert!(matches!(e, Error::NonUtf8Name { .. }), "{e}");
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
}

#[test]
fn duplicates_identical_are_silent_differing_are_warned_naming_both() {
    let t = tempfile::tempdir().unwrap();
    for name in ["b_lib_generic", "a_lib_generic"] {
        let stage = artifact(t.path(), name);
        write(&stage.join("share/same.txt"), "same");
        write(&stage.join("share/differs.txt"), name);
        link("same.txt", &stage.join("share/link"));
    }
    let c = catalog(t.path());
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
    let w = c.warnings()[0].to_string();
    assert!(
        w.contains("share/differs.txt")
            && w.contains("a_lib_generic/stage")
            && w.contains("b_lib_generic/stage"),
        "{w}"
    );
    assert!(w.contains("different contents"), "{w}");
    // The later artifact in sorted order wins.
    assert_eq!(c.get("share/differs.txt").unwrap().artifact().name(), "b");
    let mut bytes = String::new();
    std::io::Read::read_to_string(
        &mut c.get("share/differs.txt").unwrap().open().unwrap(),
        &mut bytes,
    )
    .unwrap();
    assert_eq!(bytes, "b_lib_generic");
}

#[test]
fn a_later_non_directory_shadows_an_earlier_directory() {
    let t = tempfile::tempdir().unwrap();
    write(&artifact(t.path(), "a_lib_generic").join("lib/x/file"), "x");
    link(
        "elsewhere",
        &artifact(t.path(), "b_lib_generic").join("lib/x"),
    );
    let c = catalog(t.path());
    assert!(c.get("lib/x/file").is_none());
    assert!(matches!(
        c.get("lib/x").unwrap().kind(),
        EntryKind::Symlink { .. }
    ));
    assert!(
        c.warnings().iter().any(
            |w| matches!(w, CatalogWarning::Shadowed { relpath, .. } if relpath == "lib/x/file")
        )
    );
    assert!(
        c.warnings()
            .iter()
            .any(|w| matches!(w, CatalogWarning::DuplicateDiffers { .. }))
    );
}

// ---- archives ----

enum M<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Sym(&'a str, &'a str),
    Hard(&'a str, &'a str),
}

/// Writes names verbatim (the `tar` crate's builder refuses `..`, as it should).
fn header(name: &str, kind: tar::EntryType, size: u64, link: Option<&str>) -> tar::Header {
    let mut h = tar::Header::new_old();
    let old = h.as_old_mut();
    old.name[..name.len()].copy_from_slice(name.as_bytes());
    if let Some(l) = link {
        old.linkname[..l.len()].copy_from_slice(l.as_bytes());
    }
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_cksum();
    h
}

fn archive(dir: &Path, file_name: &str, members: &[M]) {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        match m {
            M::File(n, data) => b
                .append(
                    &header(n, tar::EntryType::Regular, data.len() as u64, None),
                    *data,
                )
                .unwrap(),
            M::Dir(n) => b
                .append(&header(n, tar::EntryType::Directory, 0, None), &[][..])
                .unwrap(),
            M::Sym(n, l) => b
                .append(&header(n, tar::EntryType::Symlink, 0, Some(l)), &[][..])
                .unwrap(),
            M::Hard(n, l) => b
                .append(&header(n, tar::EntryType::Link, 0, Some(l)), &[][..])
                .unwrap(),
        }
    }
    let tar = b.into_inner().unwrap();
    fs::write(
        dir.join(file_name),
        zstd::encode_all(tar.as_slice(), 1).unwrap(),
    )
    .unwrap();
}

fn open_archive(members: &[M]) -> Result<ArtifactDir, Error> {
    open_archive_in(&tempfile::tempdir().unwrap(), members)
}

fn open_archive_in(t: &tempfile::TempDir, members: &[M]) -> Result<ArtifactDir, Error> {
    archive(t.path(), "base_lib_generic.tar.zst", members);
    ArtifactDir::open(t.path())
}

const MANIFEST: M = M::File("artifact_manifest.txt", b"stage\n");

#[test]
fn tar_slip_members_are_refused() {
    for evil in [
        M::File("../../etc/evil", b"x"),
        M::File("/etc/evil", b"x"),
        M::File("stage/../../evil", b"x"),
        M::File("elsewhere/evil", b"x"),
        M::Hard("stage/lib/h", "../etc/passwd"),
        M::Hard("stage/lib/h", "other/file"),
    ] {
        let e = open_archive(&[MANIFEST, M::Dir("stage/lib"), evil]).unwrap_err();
        assert!(matches!(e, Error::MemberOutsidePrefix { .. }), "{e}");
        assert!(e.to_string().contains("base_lib_generic.tar.zst"), "{e}");
    }
}

#[test]
fn writing_through_a_symlinked_parent_is_refused() {
    let e = open_archive(&[
        MANIFEST,
        M::Sym("stage/lib", "/etc"),
        M::File("stage/lib/passwd", b"x"),
    ])
    .unwrap_err();
    assert!(matches!(e, Error::MemberOutsidePrefix { .. }), "{e}");
}

#[test]
fn the_manifest_must_come_first() {
    let e = open_archive(&[M::File("stage/a", b"x"), MANIFEST]).unwrap_err();
    assert!(matches!(e, Error::BadArchive { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("first member must be artifact_manifest.txt"),
        "{e}"
    );
}

#[test]
fn archives_without_directory_members_and_with_hard_links_read_like_trees() {
    let t = tempfile::tempdir().unwrap();
    let d = open_archive_in(
        &t,
        &[
            MANIFEST,
            M::Dir("stage"),
            M::File("stage/lib/libx.so.1", b"ELF?"),
            M::Hard("stage/lib/libx-copy.so.1", "stage/lib/libx.so.1"),
            M::Sym("stage/lib/libx.so", "libx.so.1"),
            M::Sym("stage/lib/passwd", "/etc/passwd"),
        ],
    )
    .unwrap();
    let c = d
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    let rel: Vec<&str> = c.entries().map(artifacts::Entry::relpath).collect();
    assert_eq!(
        rel,
        [
            "lib",
            "lib/libx-copy.so.1",
            "lib/libx.so",
            "lib/libx.so.1",
            "lib/passwd"
        ]
    );
    assert_eq!(c.get("lib").unwrap().mode(), 0o755);
    let copy = c.get("lib/libx-copy.so.1").unwrap();
    let mut s = String::new();
    std::io::Read::read_to_string(&mut copy.open().unwrap(), &mut s).unwrap();
    assert_eq!(s, "ELF?");
    assert_eq!(
        resolution(&c, "lib/libx.so"),
        Resolution::File("lib/libx.so.1".into())
    );
    assert_eq!(
        resolution(&c, "lib/passwd"),
        Resolution::Dangling(Dangling::Absolute)
    );
}

#[test]
fn a_directory_is_preferred_over_its_archive() {
    let t = tempfile::tempdir().unwrap();
    write(
        &artifact(t.path(), "base_lib_generic").join("from-dir"),
        "d",
    );
    archive(
        t.path(),
        "base_lib_generic.tar.zst",
        &[MANIFEST, M::File("stage/from-archive", b"a")],
    );
    let d = ArtifactDir::open(t.path()).unwrap();
    assert_eq!(d.artifacts().len(), 1);
    assert!(d.notices().iter().any(|n| matches!(n, Notice::Superseded { file_name, .. } if file_name == "base_lib_generic.tar.zst")));
    let c = d
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    assert!(c.get("from-dir").is_some() && c.get("from-archive").is_none());
}

#[test]
fn a_missing_therock_manifest_names_the_expected_path() {
    let t = tempfile::tempdir().unwrap();
    artifact(t.path(), "base_lib_generic");
    let e = ArtifactDir::open(t.path())
        .unwrap()
        .therock_manifest()
        .unwrap_err();
    assert!(
        e.to_string().contains(
            "base_lib_generic/base/aux-overlay/stage/share/therock/therock_manifest.json is missing"
        ),
        "{e}"
    );
    let e = ArtifactDir::open(&t.path().join("nope")).unwrap_err();
    assert!(matches!(e, Error::NotADirectory { .. }), "{e}");
}

// ---- manifest prefixes, manifests, unreadable inputs ----

#[test]
fn a_symlinked_directory_anywhere_in_a_manifest_prefix_is_refused() {
    let host = tempfile::tempdir().unwrap();
    write(&host.path().join("stage/lib/host-secret.so"), "host");
    let host_dir = host.path().to_str().unwrap().to_owned();
    // (the link, its text) for the manifest line `sub/x/stage`.
    for (at, text) in [
        ("sub/x", host_dir.clone()),
        ("sub", "elsewhere".to_owned()),
        ("sub/x/stage", format!("{host_dir}/stage")),
    ] {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("base_lib_generic");
        write(&root.join("artifact_manifest.txt"), "sub/x/stage\n");
        write(&root.join("elsewhere/x/stage/lib/inside.so"), "inside");
        link(&text, &root.join(at));
        let e = ArtifactDir::open(t.path()).unwrap_err();
        assert!(
            matches!(&e, Error::SymlinkInPrefix { path, .. } if *path == root.join(at)),
            "{at}: {e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&root.join(at).display().to_string()) && msg.contains("is a symlink"),
            "{msg}"
        );
        assert!(
            msg.contains("base_lib_generic") && msg.contains("sub/x/stage"),
            "{msg}"
        );
    }
}

#[test]
fn a_manifest_prefix_through_a_file_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("base_lib_generic");
    write(&root.join("artifact_manifest.txt"), "sub/x/stage\nsub\n");
    write(&root.join("sub/x"), "a file");
    let e = ArtifactDir::open(t.path()).unwrap_err();
    assert!(e.to_string().contains("not a directory"), "{e}");
    assert!(
        e.to_string()
            .contains(&root.join("sub/x").display().to_string()),
        "{e}"
    );
}

#[test]
fn directory_links_inside_the_tree_are_never_walked() {
    let host = tempfile::tempdir().unwrap();
    write(&host.path().join("secret/key"), "host");
    let t = tempfile::tempdir().unwrap();
    let stage = artifact(t.path(), "base_lib_generic");
    write(&stage.join("lib/real/file"), "x");
    link(
        host.path().join("secret").to_str().unwrap(),
        &stage.join("lib/absolute"),
    );
    link("../../../../secret-nearby", &stage.join("lib/up"));
    fs::create_dir_all(t.path().join("secret-nearby")).unwrap();
    write(&t.path().join("secret-nearby/key"), "nearby");
    link("real", &stage.join("lib/inside"));
    let c = catalog(t.path());
    let rel: Vec<&str> = c.entries().map(artifacts::Entry::relpath).collect();
    assert_eq!(
        rel,
        [
            "lib",
            "lib/absolute",
            "lib/inside",
            "lib/real",
            "lib/real/file",
            "lib/up"
        ]
    );
    assert_eq!(
        resolution(&c, "lib/absolute"),
        Resolution::Dangling(Dangling::Absolute)
    );
    assert_eq!(
        resolution(&c, "lib/up"),
        Resolution::Dangling(Dangling::LeavesTree)
    );
    assert_eq!(
        resolution(&c, "lib/inside"),
        Resolution::Dir("lib/real".into())
    );
}

#[test]
fn a_manifest_must_be_a_regular_file_and_is_never_followed() {
    type Make = fn(&Path);
    let cases: [(&str, Make); 4] = [
        ("a directory", |m| fs::create_dir(m).unwrap()),
        ("a FIFO", |m| {
            let status = std::process::Command::new("mkfifo")
                .arg(m)
                .status()
                .unwrap();
            assert!(status.success());
        }),
        ("a symlink", |m| link("/dev/zero", m)),
        ("a symlink", |m| {
            write(&m.with_file_name("real.txt"), "stage\n");
            link("real.txt", m);
        }),
    ];
    for (kind, make) in cases {
        let t = tempfile::tempdir().unwrap();
        let stage = artifact(t.path(), "base_lib_generic");
        write(&stage.join("lib/libx.so"), "x");
        let manifest = t.path().join("base_lib_generic/artifact_manifest.txt");
        fs::remove_file(&manifest).unwrap();
        make(&manifest);
        let e = ArtifactDir::open(t.path()).unwrap_err();
        assert!(
            matches!(&e, Error::ManifestNotAFile { path, .. } if *path == manifest),
            "{kind}: {e}"
        );
        assert!(e.to_string().contains(&format!("is {kind}")), "{e}");
    }
}

// ---- archives read to their end ----

/// A tar of `members` with its end-of-archive marker, or without (cut
/// right after the last member).
fn tar_bytes(members: &[M], end_marker: bool) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        match m {
            M::File(n, data) => b
                .append(
                    &header(n, tar::EntryType::Regular, data.len() as u64, None),
                    *data,
                )
                .unwrap(),
            M::Dir(n) => b
                .append(&header(n, tar::EntryType::Directory, 0, None), &[][..])
                .unwrap(),
            M::Sym(n, l) => b
                .append(&header(n, tar::EntryType::Symlink, 0, Some(l)), &[][..])
                .unwrap(),
            M::Hard(n, l) => b
                .append(&header(n, tar::EntryType::Link, 0, Some(l)), &[][..])
                .unwrap(),
        }
    }
    if end_marker {
        b.into_inner().unwrap()
    } else {
        b.get_ref().clone()
    }
}

/// 256 KiB that no codec can shrink: the middle of its compressed form is
/// stored bytes, so a flipped byte there only changes content.
fn incompressible() -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..256 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[5]
        })
        .collect()
}

fn zstd_with_checksum(tar: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(tar).unwrap();
    e.finish().unwrap()
}

fn xz(tar: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(tar).unwrap();
    e.finish().unwrap()
}

#[test]
fn compressed_streams_are_verified_to_their_end() {
    type Compress = fn(&[u8]) -> Vec<u8>;
    let filler = incompressible();
    let tar = tar_bytes(&[MANIFEST, M::File("stage/lib/libx.so", &filler)], true);
    let mut wrong = Vec::new();
    for (file_name, compress) in [
        ("base_lib_generic.tar.zst", zstd_with_checksum as Compress),
        ("base_lib_generic.tar.xz", xz as Compress),
    ] {
        let good = compress(&tar);
        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 0x20;
        let cut = good[..good.len() - 4].to_vec();
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join(file_name), &good).unwrap();
        ArtifactDir::open(t.path()).unwrap();
        for (damage, bytes) in [("flipped", flipped), ("cut", cut)] {
            fs::write(t.path().join(file_name), &bytes).unwrap();
            // Indexing in place, and indexing while extracting (a build).
            let into = tempfile::tempdir().unwrap();
            for (how, opened) in [
                ("open", ArtifactDir::open(t.path())),
                (
                    "open_extracting",
                    ArtifactDir::open_extracting(t.path(), &ArtifactFilter::new(), into.path()),
                ),
            ] {
                let msg = match opened {
                    Ok(_) => "accepted".to_owned(),
                    Err(e) => e.to_string(),
                };
                if !(msg.contains(&t.path().join(file_name).display().to_string())
                    && msg.contains("corrupt or truncated"))
                {
                    wrong.push(format!("{file_name} {damage} ({how}): {msg}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_tar_without_its_end_of_archive_marker_is_refused() {
    let members = [
        MANIFEST,
        M::File("stage/lib/a", b"a"),
        M::File("stage/lib/b", b"b"),
    ];
    for cut_before in [1, 2, 3] {
        let tar = tar_bytes(&members[..cut_before], false);
        let t = tempfile::tempdir().unwrap();
        fs::write(
            t.path().join("base_lib_generic.tar.zst"),
            zstd::encode_all(tar.as_slice(), 3).unwrap(),
        )
        .unwrap();
        let e = ArtifactDir::open(t.path()).unwrap_err();
        assert!(matches!(e, Error::BadArchive { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("truncated archive: no end-of-archive marker"),
            "{e}"
        );
    }
    // Cut inside a member's data: also refused.
    let tar = tar_bytes(&members, true);
    let t = tempfile::tempdir().unwrap();
    fs::write(
        t.path().join("base_lib_generic.tar.zst"),
        zstd::encode_all(&tar[..512 * 4 + 100], 3).unwrap(),
    )
    .unwrap();
    assert!(ArtifactDir::open(t.path()).is_err());
}

#[test]
fn an_archive_changed_after_indexing_is_not_read() {
    let t = tempfile::tempdir().unwrap();
    open_archive_in(&t, &[MANIFEST, M::File("stage/lib/a", b"first")]).unwrap();
    let d = ArtifactDir::open(t.path()).unwrap();
    let c = d
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    // Replaced (as a download replaces a file) with other bytes of the
    // same layout: the index's offsets would read the new content, unverified.
    let other = tempfile::tempdir_in(t.path()).unwrap();
    archive(
        other.path(),
        "base_lib_generic.tar.zst",
        &[MANIFEST, M::File("stage/lib/a", b"other")],
    );
    fs::rename(
        other.path().join("base_lib_generic.tar.zst"),
        t.path().join("base_lib_generic.tar.zst"),
    )
    .unwrap();
    let e = c.get("lib/a").unwrap().open().err().expect("refused");
    assert!(
        e.to_string().contains("changed after the build indexed it"),
        "{e}"
    );
}

#[test]
fn a_file_changed_after_indexing_is_not_read() {
    // Rewritten in place with bytes of the same length (a new mtime), or
    // replaced by another file: what was classified is not what would be
    // read, so every open refuses it.
    let t = tempfile::tempdir().unwrap();
    let stage = artifact(t.path(), "base_lib_generic");
    write(&stage.join("lib/a"), "first");
    write(&stage.join("lib/b"), "first");
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    for name in ["lib/a", "lib/b"] {
        fs::File::options()
            .write(true)
            .open(stage.join(name))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let c = catalog(t.path());
    for name in ["lib/a", "lib/b"] {
        let mut bytes = String::new();
        std::io::Read::read_to_string(&mut c.get(name).unwrap().open().unwrap(), &mut bytes)
            .unwrap();
        assert_eq!(bytes, "first");
    }
    let a = stage.join("lib/a");
    fs::write(&a, "other").unwrap();
    let replacement = stage.join("lib/b.new");
    fs::write(&replacement, "other").unwrap();
    fs::File::options()
        .write(true)
        .open(&replacement)
        .unwrap()
        .set_modified(old)
        .unwrap();
    fs::rename(&replacement, stage.join("lib/b")).unwrap();
    for name in ["lib/a", "lib/b"] {
        let source = c.get(name).unwrap().source().unwrap().clone();
        let e = c.get(name).unwrap().open().err().expect("refused");
        assert!(
            matches!(&e, Error::SourceChanged { path } if path == &stage.join(name)),
            "{e}"
        );
        assert!(source.open_file().is_err(), "{name}: the seekable open too");
        assert!(source.read_to_vec().is_err());
    }
}

#[test]
fn extracted_archives_read_like_the_archive_with_hard_links_sharing_one_file() {
    let t = tempfile::tempdir().unwrap();
    let d = open_archive_in(
        &t,
        &[
            MANIFEST,
            M::File("stage/lib/libx.so.1", b"ELF?"),
            M::Hard("stage/lib/libx-copy.so.1", "stage/lib/libx.so.1"),
            M::Sym("stage/lib/libx.so", "libx.so.1"),
            M::File("stage/share/empty", b""),
            M::File("stage/share/doc", b"text"),
        ],
    )
    .unwrap();
    let into = tempfile::tempdir().unwrap();
    let extracted =
        ArtifactDir::open_extracting(t.path(), &ArtifactFilter::new(), into.path()).unwrap();
    let catalog = |d: &ArtifactDir| {
        d.catalog(&ArtifactFilter::new(), &PathFilter::new())
            .unwrap()
    };
    let (before, after) = (catalog(&d), catalog(&extracted));
    let rows = |c: &artifacts::Catalog| {
        c.entries()
            .map(|e| {
                let mut bytes = Vec::new();
                if e.is_file() {
                    std::io::Read::read_to_end(&mut e.open().unwrap(), &mut bytes).unwrap();
                }
                (e.relpath().to_owned(), e.kind().clone(), e.mode(), bytes)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&after), rows(&before));
    let source = |relpath: &str| after.get(relpath).unwrap().source().unwrap().clone();
    assert_eq!(source("lib/libx-copy.so.1"), source("lib/libx.so.1"));
    let artifacts::EntrySource::File { path, .. } = source("share/doc") else {
        panic!("an extracted member reads from a file");
    };
    assert_eq!(
        path,
        into.path().join("base_lib_generic/stage/share/doc"),
        "named after the member"
    );
    // The artifact is still the archive (errors and notices name it).
    assert_eq!(
        extracted.artifacts()[0].location(),
        d.artifacts()[0].location()
    );
}

/// xz in blocks of 64 KiB that record their sizes (as `xz -T` writes), so
/// the multithreaded decoder decodes them in parallel.
fn xz_blocks(tar: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let stream = liblzma::stream::MtStreamBuilder::new()
        .threads(2)
        .block_size(1 << 16)
        .preset(1)
        .encoder()
        .unwrap();
    let mut e = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    e.write_all(tar).unwrap();
    e.finish().unwrap()
}

#[test]
fn xz_streams_in_blocks_and_concatenated_read_like_one_stream() {
    let filler = incompressible();
    let tar = tar_bytes(
        &[
            MANIFEST,
            M::File("stage/lib/libx.so", &filler),
            M::File("stage/lib/liby.so", b"y"),
        ],
        true,
    );
    let read = |bytes: &[u8]| {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("base_lib_generic.tar.xz"), bytes).unwrap();
        let d = ArtifactDir::open(t.path())?;
        let c = d.catalog(&ArtifactFilter::new(), &PathFilter::new())?;
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut c.get("lib/libx.so").unwrap().open()?, &mut out).unwrap();
        Ok::<_, Error>(out)
    };
    let (front, back) = tar.split_at(tar.len() / 3);
    let mut padded = xz_blocks(front);
    padded.extend([0; 8]);
    padded.extend(xz(back));
    for bytes in [xz_blocks(&tar), padded.clone()] {
        assert_eq!(read(&bytes).unwrap(), filler);
    }
    let mut odd_padding = xz_blocks(front);
    odd_padding.extend([0; 3]);
    odd_padding.extend(xz(back));
    let mut trailing = xz_blocks(&tar);
    trailing.extend(b"junk");
    for (what, bytes) in [("odd padding", odd_padding), ("trailing bytes", trailing)] {
        let e = read(&bytes)
            .err()
            .unwrap_or_else(|| panic!("{what} accepted"));
        assert!(
            e.to_string().contains("corrupt or truncated"),
            "{what}: {e}"
        );
    }
}

#[test]
fn a_path_named_twice_extracts_like_it_reads_in_place() {
    let t = tempfile::tempdir().unwrap();
    let d = open_archive_in(
        &t,
        &[
            MANIFEST,
            M::File("stage/lib/a", b"first"),
            M::File("stage/lib/a", b"second"),
        ],
    )
    .unwrap();
    let into = tempfile::tempdir().unwrap();
    let extracted =
        ArtifactDir::open_extracting(t.path(), &ArtifactFilter::new(), into.path()).unwrap();
    let read = |d: &ArtifactDir| {
        let c = d
            .catalog(&ArtifactFilter::new(), &PathFilter::new())
            .unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut c.get("lib/a").unwrap().open().unwrap(), &mut bytes)
            .unwrap();
        bytes
    };
    assert_eq!(read(&d), b"second");
    assert_eq!(read(&extracted), b"second");
    // The second copy could not take the natural path.
    assert!(into.path().join("base_lib_generic/.by-offset").is_dir());
}

#[test]
fn a_directory_without_artifacts_is_refused_and_one_artifact_points_at_its_parent() {
    let t = tempfile::tempdir().unwrap();
    let e = ArtifactDir::open(t.path()).unwrap_err();
    assert!(matches!(e, Error::NoArtifacts { .. }), "{e}");
    artifact(t.path(), "base_lib_generic");
    let e = ArtifactDir::open(&t.path().join("base_lib_generic")).unwrap_err();
    let text = e.to_string().replace(t.path().to_str().unwrap(), "T");
    insta::assert_snapshot!(text, @r"no TheRock artifacts in T/base_lib_generic: an artifact directory holds one entry per artifact, a directory NAME_COMPONENT_TARGET with an artifact_manifest.txt (base_lib_generic, core-hip_lib_gfx942) or the same name as a .tar.zst or .tar.xz archive; T/base_lib_generic is itself the artifact base_lib_generic; pass its parent T");
}
