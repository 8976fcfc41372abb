//! Reading the dist directories of one release: every wheel and sdist,
//! checked for well-formedness on the way (RECORD complete and hashes
//! right; file name, tags and METADATA agree; sdists laid out as pip
//! expects).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use dist_info::document::DistInfo;
use dist_info::requirement::Platform;
use fs_helpers::error_chain::Chain;
use fs_helpers::file_hash::{sha256_bytes, sha256_file};
use pypa_formats::core_metadata::headers;
use pypa_formats::dist_name::normalize;
use pypa_formats::filename::{SdistFilename, WheelFilename};
use pypa_formats::member::{check_file_mode, check_relpath};
use wheel_writer::{ReadError, WheelReader};

use super::pep508::Requirement;
use crate::devel_tarball;

/// One wheel or sdist found in a dist directory.
#[derive(Debug)]
pub(crate) struct DistFile {
    /// How the report names it: the directory as given, then the path in it.
    pub display: String,
    /// Its path on disk.
    pub path: PathBuf,
    /// The file name alone.
    pub file_name: String,
    /// Its path inside its dist directory (`dist/{F}/` subdirectories of a
    /// legacy release are separate indexes, so this is what must be unique).
    pub rel: String,
    /// Hex sha256 of the whole file.
    pub sha256: String,
    /// What it is.
    pub kind: Kind,
}

/// Wheel or sdist, with what was read from it.
#[derive(Debug)]
pub(crate) enum Kind {
    Wheel(Wheel),
    Sdist(Sdist),
}

/// What a wheel says about itself.
#[derive(Debug, Default)]
pub(crate) struct Wheel {
    /// PEP 503 normalised name (from the file name).
    pub name: String,
    /// The version (from the file name).
    pub version: String,
    /// Platforms its tags install on (`any`: all of them).
    pub platforms: Vec<Platform>,
    /// The platform tags as written.
    pub platform_tags: Vec<String>,
    /// `Requires-Dist` lines of METADATA.
    pub requires_dist: Vec<Requirement>,
    /// `Provides-Extra` values of METADATA (normalised).
    pub provides_extra: Vec<String>,
    /// Members and their RECORD hashes, for explaining differences.
    pub record: Vec<(String, String)>,
    /// The archive opened and every member read back; the checks that
    /// read members again (ELF links) skip the others, which already
    /// fail the well-formed check.
    pub readable: bool,
}

/// What an sdist says about itself.
#[derive(Debug, Default)]
pub(crate) struct Sdist {
    /// PEP 503 normalised name (from the file name).
    pub name: String,
    /// The version (from the file name).
    pub version: String,
    /// `rocm_sdk/_dist_info.json` of the `rocm` sdist (boxed: it is most
    /// of the size of an sdist's record).
    pub dist_info: Option<Box<DistInfo>>,
    /// Members and the sha256 of their bytes, for explaining differences.
    pub members: Vec<(String, String)>,
}

impl DistFile {
    pub(crate) fn name(&self) -> &str {
        match &self.kind {
            Kind::Wheel(w) => &w.name,
            Kind::Sdist(s) => &s.name,
        }
    }

    pub(crate) fn version(&self) -> &str {
        match &self.kind {
            Kind::Wheel(w) => &w.version,
            Kind::Sdist(s) => &s.version,
        }
    }

    /// Whether pip may install it on `platform` (an sdist: anywhere).
    pub(crate) fn installs_on(&self, platform: Platform) -> bool {
        match &self.kind {
            Kind::Wheel(w) => w.platforms.contains(&platform),
            Kind::Sdist(_) => true,
        }
    }
}

/// Reads one package; problems found go to `problems` (prefixed with the
/// file); `None` when the file name itself is not a package name.
pub(crate) fn read_package(
    display: String,
    rel: String,
    path: &Path,
    problems: &mut Vec<String>,
) -> Option<DistFile> {
    let file_name = path.file_name()?.to_string_lossy().into_owned();
    let sha256 = match sha256_file(path) {
        Ok(digest) => digest.hex(),
        Err(e) => {
            problems.push(format!("{display}: cannot read: {e}"));
            return None;
        }
    };
    let mut local = Vec::new();
    // Wheel and sdist names are lower-case by specification.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    let kind = if file_name.ends_with(".whl") {
        read_wheel(path, &file_name, &mut local).map(Kind::Wheel)
    } else if file_name.ends_with(".tar.gz") {
        read_sdist(path, &file_name, &mut local).map(Kind::Sdist)
    } else {
        return None;
    };
    problems.extend(local.into_iter().map(|p| format!("{display}: {p}")));
    Some(DistFile {
        display,
        rel,
        path: path.to_owned(),
        file_name,
        sha256,
        kind: kind?,
    })
}

/// Platforms a wheel platform tag installs on.
pub(crate) fn platforms_of_tag(tag: &str) -> Vec<Platform> {
    if tag == "any" {
        vec![Platform::Linux, Platform::Windows]
    } else {
        Platform::of_wheel_tag(tag).into_iter().collect()
    }
}

fn header<'a>(headers: &'a [(String, String)], key: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

fn all_headers<'a>(headers: &'a [(String, String)], key: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .iter()
        .filter(move |(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// The parsed file name, or `None` with the rule it breaks noted.
fn parse_file_name<T: FromStr>(file_name: &str, problems: &mut Vec<String>) -> Option<T>
where
    T::Err: std::fmt::Display,
{
    file_name
        .parse()
        .map_err(|e: T::Err| problems.push(e.to_string()))
        .ok()
}

fn read_wheel(path: &Path, file_name: &str, problems: &mut Vec<String>) -> Option<Wheel> {
    let filename: WheelFilename = parse_file_name(file_name, problems)?;
    let (name, version) = (filename.name.as_str(), filename.version.as_str());
    let mut wheel = Wheel {
        name: filename.name.normalized(),
        version: version.to_owned(),
        platform_tags: filename
            .tag
            .platform()
            .split('.')
            .map(str::to_owned)
            .collect(),
        ..Wheel::default()
    };
    wheel.platforms = wheel
        .platform_tags
        .iter()
        .flat_map(|t| platforms_of_tag(t))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !filename.name.is_escaped() {
        problems.push(format!(
            "the name in the file name is not escaped (expected {})",
            filename.name.escaped()
        ));
    }
    let mut reader = match WheelReader::open(path) {
        Ok(r) => r,
        Err(ReadError::UnsafeMembers { members, .. }) => {
            problems.extend(members.iter().map(|m| {
                format!(
                    "member {m}: installers refuse it or would write it outside site-packages; rebuild the wheel"
                )
            }));
            return Some(wheel);
        }
        Err(e) => {
            problems.push(Chain(&e).to_string());
            return Some(wheel);
        }
    };
    match reader.verify() {
        Ok(v) => {
            wheel.readable = v.header_mismatches.is_empty();
            problems.extend(v.problems.iter().map(|p| format!("RECORD: {p}")));
            problems.extend(v.header_mismatches.iter().map(|m| {
                format!(
                    "zip headers disagree: {m}; rebuild it (installers would read different files)"
                )
            }));
        }
        Err(e) => problems.push(Chain(&e).to_string()),
    }
    if let Ok(members) = reader.member_names() {
        problems.extend(
            members
                .iter()
                .filter(|m| devel_tarball::is_digest_file(m))
                .filter_map(|m| devel_tarball::digest_problem(path, m)),
        );
    }
    if let Ok(record) = reader.record() {
        wheel.record = record
            .into_iter()
            .map(|r| (r.path, r.hash.unwrap_or_default()))
            .collect();
    }
    let dist_info = reader.dist_info_dir().to_owned();
    let expected = filename.dist_info_dir().to_string();
    if dist_info != expected {
        problems.push(format!(
            "its .dist-info directory is {dist_info}, expected {expected}"
        ));
    }
    match reader.read_member(&format!("{dist_info}/METADATA")) {
        Ok(bytes) => {
            let h = headers(&String::from_utf8_lossy(&bytes));
            let meta_name = header(&h, "Name").unwrap_or_default();
            let meta_version = header(&h, "Version").unwrap_or_default();
            if normalize(meta_name) != wheel.name {
                problems.push(format!(
                    "METADATA Name {meta_name:?} does not match the file name ({name})"
                ));
            }
            if meta_version != version {
                problems.push(format!(
                    "METADATA Version {meta_version:?} does not match the file name ({version})"
                ));
            }
            for line in all_headers(&h, "Requires-Dist") {
                match Requirement::parse(line) {
                    Ok(r) => wheel.requires_dist.push(r),
                    Err(e) => problems.push(format!("METADATA Requires-Dist {e}")),
                }
            }
            wheel.provides_extra = all_headers(&h, "Provides-Extra")
                .map(pypa_formats::dist_name::normalize)
                .collect();
        }
        Err(e) => problems.push(Chain(&e).to_string()),
    }
    match reader.read_member(&format!("{dist_info}/WHEEL")) {
        Ok(bytes) => {
            let h = headers(&String::from_utf8_lossy(&bytes));
            let declared: BTreeSet<&str> = all_headers(&h, "Tag").collect();
            let expected: BTreeSet<String> = filename.tag.expanded().into_iter().collect();
            let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
            if declared != expected {
                problems.push(format!(
                    "WHEEL tags {:?} do not match the file name's tags {:?}",
                    declared.into_iter().collect::<Vec<_>>(),
                    expected.into_iter().collect::<Vec<_>>()
                ));
            }
        }
        Err(e) => problems.push(Chain(&e).to_string()),
    }
    Some(wheel)
}

fn read_sdist(path: &Path, file_name: &str, problems: &mut Vec<String>) -> Option<Sdist> {
    let filename: SdistFilename = parse_file_name(file_name, problems)?;
    let (name, version) = (filename.name.as_str(), filename.version.as_str());
    let mut sdist = Sdist {
        name: filename.name.normalized(),
        version: version.to_owned(),
        ..Sdist::default()
    };
    let top = filename.top_directory();
    if !filename.name.is_escaped() {
        problems.push(format!(
            "the name in the file name is not escaped (expected {top})"
        ));
    }
    let mut pkg_info = None;
    let mut dist_info_json = None;
    let mut has_pyproject = false;
    let read = for_each_sdist_file(path, &top, problems, |member, rel, bytes| {
        sdist
            .members
            .push((member.to_owned(), sha256_bytes(&bytes).hex()));
        match rel {
            "PKG-INFO" => pkg_info = Some(bytes),
            "pyproject.toml" => has_pyproject = true,
            "rocm_sdk/_dist_info.json" => dist_info_json = Some(bytes),
            _ => {}
        }
    });
    if !read {
        return Some(sdist);
    }
    sdist.members.sort();
    if !has_pyproject {
        problems.push(format!("no {top}/pyproject.toml (pip cannot build it)"));
    }
    match pkg_info {
        None => problems.push(format!("no {top}/PKG-INFO")),
        Some(bytes) => {
            let h = headers(&String::from_utf8_lossy(&bytes));
            let meta_name = header(&h, "Name").unwrap_or_default();
            let meta_version = header(&h, "Version").unwrap_or_default();
            if normalize(meta_name) != sdist.name {
                problems.push(format!(
                    "PKG-INFO Name {meta_name:?} does not match the file name ({name})"
                ));
            }
            if meta_version != version {
                problems.push(format!(
                    "PKG-INFO Version {meta_version:?} does not match the file name ({version})"
                ));
            }
        }
    }
    if sdist.name == "rocm" {
        match dist_info_json.map(|b| DistInfo::from_json(&b)) {
            None => problems.push(format!(
                "no {top}/rocm_sdk/_dist_info.json: the selector cannot compute its requirements"
            )),
            Some(Err(e)) => problems.push(format!("rocm_sdk/_dist_info.json: {}", Chain(&e))),
            Some(Ok(doc)) => {
                if doc.selector.own_version() != version {
                    problems.push(format!(
                        "rocm_sdk/_dist_info.json says version {} but the sdist is {version}",
                        doc.selector.own_version()
                    ));
                } else if !pypa_formats::version::is_release_or_post_release(
                    version,
                    &doc.selector.version,
                ) {
                    problems.push(format!(
                        "rocm_sdk/_dist_info.json pins version {} but the sdist is {version}, \
                         neither it nor a post-release of it",
                        doc.selector.version
                    ));
                }
                sdist.dist_info = Some(Box::new(doc));
            }
        }
    }
    Some(sdist)
}

/// Reads every member of the sdist at `path` by the member rules
/// (docs/behaviour.md#member-rules) and calls `file(member, rel, bytes)`
/// for each regular file, `rel` its path below `top`; every member
/// refused goes to `problems`. False when the archive could not be read
/// to its end (noted in `problems` too).
fn for_each_sdist_file(
    path: &Path,
    top: &str,
    problems: &mut Vec<String>,
    mut file: impl FnMut(&str, &str, Vec<u8>),
) -> bool {
    let opened = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            problems.push(format!("cannot open: {e}"));
            return false;
        }
    };
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(opened));
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            problems.push(format!("not a gzip-compressed tar archive: {e}"));
            return false;
        }
    };
    let mut seen = BTreeSet::new();
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("cannot read the archive: {e}; rebuild it"));
                return false;
            }
        };
        let raw = entry.path_bytes().into_owned();
        let member = String::from_utf8_lossy(&raw).into_owned();
        let kind = entry.header().entry_type();
        match sdist_member_problem(&raw, top, &entry) {
            Some(problem) => {
                problems.push(format!("member {member} {problem}"));
                continue;
            }
            None if !kind.is_file() => continue,
            None => {}
        }
        if !seen.insert(member.clone()) {
            problems.push(format!(
                "member {member} appears more than once; an unpacker keeps only one of them"
            ));
            continue;
        }
        let mut bytes = Vec::new();
        if let Err(e) = entry.read_to_end(&mut bytes) {
            problems.push(format!("cannot read member {member}: {e}; rebuild it"));
            return false;
        }
        let rel = member[top.len()..].trim_start_matches('/').to_owned();
        file(&member, &rel, bytes);
    }
    true
}

/// What is wrong with one sdist member, by the member rules: a clean
/// relative path at or below `top`, a regular file or a directory, no
/// special mode bits. `None` when it is acceptable.
fn sdist_member_problem<R: Read>(
    raw: &[u8],
    top: &str,
    entry: &tar::Entry<'_, R>,
) -> Option<String> {
    let Ok(name) = std::str::from_utf8(raw) else {
        return Some("has a name that is not UTF-8".to_owned());
    };
    let path = name.strip_suffix('/').unwrap_or(name);
    if let Err(problem) = check_relpath(path) {
        return Some(format!("is not a clean relative path ({problem})"));
    }
    let inside = path
        .strip_prefix(top)
        .is_some_and(|r| r.is_empty() || r.starts_with('/'));
    if !inside {
        return Some(format!("is outside the top directory {top}/"));
    }
    let kind = entry.header().entry_type();
    if kind.is_symlink() || kind.is_hard_link() {
        return Some("is a link; sdists carry regular files only".to_owned());
    }
    let file_type = match kind {
        tar::EntryType::Regular | tar::EntryType::Continuous => 0o100_000,
        tar::EntryType::Directory => 0o040_000,
        tar::EntryType::Char | tar::EntryType::Block => 0o020_000,
        tar::EntryType::Fifo => 0o010_000,
        other => {
            return Some(format!(
                "has tar entry type {:?}; sdists carry regular files only",
                char::from(other.as_byte())
            ));
        }
    };
    let mode = entry.header().mode().unwrap_or(0o644) & 0o7777;
    check_file_mode(file_type | mode)
        .err()
        .map(|problem| format!("is refused: {problem}"))
}

/// An sdist that breaks the member rules, or has no `PKG-INFO`.
#[derive(Debug, thiserror::Error)]
#[error("{path} is not a well-formed sdist: {}; rebuild it, or remove it from the directory", .problems.join("; "))]
pub struct SdistError {
    /// The sdist.
    pub path: PathBuf,
    /// What is wrong, one sentence each.
    pub problems: Vec<String>,
}

/// The `PKG-INFO` at the top of the sdist at `path`, read by the same
/// member rules `verify` applies (what `index` serves).
pub fn sdist_pkg_info(path: &Path) -> Result<Vec<u8>, SdistError> {
    sdist_file(path, "PKG-INFO")
}

/// The member `relpath` (below the sdist's top directory) of the sdist at
/// `path`, read by the same member rules `verify` applies.
pub fn sdist_file(path: &Path, relpath: &str) -> Result<Vec<u8>, SdistError> {
    let mut problems = Vec::new();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut pkg_info = None;
    if let Some(filename) = parse_file_name::<SdistFilename>(&file_name, &mut problems) {
        let top = filename.top_directory();
        for_each_sdist_file(path, &top, &mut problems, |_, rel, bytes| {
            if rel == relpath {
                pkg_info = Some(bytes);
            }
        });
    }
    match pkg_info {
        Some(bytes) if problems.is_empty() => Ok(bytes),
        _ => {
            if problems.is_empty() {
                problems.push(format!("no {relpath} at its top"));
            }
            Err(SdistError {
                path: path.to_owned(),
                problems,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a file named `name` whose bytes are no archive at all.
    fn read(name: &str) -> (Option<DistFile>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, b"not an archive").unwrap();
        let mut problems = Vec::new();
        let file = read_package(name.to_owned(), name.to_owned(), &path, &mut problems);
        (file, problems)
    }

    #[test]
    fn a_malformed_file_name_is_one_problem_naming_the_rule() {
        let (file, problems) = read("rocm_sdk_core-7.1.0RC1-py3-none-linux_x86_64.whl");
        assert!(file.is_none());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_reported(&problems, "canonical spelling is `7.1.0rc1`");
        let (file, problems) = read("rocm-7.1.0-any.whl");
        assert!(file.is_none());
        assert_reported(&problems, "3 `-`-separated parts");
    }

    fn assert_reported(problems: &[String], text: &str) {
        assert!(
            problems.iter().any(|p| p.contains(text)),
            "{text:?} not in {problems:?}"
        );
    }

    #[test]
    fn an_unescaped_name_is_reported_and_the_package_still_read() {
        let (file, problems) = read("Rocm.Sdk-7.1.0-py3-none-any.whl");
        assert!(matches!(file.map(|f| f.kind), Some(Kind::Wheel(w)) if w.name == "rocm-sdk"));
        assert_reported(&problems, "not escaped (expected rocm_sdk)");
        let (file, problems) = read("Rocm-7.1.0.tar.gz");
        assert!(matches!(file.map(|f| f.kind), Some(Kind::Sdist(s)) if s.name == "rocm"));
        assert_reported(&problems, "not escaped (expected rocm-7.1.0)");
    }
}
