//! Wheels: payload plus a `.dist-info` (METADATA, WHEEL, entry points,
//! RECORD), written through any [`ArchiveSink`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::member_path::validate_member_path;
use crate::output::AtomicOutput;
use crate::sink::ArchiveSink;
use crate::timings::WriteTimings;
use crate::wheel_file::{render_entry_points, render_wheel_file, validate_console_script};
use crate::zip_writer::{CompressionCache, ZipSink};
use crate::{BytesSource, CoreMetadata, Error, Member, MemberSource, WriteOptions};
use pypa_formats::filename::{BuildTag, WheelFilename, WheelTag};
use pypa_formats::record::{RecordEntry, render_record};

/// The `Generator` written into `WHEEL` unless the caller names another.
pub const DEFAULT_GENERATOR: &str = concat!("wheel-writer ", env!("CARGO_PKG_VERSION"));

/// The `.data` sub-directories a wheel may install into (wheel spec).
const DATA_SCHEMES: [&str; 5] = ["purelib", "platlib", "headers", "scripts", "data"];

/// `.dist-info` files this crate generates; callers may not add their own.
const GENERATED: [&str; 4] = ["METADATA", "WHEEL", "RECORD", "entry_points.txt"];

/// A wheel being assembled: metadata, tag and members, in any order.
///
/// Members are written sorted by path, then the `.dist-info` files, with
/// `RECORD` last, so the bytes never depend on the order of `add_*` calls.
///
/// ```
/// use std::sync::Arc;
/// use wheel_writer::{BytesSource, CoreMetadata, MemorySink, WheelBuilder, WheelTag};
///
/// let mut metadata = CoreMetadata::new("rocm-sdk-core", "7.0.0");
/// metadata.requires_dist = vec!["rocm-sdk-devel==7.0.0; extra == \"devel\"".into()];
/// metadata.provides_extra = vec!["devel".into()];
/// let mut wheel = WheelBuilder::new(metadata, WheelTag::py3_none("linux_x86_64")?)?;
/// wheel.add_file("rocm_sdk_core/__init__.py", Arc::new(BytesSource::new(&b""[..], false, "init")))?;
/// wheel.add_console_script("hipcc", "rocm_sdk_core._cli:hipcc")?;
/// assert_eq!(wheel.file_name(), "rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl");
///
/// let mut sink = MemorySink::new();
/// let record = wheel.write_into(&mut sink)?;
/// assert_eq!(record.last().unwrap().path, "rocm_sdk_core-7.0.0.dist-info/RECORD");
/// # Ok::<(), wheel_writer::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct WheelBuilder {
    metadata: CoreMetadata,
    /// Name, version, build and tag, parsed once from the metadata and tag.
    filename: WheelFilename,
    root_is_purelib: bool,
    generator: String,
    console_scripts: BTreeMap<String, String>,
    files: BTreeMap<String, Arc<dyn MemberSource>>,
    dist_info_files: BTreeMap<String, Arc<dyn MemberSource>>,
}

/// A package written to disk.
#[derive(Debug, Clone)]
pub struct WrittenPackage {
    /// Its final path.
    pub path: PathBuf,
    /// The rows of its `RECORD` (empty for an sdist).
    pub record: Vec<RecordEntry>,
}

impl WheelBuilder {
    /// Starts a platform wheel (`Root-Is-Purelib: false`) after checking the metadata.
    pub fn new(metadata: CoreMetadata, tag: WheelTag) -> Result<Self, Error> {
        metadata.validate()?;
        let (name, version) = metadata.name_and_version()?;
        Ok(Self {
            metadata,
            filename: WheelFilename {
                name,
                version,
                build: None,
                tag,
            },
            root_is_purelib: false,
            generator: DEFAULT_GENERATOR.to_owned(),
            console_scripts: BTreeMap::new(),
            files: BTreeMap::new(),
            dist_info_files: BTreeMap::new(),
        })
    }

    /// Sets the optional build tag (`1`, `2_abc`).
    pub fn with_build_tag(mut self, build: &str) -> Result<Self, Error> {
        self.filename.build = Some(build.parse()?);
        Ok(self)
    }

    /// Sets `Root-Is-Purelib` (default `false`: ROCm packages are platform wheels).
    #[must_use]
    pub fn with_root_is_purelib(mut self, purelib: bool) -> Self {
        self.root_is_purelib = purelib;
        self
    }

    /// Sets the `Generator` line of `WHEEL` (one line, e.g. `therock-package 0.1.0`).
    pub fn with_generator(mut self, generator: &str) -> Result<Self, Error> {
        if generator.is_empty() || generator.contains(['\r', '\n']) {
            return Err(Error::InvalidMetadata {
                field: "Generator",
                value: generator.to_owned(),
                reason: "it must be one non-empty line",
            });
        }
        generator.clone_into(&mut self.generator);
        Ok(self)
    }

    /// The metadata.
    pub fn metadata(&self) -> &CoreMetadata {
        &self.metadata
    }

    /// `{name}-{version}.dist-info`.
    pub fn dist_info_dir(&self) -> String {
        self.filename.dist_info_dir().to_string()
    }

    /// `{name}-{version}.data`.
    pub fn data_dir(&self) -> String {
        self.filename.data_dir()
    }

    /// The wheel's file name.
    pub fn file_name(&self) -> String {
        self.filename.to_string()
    }

    /// Adds a member installed relative to site-packages
    /// (`_rocm_sdk_core/lib/libamdhip64.so.7`).
    pub fn add_file(&mut self, path: &str, source: Arc<dyn MemberSource>) -> Result<(), Error> {
        validate_member_path(path)?;
        let top = path.split('/').next().unwrap_or_default();
        if top == self.dist_info_dir() || top == self.data_dir() {
            return Err(Error::InvalidPath {
                path: path.to_owned(),
                reason: "the .dist-info and .data directories are written by the wheel \
                         builder; use add_dist_info_file, add_script or add_data",
            });
        }
        self.insert(path.to_owned(), source)
    }

    /// Adds an executable installed into the environment's `bin/`
    /// (`{name}-{version}.data/scripts/{name}`).
    pub fn add_script(&mut self, name: &str, source: Arc<dyn MemberSource>) -> Result<(), Error> {
        self.add_data("scripts", name, source)
    }

    /// Adds a member under `{name}-{version}.data/{scheme}/{path}`;
    /// `scheme` is `purelib`, `platlib`, `headers`, `scripts` or `data`.
    pub fn add_data(
        &mut self,
        scheme: &str,
        path: &str,
        source: Arc<dyn MemberSource>,
    ) -> Result<(), Error> {
        validate_member_path(path)?;
        if !DATA_SCHEMES.contains(&scheme) {
            return Err(Error::InvalidPath {
                path: format!("{scheme}/{path}"),
                reason: "the .data scheme must be purelib, platlib, headers, scripts or data",
            });
        }
        let full = format!("{}/{scheme}/{path}", self.data_dir());
        self.insert(full, source)
    }

    /// Adds a file to `.dist-info` (for example `licenses/LICENSE`).
    pub fn add_dist_info_file(
        &mut self,
        path: &str,
        source: Arc<dyn MemberSource>,
    ) -> Result<(), Error> {
        validate_member_path(path)?;
        if GENERATED.contains(&path) {
            return Err(Error::InvalidPath {
                path: path.to_owned(),
                reason: "METADATA, WHEEL, RECORD and entry_points.txt are generated",
            });
        }
        if self
            .dist_info_files
            .insert(path.to_owned(), source)
            .is_some()
        {
            return Err(Error::DuplicatePath {
                path: format!("{}/{path}", self.dist_info_dir()),
            });
        }
        Ok(())
    }

    /// Declares a `console_scripts` entry point (`hipcc = rocm_sdk_core._cli:hipcc`).
    pub fn add_console_script(&mut self, name: &str, value: &str) -> Result<(), Error> {
        validate_console_script(name, value)?;
        if self
            .console_scripts
            .insert(name.to_owned(), value.to_owned())
            .is_some()
        {
            return Err(Error::DuplicateEntryPoint {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    fn insert(&mut self, path: String, source: Arc<dyn MemberSource>) -> Result<(), Error> {
        if self.files.contains_key(&path) {
            return Err(Error::DuplicatePath { path });
        }
        self.files.insert(path, source);
        Ok(())
    }

    /// Every member but `RECORD`, in archive order: payload sorted by path,
    /// then the `.dist-info` files sorted by name.
    pub fn members(&self) -> Result<Vec<Member>, Error> {
        let dist_info = self.dist_info_dir();
        for license in &self.metadata.license_files {
            if !self
                .dist_info_files
                .contains_key(&format!("licenses/{license}"))
            {
                return Err(Error::InvalidMetadata {
                    field: "License-File",
                    value: license.clone(),
                    reason: "each listed licence file must be added as \
                             add_dist_info_file(\"licenses/<path>\")",
                });
            }
        }
        let generated = |name: &str, text: String| -> (String, Arc<dyn MemberSource>) {
            let source = BytesSource::new(text.into_bytes(), false, format!("generated {name}"));
            (name.to_owned(), Arc::new(source))
        };
        let mut info: BTreeMap<String, Arc<dyn MemberSource>> = self.dist_info_files.clone();
        info.extend([
            generated("METADATA", self.metadata.render()?),
            generated(
                "WHEEL",
                render_wheel_file(
                    &self.generator,
                    self.root_is_purelib,
                    self.filename.build.as_ref().map(BuildTag::as_str),
                    &self.filename.tag,
                ),
            ),
        ]);
        if !self.console_scripts.is_empty() {
            info.extend([generated(
                "entry_points.txt",
                render_entry_points(&self.console_scripts),
            )]);
        }
        let payload = self
            .files
            .iter()
            .map(|(path, source)| Member::new(path.clone(), Arc::clone(source)));
        let info = info
            .into_iter()
            .map(|(name, source)| Member::new(format!("{dist_info}/{name}"), source));
        Ok(payload.chain(info).collect())
    }

    /// Writes every member and then `RECORD` into `sink`; returns `RECORD`'s rows.
    pub fn write_into(&self, sink: &mut dyn ArchiveSink) -> Result<Vec<RecordEntry>, Error> {
        let members = self.members()?;
        let digests = sink.write_members(&members)?;
        let record_path = format!("{}/RECORD", self.dist_info_dir());
        let mut record: Vec<RecordEntry> = members
            .iter()
            .zip(&digests)
            .map(|(member, digest)| digest.record_entry(member.path()))
            .collect();
        record.push(RecordEntry {
            path: record_path.clone(),
            hash: None,
            size: None,
        });
        let text = render_record(&record);
        let source = BytesSource::new(text.into_bytes(), false, "generated RECORD");
        sink.write_members(&[Member::new(record_path, Arc::new(source))])?;
        Ok(record)
    }

    /// Writes the wheel into `dir` atomically (a temporary file renamed on
    /// success), compressing on `options.jobs` threads and reusing members
    /// from `cache` when given. Returns the final path.
    pub fn write(
        &self,
        dir: &Path,
        options: &WriteOptions,
        cache: Option<&CompressionCache>,
    ) -> Result<WrittenPackage, Error> {
        self.write_timed(dir, options, cache, None)
    }

    /// [`WheelBuilder::write`], adding the time each phase took to
    /// `timings` when given.
    pub fn write_timed(
        &self,
        dir: &Path,
        options: &WriteOptions,
        cache: Option<&CompressionCache>,
        timings: Option<&WriteTimings>,
    ) -> Result<WrittenPackage, Error> {
        let output = AtomicOutput::create(dir, &self.file_name())?;
        let mut sink = ZipSink::new(
            output.file()?,
            output.destination().to_owned(),
            options,
            cache,
        )?
        .with_timings(timings);
        let record = self.write_into(&mut sink)?;
        let offer = sink.finish()?;
        let path = output.commit()?;
        // The cache learns members only once the file is complete.
        offer.accept();
        tracing::debug!(wheel = %path.display(), members = record.len(), "wrote wheel");
        Ok(WrittenPackage { path, record })
    }
}
