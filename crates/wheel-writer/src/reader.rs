//! Reading a wheel back: list members, read them, check `RECORD`.
//!
//! Uses the `zip` crate's reader, an implementation independent of our
//! writer, so verification also proves the container is well-formed.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256, Sha384, Sha512};

use crate::local_header::{self, Central, HeaderMismatch};
use pypa_formats::member::{FileType, ModeProblem, PathProblem, check_file_mode, check_relpath};
use pypa_formats::record::{RecordEntry, RecordSyntaxError, parse_record};

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
    /// The file is not a readable zip archive.
    #[error("wheel {path} is not a valid zip archive; rebuild it")]
    Zip {
        /// The wheel.
        path: PathBuf,
        /// What the zip reader reported.
        #[source]
        source: zip::result::ZipError,
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
    /// A member could not be decompressed.
    #[error("cannot read member {member} of wheel {path}")]
    Member {
        /// The wheel.
        path: PathBuf,
        /// The member.
        member: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// `RECORD` is not valid CSV of three fields.
    #[error("RECORD of wheel {path} is malformed")]
    RecordSyntax {
        /// The wheel.
        path: PathBuf,
        /// Where and what.
        #[source]
        source: RecordSyntaxError,
    },
}

/// A member of a wheel that breaks the member rules, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeMember {
    /// The member's name as the archive gives it (lossily decoded).
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
    /// Its name is not UTF-8.
    #[error("the name is not UTF-8")]
    NotUtf8,
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

/// The member rules for one central directory entry: a clean relative
/// path (a directory entry's trailing `/` aside) and a regular file's or
/// a directory's mode without special bits, read from the raw external
/// attributes (the zip reader's own mode clears the setuid bits).
fn member_problem(raw_name: &[u8], external_attributes: u32) -> Option<MemberProblem> {
    let Ok(name) = std::str::from_utf8(raw_name) else {
        return Some(MemberProblem::NotUtf8);
    };
    let (path, is_dir) = match name.strip_suffix('/') {
        Some(dir) => (dir, true),
        None => (name, false),
    };
    if let Err(problem) = check_relpath(path) {
        return Some(MemberProblem::Path(problem));
    }
    let mode = external_attributes >> 16;
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
    /// Members whose local header disagrees with the central directory.
    pub header_mismatches: Vec<HeaderMismatch>,
}

impl Verification {
    /// Whether every member matches `RECORD`, `RECORD` lists every member
    /// and every local header agrees with the central directory.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty() && self.header_mismatches.is_empty()
    }
}

/// An open wheel.
pub struct WheelReader {
    path: PathBuf,
    archive: zip::ZipArchive<BufReader<File>>,
    dist_info: String,
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
    /// Opens a wheel, checks every member against the member rules
    /// (docs/behaviour.md#member-rules: clean relative paths, regular
    /// files, no special modes, no duplicate names) and finds its
    /// `.dist-info` directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ReadError> {
        let path = path.as_ref().to_owned();
        let file = File::open(&path).map_err(|source| ReadError::Open {
            path: path.clone(),
            source,
        })?;
        let mut archive =
            zip::ZipArchive::new(BufReader::new(file)).map_err(|source| ReadError::Zip {
                path: path.clone(),
                source,
            })?;
        let members = unsafe_members(&path, &mut archive)?;
        if !members.is_empty() {
            return Err(ReadError::UnsafeMembers { path, members });
        }
        let mut dist_infos: Vec<String> = archive
            .file_names_raw()
            .map(String::from_utf8_lossy)
            .filter_map(|name| name.split_once('/').map(|(top, _)| top.to_owned()))
            .filter(|top| top.ends_with(".dist-info"))
            .collect();
        dist_infos.sort();
        dist_infos.dedup();
        if dist_infos.len() != 1 {
            return Err(ReadError::DistInfo {
                path,
                found: dist_infos.len(),
            });
        }
        let dist_info = dist_infos.remove(0);
        Ok(Self {
            path,
            archive,
            dist_info,
        })
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
    pub fn member_names(&mut self) -> Result<Vec<String>, ReadError> {
        (0..self.archive.len())
            .map(|i| {
                self.archive
                    .by_index_raw(i)
                    .map(|m| String::from_utf8_lossy(m.name_raw()).into_owned())
                    .map_err(|source| ReadError::Zip {
                        path: self.path.clone(),
                        source,
                    })
            })
            .collect()
    }

    /// The Unix mode bits of a member, if the archive records them.
    pub fn member_mode(&mut self, name: &str) -> Result<Option<u32>, ReadError> {
        let member = self
            .archive
            .by_name(name)
            .map_err(|_| ReadError::MissingMember {
                path: self.path.clone(),
                member: name.to_owned(),
            })?;
        Ok(member.unix_mode())
    }

    /// The uncompressed bytes of one member (for small members: METADATA, WHEEL).
    pub fn read_member(&mut self, name: &str) -> Result<Vec<u8>, ReadError> {
        let path = self.path.clone();
        let mut member = self
            .archive
            .by_name(name)
            .map_err(|_| ReadError::MissingMember {
                path: path.clone(),
                member: name.to_owned(),
            })?;
        let mut bytes = Vec::new();
        member
            .read_to_end(&mut bytes)
            .map_err(|source| ReadError::Member {
                path,
                member: name.to_owned(),
                source,
            })?;
        Ok(bytes)
    }

    /// The parsed `RECORD`.
    pub fn record(&mut self) -> Result<Vec<RecordEntry>, ReadError> {
        let name = format!("{}/RECORD", self.dist_info);
        let bytes = self.read_member(&name)?;
        let text = String::from_utf8_lossy(&bytes);
        parse_record(&text).map_err(|source| ReadError::RecordSyntax {
            path: self.path.clone(),
            source,
        })
    }

    /// Hashes every member and compares it with `RECORD`: every file listed,
    /// every listed path present, hashes and sizes equal. `RECORD` itself
    /// (and `RECORD.jws`/`RECORD.p7s` signatures) need no hash.
    pub fn verify(&mut self) -> Result<Verification, ReadError> {
        let record_path = format!("{}/RECORD", self.dist_info);
        let unhashed = [
            record_path.clone(),
            format!("{}/RECORD.jws", self.dist_info),
            format!("{}/RECORD.p7s", self.dist_info),
        ];
        let mut problems = Vec::new();
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
        let mut seen = std::collections::BTreeSet::new();
        let mut checked = 0;
        let mut header_mismatches = Vec::new();
        // A second handle: the archive's reader is borrowed by each member.
        let mut raw = File::open(&self.path).map_err(|source| ReadError::Open {
            path: self.path.clone(),
            source,
        })?;
        for index in 0..self.archive.len() {
            let path = self.path.clone();
            let mut member = self
                .archive
                .by_index(index)
                .map_err(|source| ReadError::Zip { path, source })?;
            let name = String::from_utf8_lossy(member.name_raw()).into_owned();
            let central = Central {
                name: member.name_raw(),
                header_start: member.header_start(),
                record_start: member.central_header_start(),
                crc32: member.crc32(),
                compressed_size: member.compressed_size(),
                size: member.size(),
            };
            header_mismatches.extend(local_header::compare(&mut raw, &central).map_err(
                |source| ReadError::Member {
                    path: self.path.clone(),
                    member: name.clone(),
                    source,
                },
            )?);
            if member.is_dir() {
                continue;
            }
            if !seen.insert(name.clone()) {
                problems.push(RecordProblem::Duplicate { path: name });
                continue;
            }
            let entry = listed.get(&name);
            if unhashed.contains(&name) {
                continue;
            }
            let Some(entry) = entry else {
                problems.push(RecordProblem::NotInRecord { path: name });
                continue;
            };
            let Some(hash) = &entry.hash else {
                problems.push(RecordProblem::MissingHash { path: name });
                continue;
            };
            let (algorithm, expected) = hash.split_once('=').unwrap_or((hash, ""));
            let hashed = match algorithm {
                "sha256" => digest_member::<Sha256>(&mut member),
                "sha384" => digest_member::<Sha384>(&mut member),
                "sha512" => digest_member::<Sha512>(&mut member),
                other => {
                    problems.push(RecordProblem::UnsupportedHash {
                        path: name,
                        algorithm: other.to_owned(),
                    });
                    continue;
                }
            };
            let (actual, size) = hashed.map_err(|source| ReadError::Member {
                path: self.path.clone(),
                member: name.clone(),
                source,
            })?;
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
        Ok(Verification {
            members_checked: checked,
            problems,
            header_mismatches,
        })
    }
}

/// Every member of `archive` that breaks the member rules, duplicates
/// (which the zip reader folds into one entry) included.
fn unsafe_members(
    path: &Path,
    archive: &mut zip::ZipArchive<BufReader<File>>,
) -> Result<Vec<UnsafeMember>, ReadError> {
    let mut out = Vec::new();
    for index in 0..archive.len() {
        let member = archive
            .by_index_raw(index)
            .map_err(|source| ReadError::Zip {
                path: path.to_owned(),
                source,
            })?;
        if let Some(problem) = member_problem(member.name_raw(), member.external_attributes()) {
            out.push(UnsafeMember {
                name: String::from_utf8_lossy(member.name_raw()).into_owned(),
                problem,
            });
        }
    }
    if archive.has_duplicate_names() {
        let mut file = File::open(path).map_err(|source| ReadError::Open {
            path: path.to_owned(),
            source,
        })?;
        let names = local_header::central_names(&mut file, archive.central_directory_start())
            .map_err(|source| ReadError::Open {
                path: path.to_owned(),
                source,
            })?;
        let mut counts: BTreeMap<&[u8], usize> = BTreeMap::new();
        for name in &names {
            *counts.entry(name).or_default() += 1;
        }
        let mut reported = std::collections::BTreeSet::new();
        for name in &names {
            let count = counts[name.as_slice()];
            if count > 1 && reported.insert(name) {
                out.push(UnsafeMember {
                    name: String::from_utf8_lossy(name).into_owned(),
                    problem: MemberProblem::Duplicate(count),
                });
            }
        }
    }
    Ok(out)
}

/// Streams a member through a hash; returns the URL-safe base64 digest
/// without padding and the length.
fn digest_member<D: Digest>(reader: &mut impl Read) -> io::Result<(String, u64)> {
    let mut hasher = D::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0;
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
