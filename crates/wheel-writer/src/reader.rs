//! Reading a wheel back: list members, read them, check `RECORD`.
//!
//! The container is read by `pypa_formats::zip_archive`, the one strict
//! zip reader of the workspace, independent of the writer: a wheel opens
//! only when every installer reads the same members from it
//! (docs/verify.md#one-reading). On top of it come the member rules
//! (docs/behaviour.md#member-rules) and `RECORD`. Every member is
//! streamed; what is held in memory is capped per kind ([`limits`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256, Sha384, Sha512};

use pypa_formats::member::{
    Collision, FileType, ModeProblem, PathProblem, check_file_mode, check_relpath, collisions,
};
use pypa_formats::record::{PackageRecordError, RecordEntry, parse_package_record};
use pypa_formats::zip_archive::{MemberReader, ZipArchive, ZipEntry, ZipError};

/// How much of each kind of member a reader of untrusted packages holds
/// in memory (docs/verify.md#caps). A member declaring more is refused
/// before any of it is read.
pub mod limits {
    /// `RECORD`.
    pub const RECORD: u64 = 32 << 20;
    /// `METADATA`, `WHEEL`, `PKG-INFO`, `entry_points.txt`: what `index`
    /// serves as `.metadata` is one of these.
    pub const METADATA: u64 = 1 << 20;
    /// A JSON document a package ships (`_dist_info.json`,
    /// `_libraries.json`, `.devel_links/{T}.json`,
    /// `share/therock/dist_info.json`).
    pub const DOCUMENT: u64 = 16 << 20;
}

/// Why a wheel could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file could not be opened.
    #[error("cannot open wheel {path}")]
    Open {
        /// The wheel.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The file is not a zip archive every installer reads the same way.
    #[error("wheel {path} is not a zip archive every installer reads the same way; rebuild it")]
    Zip {
        /// The wheel.
        path: PathBuf,
        /// What the zip reader refused.
        #[source]
        source: ZipError,
    },
    /// Members no wheel may hold (docs/behaviour.md#member-rules): an
    /// installer would refuse them, or write outside site-packages.
    #[error(
        "wheel {path} holds {} that installers refuse or that would land outside site-packages: {}; \
         rebuild it, or remove it from the directory",
        if .members.len() == 1 { "a member" } else { "members" },
        .members.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    UnsafeMembers {
        /// The wheel.
        path: PathBuf,
        /// Every member refused, in archive order.
        members: Vec<UnsafeMember>,
    },
    /// No single top-level `.dist-info` directory.
    #[error("wheel {path} has {found} top-level .dist-info directories, expected exactly one")]
    DistInfo {
        /// The wheel.
        path: PathBuf,
        /// How many were found.
        found: usize,
    },
    /// A member named by the caller or required by the format is absent.
    #[error("wheel {path} has no member {member}")]
    MissingMember {
        /// The wheel.
        path: PathBuf,
        /// The member.
        member: String,
    },
    /// A member could not be read, or holds other bytes than its records
    /// declare, or more than its kind may.
    #[error("cannot read member {member} of wheel {path}")]
    Member {
        /// The wheel.
        path: PathBuf,
        /// The member.
        member: String,
        /// The I/O error (a `MemberDataError` for data that disagrees
        /// with its records).
        #[source]
        source: io::Error,
    },
    /// `RECORD` is not valid CSV of three fields, or not plain text.
    #[error("RECORD of wheel {path} is malformed")]
    RecordSyntax {
        /// The wheel.
        path: PathBuf,
        /// Where and what.
        #[source]
        source: PackageRecordError,
    },
}

/// A member of a wheel that breaks the member rules, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeMember {
    /// The member's name as the archive gives it.
    pub name: String,
    /// What is wrong with it.
    pub problem: MemberProblem,
}

impl fmt::Display for UnsafeMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} ({})", self.name, self.problem)
    }
}

/// Why a member is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MemberProblem {
    /// Its name is not a clean relative path.
    #[error("not a clean relative path: {0}")]
    Path(PathProblem),
    /// Its mode (zip external attributes) is not a plain file's.
    #[error("{0}")]
    Mode(ModeProblem),
    /// The central directory names it more than once.
    #[error("a duplicate: the archive holds {0} members of this name")]
    Duplicate(usize),
}

/// The member rules for one member: a clean relative path (a directory
/// entry's trailing `/` aside) and a regular file's or a directory's mode
/// without special bits, read from the raw external attributes.
fn member_problem(name: &str, mode: u32) -> Option<MemberProblem> {
    let (path, is_dir) = match name.strip_suffix('/') {
        Some(dir) => (dir, true),
        None => (name, false),
    };
    if let Err(problem) = check_relpath(path) {
        return Some(MemberProblem::Path(problem));
    }
    match check_file_mode(mode) {
        Err(problem) => Some(MemberProblem::Mode(problem)),
        Ok(FileType::Directory) if !is_dir => Some(MemberProblem::Mode(ModeProblem::NotRegular(
            FileType::Directory,
        ))),
        Ok(_) => None,
    }
}

/// One way a wheel disagrees with its `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordProblem {
    /// `RECORD` lists a path the archive does not hold.
    NotInArchive {
        /// The path.
        path: String,
    },
    /// The archive holds a file `RECORD` does not list.
    NotInRecord {
        /// The path.
        path: String,
    },
    /// A path appears twice (in `RECORD` or in the archive).
    Duplicate {
        /// The path.
        path: String,
    },
    /// A row's path is not a clean relative path inside the wheel.
    UnsafePath {
        /// The path as `RECORD` gives it.
        path: String,
        /// The rule it breaks.
        problem: PathProblem,
    },
    /// A row has no hash although it is not `RECORD` itself.
    MissingHash {
        /// The path.
        path: String,
    },
    /// The hash algorithm is not one of sha256, sha384, sha512.
    UnsupportedHash {
        /// The path.
        path: String,
        /// The algorithm named.
        algorithm: String,
    },
    /// The member's bytes do not match the recorded hash.
    HashMismatch {
        /// The path.
        path: String,
        /// The recorded hash.
        expected: String,
        /// The hash of the member's bytes.
        actual: String,
    },
    /// The member's length does not match the recorded size.
    SizeMismatch {
        /// The path.
        path: String,
        /// The recorded size.
        expected: u64,
        /// The member's length.
        actual: u64,
    },
}

impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInArchive { path } => {
                write!(f, "{path}: listed in RECORD but not in the wheel")
            }
            Self::NotInRecord { path } => {
                write!(f, "{path}: in the wheel but not listed in RECORD")
            }
            Self::Duplicate { path } => write!(f, "{path}: appears more than once"),
            Self::UnsafePath { path, problem } => write!(
                f,
                "{path}: listed in RECORD but not a clean relative path inside the wheel ({problem})"
            ),
            Self::MissingHash { path } => write!(f, "{path}: RECORD gives no hash"),
            Self::UnsupportedHash { path, algorithm } => {
                write!(
                    f,
                    "{path}: hash algorithm {algorithm:?} is not sha256, sha384 or sha512"
                )
            }
            Self::HashMismatch {
                path,
                expected,
                actual,
            } => write!(
                f,
                "{path}: RECORD says {expected}, the bytes hash to {actual}"
            ),
            Self::SizeMismatch {
                path,
                expected,
                actual,
            } => write!(
                f,
                "{path}: RECORD says {expected} bytes, the member has {actual}"
            ),
        }
    }
}

/// The result of [`WheelReader::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Members checked against `RECORD`.
    pub members_checked: usize,
    /// Everything that disagrees with `RECORD`; empty when the wheel is sound.
    pub problems: Vec<RecordProblem>,
}

impl Verification {
    /// Whether every member matches `RECORD` and `RECORD` lists every
    /// member.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What [`WheelReader::verify`] does with each member before hashing it:
/// given the member's name, its declared size and its first bytes (up to
/// 4), a problem that stops the member from being read further (for
/// example a cap on ELF files), or `None`.
pub type MemberScreen<'a> = &'a dyn Fn(&str, u64, &[u8]) -> Option<String>;

/// An open wheel.
pub struct WheelReader {
    path: PathBuf,
    archive: ZipArchive<BufReader<File>>,
    dist_info: String,
    folded: Vec<Collision>,
}

impl fmt::Debug for WheelReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WheelReader")
            .field("path", &self.path)
            .field("dist_info", &self.dist_info)
            .finish_non_exhaustive()
    }
}

impl WheelReader {
    /// Opens the regular file at `path` (never through a symlink, never a
    /// FIFO: `crate::dist_dir::open_package`) and reads it as a wheel
    /// ([`WheelReader::from_file`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ReadError> {
        let path = path.as_ref().to_owned();
        let file = crate::dist_dir::open_package(&path).map_err(|source| ReadError::Open {
            path: path.clone(),
            source,
        })?;
        Self::from_file(path, file)
    }

    /// Reads the opened wheel `file` (named `path` in errors): the zip
    /// container checked by the strict reader, every member against the
    /// member rules (docs/behaviour.md#member-rules: clean relative paths,
    /// regular files, no special modes, no name twice), and its one
    /// `.dist-info` directory found. Names one file system would fold into
    /// one are kept for the caller, who knows where the wheel installs
    /// ([`WheelReader::folded_names`]).
    pub fn from_file(path: PathBuf, file: File) -> Result<Self, ReadError> {
        let archive = match ZipArchive::new(BufReader::new(file)) {
            Ok(archive) => archive,
            Err(ZipError::Io(source)) => return Err(ReadError::Open { path, source }),
            Err(source) => return Err(ReadError::Zip { path, source }),
        };
        let (members, folded) = unsafe_members(&archive);
        if !members.is_empty() {
            return Err(ReadError::UnsafeMembers { path, members });
        }
        // Readers differ in the case they compare `.dist-info` in.
        let dist_infos: BTreeSet<&str> = archive
            .entries()
            .iter()
            .filter_map(|e| e.name().split_once('/').map(|(top, _)| top))
            .filter(|top| top.to_ascii_lowercase().ends_with(".dist-info"))
            .collect();
        if dist_infos.len() != 1 {
            return Err(ReadError::DistInfo {
                path,
                found: dist_infos.len(),
            });
        }
        let dist_info = (*dist_infos.first().expect("one")).to_owned();
        Ok(Self {
            path,
            archive,
            dist_info,
            folded,
        })
    }

    /// Members whose names differ but are one path after case folding and
    /// Unicode normalisation: one file on Windows and macOS (where the
    /// second write replaces the first), two on Linux.
    pub fn folded_names(&self) -> &[Collision] {
        &self.folded
    }

    /// The wheel's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `.dist-info` directory name.
    pub fn dist_info_dir(&self) -> &str {
        &self.dist_info
    }

    /// Member names in archive order.
    pub fn member_names(&self) -> impl Iterator<Item = &str> {
        self.archive.entries().iter().map(ZipEntry::name)
    }

    /// The declared (and, once read, checked) size of a member.
    pub fn member_size(&self, name: &str) -> Result<u64, ReadError> {
        Ok(self.archive.entries()[self.index(name)?].size())
    }

    /// The Unix mode bits of a member, if the archive records them.
    pub fn member_mode(&self, name: &str) -> Result<Option<u32>, ReadError> {
        let mode = self.archive.entries()[self.index(name)?].unix_mode();
        Ok((mode != 0).then_some(mode))
    }

    fn index(&self, name: &str) -> Result<usize, ReadError> {
        self.archive
            .index_of(name)
            .ok_or_else(|| ReadError::MissingMember {
                path: self.path.clone(),
                member: name.to_owned(),
            })
    }

    fn member_error(&self, name: &str) -> impl FnOnce(io::Error) -> ReadError + use<> {
        member_error(&self.path, name)
    }

    /// The bytes of member `name`, when it declares at most `limit` of
    /// them (a [`limits`] constant for the kind); checked against its
    /// size and CRC-32 as they are read. For documents a caller parses
    /// whole; a member of any size (a library, a tarball) is read with
    /// [`WheelReader::open_member`], which streams it through a fixed
    /// buffer.
    pub fn read_member(&mut self, name: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let index = self.index(name)?;
        let error = self.member_error(name);
        self.archive.read(index, limit).map_err(error)
    }

    /// A streaming reader of member `name`: it holds a fixed buffer
    /// whatever the member's size, fails at the first byte past the
    /// declared size, and checks the size and CRC-32 when it reaches the
    /// end.
    pub fn open_member(
        &mut self,
        name: &str,
    ) -> Result<MemberReader<'_, BufReader<File>>, ReadError> {
        let index = self.index(name)?;
        let error = self.member_error(name);
        self.archive.reader(index).map_err(error)
    }

    /// The parsed `RECORD`: at most [`limits::RECORD`] bytes, and rows in
    /// proportion to the members (twice as many and 64 more: rows that
    /// name no member are problems [`WheelReader::verify`] reports, but a
    /// million of them is a bomb).
    pub fn record(&mut self) -> Result<Vec<RecordEntry>, ReadError> {
        let name = format!("{}/RECORD", self.dist_info);
        let bytes = self.read_member(&name, limits::RECORD)?;
        let rows = self.archive.entries().len() * 2 + 64;
        parse_package_record(&bytes, rows).map_err(|source| ReadError::RecordSyntax {
            path: self.path.clone(),
            source,
        })
    }

    /// Hashes every member and compares it with `RECORD`: every file listed,
    /// every listed path present, hashes and sizes equal. `RECORD` itself
    /// (and `RECORD.jws`/`RECORD.p7s` signatures) need no hash.
    pub fn verify(&mut self) -> Result<Verification, ReadError> {
        self.verify_screened(&|_, _, _| None).map(|(v, _)| v)
    }

    /// [`WheelReader::verify`], with each member first passed to `screen`
    /// (its name, declared size and first bytes): a member it refuses is
    /// not read further and its problem is returned in the second list.
    pub fn verify_screened(
        &mut self,
        screen: MemberScreen<'_>,
    ) -> Result<(Verification, Vec<String>), ReadError> {
        let record_path = format!("{}/RECORD", self.dist_info);
        let unhashed = [
            record_path.clone(),
            format!("{}/RECORD.jws", self.dist_info),
            format!("{}/RECORD.p7s", self.dist_info),
        ];
        let mut problems = Vec::new();
        let mut screened = Vec::new();
        let mut listed: BTreeMap<String, RecordEntry> = BTreeMap::new();
        for entry in self.record()? {
            if let Err(problem) = check_relpath(&entry.path) {
                problems.push(RecordProblem::UnsafePath {
                    path: entry.path.clone(),
                    problem,
                });
                continue;
            }
            if listed.contains_key(&entry.path) {
                problems.push(RecordProblem::Duplicate {
                    path: entry.path.clone(),
                });
            }
            listed.insert(entry.path.clone(), entry);
        }
        let mut seen = BTreeSet::new();
        let mut checked = 0;
        let path = self.path.clone();
        for index in 0..self.archive.entries().len() {
            let (name, size, is_dir) = {
                let e = &self.archive.entries()[index];
                (e.name().to_owned(), e.size(), e.is_dir())
            };
            let mut member = self
                .archive
                .reader(index)
                .map_err(member_error(&path, &name))?;
            let mut head = [0; 4];
            let head_len =
                read_up_to(&mut member, &mut head).map_err(member_error(&path, &name))?;
            if let Some(problem) = screen(&name, size, &head[..head_len]) {
                screened.push(problem);
                seen.insert(name);
                continue;
            }
            if is_dir {
                continue;
            }
            seen.insert(name.clone());
            if unhashed.contains(&name) {
                continue;
            }
            let Some(entry) = listed.get(&name) else {
                problems.push(RecordProblem::NotInRecord { path: name });
                continue;
            };
            let Some(hash) = &entry.hash else {
                problems.push(RecordProblem::MissingHash { path: name });
                continue;
            };
            let (algorithm, expected) = hash.split_once('=').unwrap_or((hash, ""));
            let head = &head[..head_len];
            let hashed = match algorithm {
                "sha256" => digest_member::<Sha256>(head, &mut member),
                "sha384" => digest_member::<Sha384>(head, &mut member),
                "sha512" => digest_member::<Sha512>(head, &mut member),
                other => {
                    problems.push(RecordProblem::UnsupportedHash {
                        path: name,
                        algorithm: other.to_owned(),
                    });
                    continue;
                }
            };
            drop(member);
            let (actual, size) = hashed.map_err(member_error(&path, &name))?;
            checked += 1;
            if actual != expected {
                problems.push(RecordProblem::HashMismatch {
                    path: name.clone(),
                    expected: hash.clone(),
                    actual: format!("{algorithm}={actual}"),
                });
            }
            if let Some(expected) = entry.size
                && expected != size
            {
                problems.push(RecordProblem::SizeMismatch {
                    path: name,
                    expected,
                    actual: size,
                });
            }
        }
        for path in listed.keys() {
            if !seen.contains(path) {
                problems.push(RecordProblem::NotInArchive { path: path.clone() });
            }
        }
        Ok((
            Verification {
                members_checked: checked,
                problems,
            },
            screened,
        ))
    }
}

/// Every member of `archive` that breaks the member rules, then the
/// names given twice; and apart, the names one file system folds into one.
fn unsafe_members<R>(archive: &ZipArchive<R>) -> (Vec<UnsafeMember>, Vec<Collision>)
where
    R: Read + io::Seek,
{
    let mut out: Vec<UnsafeMember> = archive
        .entries()
        .iter()
        .filter_map(|e| {
            member_problem(e.name(), e.unix_mode()).map(|problem| UnsafeMember {
                name: e.name().to_owned(),
                problem,
            })
        })
        .collect();
    let mut folded = Vec::new();
    for collision in collisions(archive.entries().iter().map(ZipEntry::name)) {
        match collision {
            Collision::Repeated { path, count } => out.push(UnsafeMember {
                name: path,
                problem: MemberProblem::Duplicate(count),
            }),
            other @ Collision::Folded { .. } => folded.push(other),
        }
    }
    (out, folded)
}

/// [`ReadError::Member`] for member `name` of the wheel at `path`.
fn member_error(path: &Path, name: &str) -> impl FnOnce(io::Error) -> ReadError + use<> {
    let (path, member) = (path.to_owned(), name.to_owned());
    move |source| ReadError::Member {
        path,
        member,
        source,
    }
}

/// Reads until `buf` is full or the reader ends; returns how much.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Streams `head` then the rest of a member through a hash; returns the
/// URL-safe base64 digest without padding and the length.
fn digest_member<D: Digest>(head: &[u8], reader: &mut impl Read) -> io::Result<(String, u64)> {
    let mut hasher = D::new();
    hasher.update(head);
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = head.len() as u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((URL_SAFE_NO_PAD.encode(hasher.finalize()), total))
}
