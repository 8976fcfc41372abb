//! Reading the dist directories of one release: every wheel and sdist,
//! checked for well-formedness on the way (one reading of the container,
//! the member rules, RECORD complete and hashes right; file name, tags and
//! metadata agree; sdists laid out as pip expects). Each package is opened
//! once, as a regular file, and read through the workspace's strict
//! readers (docs/verify.md#one-reading), holding at most the caps of
//! docs/verify.md#caps in memory.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use dist_info::document::DistInfo;
use dist_info::requirement::Platform;
use fs_helpers::error_chain::Chain;
use fs_helpers::file_hash::{sha256_bytes, sha256_reader};
use link_check::MAX_ELF_MEMBER;
use pypa_formats::core_metadata::HeaderBlock;
use pypa_formats::dist_name::normalize;
use pypa_formats::entry_points::EntryPoints;
use pypa_formats::filename::{SdistFilename, WheelFilename};
use pypa_formats::member::{check_file_mode, check_relpath, collisions};
use pypa_formats::sdist_archive::{SdistArchive, SdistError as ArchiveError};
use wheel_writer::dist_dir::open_package;
use wheel_writer::{ReadError, WheelReader, limits};

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
    /// Every member name, in archive order.
    pub members: Vec<String>,
    /// The archive opened and every member read back; the checks that
    /// read members again (ELF links, documents) skip the others, which
    /// already fail the well-formed check.
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
    // Opened once, as a regular file: what is hashed is what is read.
    let opened = open_package(path).and_then(|mut file| {
        let digest = sha256_reader(&mut file)?;
        file.seek(SeekFrom::Start(0))?;
        Ok((file, digest.hex()))
    });
    let (file, sha256) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            problems.push(format!("{display}: cannot read: {e}"));
            return None;
        }
    };
    let mut local = Vec::new();
    // Wheel and sdist names are lower-case by specification.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    let kind = if file_name.ends_with(".whl") {
        read_wheel(path, file, &file_name, &mut local).map(Kind::Wheel)
    } else if file_name.ends_with(".tar.gz") {
        read_sdist(file, &file_name, &mut local).map(Kind::Sdist)
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

/// One line for an error of the wheel reader, without the wheel's path
/// (the report puts it first).
fn wheel_problem(error: &ReadError) -> Vec<String> {
    match error {
        ReadError::Zip { source, .. } => vec![format!(
            "not a zip archive every installer reads the same way: {}; rebuild it",
            Chain(source)
        )],
        ReadError::UnsafeMembers { members, .. } => members
            .iter()
            .map(|m| {
                format!(
                    "member {m}: installers refuse it or would write it outside site-packages; rebuild the wheel"
                )
            })
            .collect(),
        ReadError::Member { source, member, .. } => vec![format!(
            "member {member} cannot be read: {}; rebuild the wheel",
            Chain(source)
        )],
        ReadError::RecordSyntax { source, .. } => {
            vec![format!("RECORD is malformed: {}; rebuild the wheel", Chain(source))]
        }
        other => vec![Chain(other).to_string()],
    }
}

/// The ELF cap of docs/verify.md#caps, applied before a member is hashed:
/// a member starting with the ELF magic that declares more than any
/// library can be is a decompression bomb, refused unread.
fn elf_screen(name: &str, size: u64, head: &[u8]) -> Option<String> {
    (head == b"\x7fELF" && size > MAX_ELF_MEMBER).then(|| {
        format!(
            "member {name}: an ELF file of {size} bytes, more than the {MAX_ELF_MEMBER} bytes a \
             library may be (docs/verify.md#caps); rebuild the wheel"
        )
    })
}

fn read_wheel(
    path: &Path,
    file: File,
    file_name: &str,
    problems: &mut Vec<String>,
) -> Option<Wheel> {
    let filename: WheelFilename = parse_file_name(file_name, problems)?;
    let version = filename.version.as_str();
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
    let mut reader = match WheelReader::from_file(path.to_owned(), file) {
        Ok(r) => r,
        Err(e) => {
            problems.extend(wheel_problem(&e));
            return Some(wheel);
        }
    };
    wheel.members = reader.member_names().map(str::to_owned).collect();
    // One file where the file system folds case or normalises Unicode.
    let folds = wheel.platforms.contains(&Platform::Windows)
        || wheel.platform_tags.iter().any(|t| t.starts_with("macosx"));
    if folds {
        problems.extend(
            reader
                .folded_names()
                .iter()
                .map(|c| format!("members {c}; rebuild the wheel with one of them renamed")),
        );
    }
    match reader.verify_screened(&elf_screen) {
        Ok((verification, screened)) => {
            wheel.readable = screened.is_empty();
            problems.extend(screened);
            problems.extend(verification.problems.iter().map(|p| format!("RECORD: {p}")));
        }
        Err(e) => problems.extend(wheel_problem(&e)),
    }
    problems.extend(data_members(&wheel.members));
    for member in wheel
        .members
        .iter()
        .filter(|m| devel_tarball::is_digest_file(m))
    {
        problems.extend(devel_tarball::digest_problem(&mut reader, member));
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
    match metadata_file(&mut reader, "METADATA") {
        Err(problem) => problems.push(problem),
        Ok(block) => read_core_metadata(&block, &filename, &mut wheel, problems),
    }
    match metadata_file(&mut reader, "WHEEL") {
        Err(problem) => problems.push(problem),
        Ok(block) => problems.extend(
            wheel_file_problems(&block, &filename)
                .into_iter()
                .map(|p| format!("{dist_info}/WHEEL: {p}; rebuild the wheel")),
        ),
    }
    let entry_points = format!("{dist_info}/entry_points.txt");
    if wheel.members.contains(&entry_points) {
        let parsed = reader
            .read_member(&entry_points, limits::METADATA)
            .map_err(|e| Chain(&e).to_string())
            .and_then(|bytes| EntryPoints::parse(&bytes).map_err(|e| e.to_string()));
        if let Err(e) = parsed {
            problems.push(format!(
                "{entry_points}: {e}; installers would write different scripts from it, or none"
            ));
        }
    }
    Some(wheel)
}

/// A `.dist-info` file of the wheel read by [`HeaderBlock::parse`]; the
/// problem as one line otherwise.
fn metadata_file(reader: &mut WheelReader, file: &str) -> Result<HeaderBlock, String> {
    let member = format!("{}/{file}", reader.dist_info_dir());
    let bytes = reader
        .read_member(&member, limits::METADATA)
        .map_err(|e| wheel_problem(&e).join("; "))?;
    HeaderBlock::parse(&bytes).map_err(|e| {
        format!("{member}: {e}; installers would read it differently, rebuild the wheel")
    })
}

/// Name, version, requirements and extras of METADATA, each checked.
fn read_core_metadata(
    block: &HeaderBlock,
    filename: &WheelFilename,
    wheel: &mut Wheel,
    problems: &mut Vec<String>,
) {
    let single = |field: &str, problems: &mut Vec<String>| match block.get_line(field) {
        Ok(value) => value.unwrap_or_default().to_owned(),
        Err(e) => {
            problems.push(format!("METADATA: {e}"));
            String::new()
        }
    };
    let meta_name = single("Name", problems);
    let meta_version = single("Version", problems);
    if normalize(&meta_name) != wheel.name {
        problems.push(format!(
            "METADATA Name {meta_name:?} does not match the file name ({})",
            filename.name.as_str()
        ));
    }
    if meta_version != wheel.version {
        problems.push(format!(
            "METADATA Version {meta_version:?} does not match the file name ({})",
            wheel.version
        ));
    }
    for line in block.get_all("Requires-Dist") {
        if line.contains('\n') {
            problems.push(format!(
                "METADATA Requires-Dist {line:?} is folded over several lines"
            ));
            continue;
        }
        match Requirement::parse(line) {
            Ok(r) => wheel.requires_dist.push(r),
            Err(e) => problems.push(format!("METADATA Requires-Dist {e}")),
        }
    }
    wheel.provides_extra = block
        .get_all("Provides-Extra")
        .map(pypa_formats::dist_name::normalize)
        .collect();
}

/// What is wrong with `WHEEL`: its format version (major 1, which every
/// installer reads), `Root-Is-Purelib` (false for a platform wheel: pip
/// and uv would install it elsewhere on a distribution whose purelib and
/// platlib differ) and its tags (those of the file name).
fn wheel_file_problems(block: &HeaderBlock, filename: &WheelFilename) -> Vec<String> {
    let mut problems = Vec::new();
    match block.get_line("Wheel-Version") {
        Ok(Some(version)) if is_wheel_version_1(version) => {}
        Ok(Some(version)) => problems.push(format!(
            "Wheel-Version {version:?} is not 1.x; installers refuse or read it differently"
        )),
        Ok(None) => problems.push("no Wheel-Version".to_owned()),
        Err(e) => problems.push(e.to_string()),
    }
    let platform = filename.tag.platform() != "any";
    match block.get_line("Root-Is-Purelib") {
        Ok(Some("false")) => {}
        Ok(Some("true")) if !platform => {}
        Ok(value) => problems.push(format!(
            "Root-Is-Purelib {:?} for a wheel tagged {}: {}",
            value.unwrap_or("(missing)"),
            filename.tag.platform(),
            if platform {
                "a platform wheel says `false`, or installers put it in purelib"
            } else {
                "expected `true` or `false`"
            }
        )),
        Err(e) => problems.push(e.to_string()),
    }
    let declared: BTreeSet<&str> = block.get_all("Tag").collect();
    let expected: BTreeSet<String> = filename.tag.expanded().into_iter().collect();
    let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    if declared != expected {
        problems.push(format!(
            "tags {:?} do not match the file name's tags {:?}",
            declared.into_iter().collect::<Vec<_>>(),
            expected.into_iter().collect::<Vec<_>>()
        ));
    }
    problems
}

/// `1.N`, as pip and uv read a version they install.
fn is_wheel_version_1(version: &str) -> bool {
    version
        .strip_prefix("1.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// One problem per top-level `*.data` directory: pip and uv install its
/// `scripts`, `headers` and `data` outside site-packages, and this
/// project's wheels hold none.
fn data_members(members: &[String]) -> Vec<String> {
    let mut dirs: Vec<(&str, &str, usize)> = Vec::new();
    for member in members {
        let Some((top, _)) = member.split_once('/') else {
            continue;
        };
        if !top.to_ascii_lowercase().ends_with(".data") {
            continue;
        }
        match dirs.iter_mut().find(|(dir, _, _)| *dir == top) {
            Some((_, _, count)) => *count += 1,
            None => dirs.push((top, member, 1)),
        }
    }
    dirs.into_iter()
        .map(|(dir, first, count)| {
            let more = if count > 1 {
                format!(" (and {} more under {dir}/)", count - 1)
            } else {
                String::new()
            };
            format!(
                "member {first}{more}: a {dir}/ directory, whose members installers write outside \
                 site-packages (scripts, headers, data); this project's wheels hold none, rebuild it"
            )
        })
        .collect()
}

fn read_sdist(file: File, file_name: &str, problems: &mut Vec<String>) -> Option<Sdist> {
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
    let read = for_each_sdist_file(file, &top, problems, |member| {
        let kept = match member.rel {
            "PKG-INFO" => Some(limits::METADATA),
            "rocm_sdk/_dist_info.json" => Some(limits::DOCUMENT),
            _ => None,
        };
        let (digest, bytes) = match kept {
            Some(limit) if member.size <= limit => {
                let mut bytes = Vec::new();
                member.reader.read_to_end(&mut bytes)?;
                (sha256_bytes(&bytes), Some(bytes))
            }
            _ => (sha256_reader(member.reader)?, None),
        };
        sdist.members.push((member.name.to_owned(), digest.hex()));
        match member.rel {
            "PKG-INFO" => pkg_info = Some(bytes),
            "pyproject.toml" => has_pyproject = true,
            "rocm_sdk/_dist_info.json" => dist_info_json = Some(bytes),
            _ => {}
        }
        Ok(())
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
        Some(None) => problems.push(format!(
            "{top}/PKG-INFO is larger than the {} bytes a metadata file may be",
            limits::METADATA
        )),
        Some(Some(bytes)) => match HeaderBlock::parse(&bytes) {
            Err(e) => problems.push(format!(
                "{top}/PKG-INFO: {e}; installers would read it differently, rebuild the sdist"
            )),
            Ok(block) => {
                for (field, expected, normalise) in [
                    ("Name", sdist.name.as_str(), true),
                    ("Version", version, false),
                ] {
                    match block.get_line(field) {
                        Err(e) => problems.push(format!("PKG-INFO: {e}")),
                        Ok(value) => {
                            let value = value.unwrap_or_default();
                            let seen = if normalise {
                                normalize(value)
                            } else {
                                value.to_owned()
                            };
                            if seen != expected {
                                problems.push(format!(
                                    "PKG-INFO {field} {value:?} does not match the file name ({})",
                                    if normalise { name } else { version }
                                ));
                            }
                        }
                    }
                }
            }
        },
    }
    if sdist.name == "rocm" {
        match dist_info_json {
            None => problems.push(format!(
                "no {top}/rocm_sdk/_dist_info.json: the selector cannot compute its requirements"
            )),
            Some(None) => problems.push(format!(
                "{top}/rocm_sdk/_dist_info.json is larger than the {} bytes a document may be",
                limits::DOCUMENT
            )),
            Some(Some(bytes)) => match DistInfo::from_json(&bytes) {
                Err(e) => problems.push(format!("rocm_sdk/_dist_info.json: {}", Chain(&e))),
                Ok(doc) => {
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
            },
        }
    }
    Some(sdist)
}

/// One regular file of an sdist, handed to the caller of
/// [`for_each_sdist_file`] as a stream.
struct SdistFile<'a> {
    /// Its path in the archive.
    name: &'a str,
    /// Its path below the top directory.
    rel: &'a str,
    /// Its size.
    size: u64,
    /// Its bytes.
    reader: &'a mut dyn Read,
}

/// Reads every member of the sdist `file` through the strict reader
/// (`pypa_formats::sdist_archive`) and the member rules
/// (docs/behaviour.md#member-rules), calling `each` for each regular file
/// below `top`; every member refused goes to `problems`. False when the
/// archive could not be read to its end (noted in `problems` too).
fn for_each_sdist_file(
    file: File,
    top: &str,
    problems: &mut Vec<String>,
    mut each: impl FnMut(SdistFile<'_>) -> io::Result<()>,
) -> bool {
    let mut archive = SdistArchive::new(BufReader::new(file));
    let mut names = Vec::new();
    loop {
        let mut member = match archive.next_member() {
            Ok(Some(member)) => member,
            Ok(None) => break,
            Err(e) => {
                problems.push(sdist_problem(&e));
                return false;
            }
        };
        let name = member.name.clone();
        if let Some(problem) = sdist_member_problem(&name, member.mode, top) {
            problems.push(format!("member {name} {problem}"));
            continue;
        }
        names.push(name.clone());
        let rel = name[top.len()..].trim_start_matches('/').to_owned();
        let size = member.size;
        if let Err(e) = each(SdistFile {
            name: &name,
            rel: &rel,
            size,
            reader: &mut member,
        }) {
            problems.push(format!(
                "cannot read member {name}: {}; rebuild it",
                Chain(&e)
            ));
            return false;
        }
    }
    for collision in collisions(names.iter().map(String::as_str)) {
        problems.push(format!(
            "members: {collision}; an unpacker keeps only one of them"
        ));
    }
    true
}

/// One line for an error of the sdist reader.
fn sdist_problem(error: &ArchiveError) -> String {
    match error {
        ArchiveError::EntryType { .. } | ArchiveError::PaxPathDisagrees { .. } => {
            format!("{error}; rebuild it")
        }
        other => format!(
            "not a gzip-compressed tar every installer reads the same way: {}; rebuild it",
            Chain(other)
        ),
    }
}

/// What is wrong with one sdist member, by the member rules: a clean
/// relative path at or below `top`, no special mode bits. `None` when it
/// is acceptable.
fn sdist_member_problem(name: &str, mode: u32, top: &str) -> Option<String> {
    if let Err(problem) = check_relpath(name) {
        return Some(format!("is not a clean relative path ({problem})"));
    }
    let inside = name
        .strip_prefix(top)
        .is_some_and(|r| r.is_empty() || r.starts_with('/'));
    if !inside {
        return Some(format!("is outside the top directory {top}/"));
    }
    check_file_mode(0o100_000 | mode)
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
/// reader and member rules `verify` applies (what `index` serves), the
/// whole archive read to its end.
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
        // A metadata file or a document: the cap of its kind.
        let cap = if relpath == "PKG-INFO" {
            limits::METADATA
        } else {
            limits::DOCUMENT
        };
        match open_package(path) {
            Err(e) => problems.push(format!("cannot read: {e}")),
            Ok(file) => {
                for_each_sdist_file(file, &top, &mut problems, |member| {
                    if member.rel == relpath {
                        if member.size > cap {
                            return Err(io::Error::other(format!(
                                "{relpath} is larger than the {cap} bytes a file of its kind may be"
                            )));
                        }
                        let mut bytes = Vec::new();
                        member.reader.read_to_end(&mut bytes)?;
                        pkg_info = Some(bytes);
                    } else {
                        io::copy(member.reader, &mut io::sink())?;
                    }
                    Ok(())
                });
            }
        }
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
