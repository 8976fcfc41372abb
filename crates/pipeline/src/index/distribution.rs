//! What the index needs to know about one wheel or sdist: its project, its
//! hash, its `Requires-Python`, and (for a wheel) the exact bytes of its
//! `METADATA`, which PEP 658 serves beside it as `<wheel>.metadata`. Read
//! through the same strict readers as `verify`, with the same caps.

use std::path::Path;

use pypa_formats::filename::{SdistFilename, WheelFilename};
use wheel_writer::{WheelReader, limits};

use fs_helpers::file_hash::sha256_reader;
use pypa_formats::core_metadata::HeaderBlock;

use crate::error::{IndexError, IoAction, cannot};

/// What indexing returns.
type Result<T, E = IndexError> = std::result::Result<T, E>;

/// One distribution file of the directory being indexed.
#[derive(Debug, Clone)]
pub(crate) struct Distribution {
    /// Its path inside the indexed directory, `/`-separated.
    pub rel: String,
    /// The file name alone.
    pub file_name: String,
    /// PEP 503 normalised project name (`rocm-sdk-core`).
    pub project: String,
    /// Hex sha256 of the file.
    pub sha256: String,
    /// `Requires-Python` of its core metadata, when it has one.
    pub requires_python: Option<String>,
    /// A wheel's `METADATA` bytes, verbatim; `None` for an sdist (the
    /// `rocm` sdist computes its requirements at install time, so its
    /// `PKG-INFO` is not what a resolver may use instead of building it).
    pub core_metadata: Option<Vec<u8>>,
}

impl Distribution {
    /// Reads `path` (`rel` inside the indexed directory).
    pub(crate) fn read(path: &Path, rel: String) -> Result<Self> {
        let file_name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
        // Opened as the readers open it: a regular file, never a link.
        let sha256 = wheel_writer::dist_dir::open_package(path)
            .and_then(sha256_reader)
            .map(|digest| digest.hex())
            .map_err(cannot(IoAction::Read, path))?;
        // Wheel and sdist names are lower-case by specification.
        #[allow(clippy::case_sensitive_file_extension_comparisons)]
        let (project, metadata, core_metadata, member) = if file_name.ends_with(".whl") {
            let filename = file_name.parse::<WheelFilename>();
            let filename = filename.map_err(unindexable(path))?;
            let metadata = wheel_metadata(path)?;
            let member = format!("{}/METADATA", filename.dist_info_dir());
            (filename.name, metadata.clone(), Some(metadata), member)
        } else if file_name.ends_with(".tar.gz") {
            let filename = file_name.parse::<SdistFilename>();
            let filename = filename.map_err(unindexable(path))?;
            let member = format!("{}/PKG-INFO", filename.top_directory());
            (
                filename.name,
                release_check::sdist_pkg_info(path)?,
                None,
                member,
            )
        } else {
            return Err(IndexError::NotAPackage {
                path: path.to_owned(),
            });
        };
        let requires_python = HeaderBlock::parse(&metadata)
            .and_then(|block| {
                block
                    .get_line("Requires-Python")
                    .map(|v| v.map(str::to_owned))
            })
            .map_err(|source| IndexError::CoreMetadata {
                path: path.to_owned(),
                member,
                source,
            })?;
        Ok(Self {
            project: project.normalized(),
            rel,
            file_name,
            sha256,
            requires_python,
            core_metadata,
        })
    }
}

fn wheel_metadata(path: &Path) -> Result<Vec<u8>> {
    let read = || -> Result<Vec<u8>, wheel_writer::ReadError> {
        let mut wheel = WheelReader::open(path)?;
        let member = format!("{}/METADATA", wheel.dist_info_dir());
        // Served verbatim as `.metadata`: never more than a metadata file
        // may be (docs/verify.md#caps).
        wheel.read_member(&member, limits::METADATA)
    };
    read().map_err(|source| IndexError::WheelMetadata {
        path: path.to_owned(),
        source: Box::new(source),
    })
}

/// [`IndexError::Unindexable`] for `path`.
fn unindexable(
    path: &Path,
) -> impl FnOnce(pypa_formats::filename::FilenameError) -> IndexError + '_ {
    move |source| IndexError::Unindexable {
        path: path.to_owned(),
        source,
    }
}
