//! Writing the planned tree: regular files, then links, each created
//! relative to open directories (`tree_writer`). Both fan out over worker
//! threads (file creation is kernel-bound), while completions come back to
//! the calling thread, which alone reports progress.
//!
//! From an uncompressed tar the scan knows where each file's bytes are: the
//! workers copy them straight from the open tarball (`copy_file_range`).
//! A compressed tar is streamed a second time and files travel to the
//! workers in memory (large ones are written by the reading thread).

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, SystemTime};

use pypa_formats::installer::InstallCommand;

use crate::compression::{READ_BUFFER, TarCodec};
use crate::error::Error;
use crate::positioned::PositionedReader;
use crate::scan::{self, Kind, Model};
use crate::tree_writer::{TreeWriter, copy_range};
use crate::warning::DevelWarning;

/// Files larger than this are written by the reading thread itself, so
/// memory in flight stays bounded (`QUEUE` × this at most).
const IN_MEMORY_LIMIT: u64 = 4 << 20;
/// Fewer files or links than this are made by the calling thread: starting
/// threads would cost more than they save.
const PARALLEL_FROM: usize = 256;
/// Batches in flight between the reader and the workers.
const QUEUE: usize = 8;
/// Small files travel in batches, so threads hand over work (and report
/// back) once per batch rather than once per file.
const BATCH_FILES: usize = 64;
const BATCH_BYTES: usize = 1 << 20;
/// What creating a file costs its writer, in bytes copied: about the time
/// `openat`, `futimens` and `close` take to copy this much.
const FILE_COST: u64 = 64 << 10;

/// The most writer threads an unpack starts by default: file creation is
/// kernel-bound, so more than this gains little.
pub(crate) const DEFAULT_MAX_WORKERS: usize = 8;

/// The most writer threads per core a caller's `jobs` starts.
const MAX_WORKERS_PER_CORE: usize = 4;

/// How many threads write for `jobs` (0: the machine's parallelism, at most
/// [`DEFAULT_MAX_WORKERS`]; otherwise `jobs`, at most
/// [`MAX_WORKERS_PER_CORE`] per core).
pub(crate) fn workers(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    match jobs {
        0 => cores.min(DEFAULT_MAX_WORKERS),
        n => n.min(cores * MAX_WORKERS_PER_CORE),
    }
}

struct Job {
    rel: String,
    mode: u32,
    mtime: u64,
    data: Vec<u8>,
}

/// A regular file of the model: path, mode, mtime, data offset, size.
type FileEntry<'m> = (&'m str, u32, u64, u64, u64);

/// Writes every regular file of `model` through `tree` from `tar` (open
/// as `file`, the same file the scan read) on `workers` threads; `on_done`
/// is called once per file written. Returns the count.
pub(crate) fn write_files(
    tree: &TreeWriter<'_>,
    tar: &Path,
    file: &File,
    compression: TarCodec,
    model: &Model,
    workers: usize,
    on_done: &mut dyn FnMut(),
) -> Result<usize, Error> {
    match compression {
        TarCodec::None => copy_files(tree, tar, file, model, workers, on_done),
        _ => stream_files(tree, tar, file, compression, model, workers, on_done),
    }
}

/// Reports completions from workers to `on_done` until they all hang up;
/// stops them at the first error.
fn collect(
    done_rx: &mpsc::Receiver<Result<usize, Error>>,
    abort: &AtomicBool,
    on_done: &mut dyn FnMut(),
) -> Result<usize, Error> {
    let mut files = 0;
    drain(done_rx, abort, |written| {
        for _ in 0..written {
            files += 1;
            on_done();
        }
    })?;
    Ok(files)
}

/// Hands every worker report to `each` until the workers all hang up; the
/// first error raises `abort` (the other workers stop at their next batch)
/// and is returned once they have.
fn drain<T>(
    reports: &mpsc::Receiver<Result<T, Error>>,
    abort: &AtomicBool,
    mut each: impl FnMut(T),
) -> Result<(), Error> {
    let mut first_error = None;
    for report in reports {
        match report {
            Ok(value) => each(value),
            Err(e) => {
                abort.store(true, Ordering::Relaxed);
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The uncompressed case: each worker takes a run of files in path order
/// and copies their bytes from the tarball at the offsets the scan found.
fn copy_files(
    tree: &TreeWriter<'_>,
    tar: &Path,
    file: &File,
    model: &Model,
    workers: usize,
    on_done: &mut dyn FnMut(),
) -> Result<usize, Error> {
    let files: Vec<FileEntry<'_>> = model
        .members
        .iter()
        .filter_map(|(rel, kind)| match kind {
            Kind::File {
                mode,
                mtime,
                offset,
                size,
            } => Some((rel.as_str(), *mode, *mtime, *offset, *size)),
            _ => None,
        })
        .collect();
    let copied = in_parallel(
        tree,
        &files,
        workers,
        |&(.., size)| size + FILE_COST,
        on_done,
        |tree, entry| copy_file(tree, tar, file, entry).map(|()| None),
    )?;
    debug_assert!(copied.is_empty(), "copying a file warns of nothing");
    // That the tar stayed put meanwhile is the digest check's to tell.
    Ok(files.len())
}

fn changed(tar: &Path, what: &str) -> Error {
    Error::CorruptTar {
        install: InstallCommand::default(),
        tar: tar.to_path_buf(),
        reason: format!("{what} changed while unpacking"),
    }
}

/// One file of an uncompressed tar: create, copy, mode, mtime.
fn copy_file(
    tree: &mut TreeWriter<'_>,
    tar: &Path,
    file: &File,
    &(rel, mode, mtime, offset, size): &FileEntry<'_>,
) -> Result<(), Error> {
    let out = tree
        .create_file(rel, mode)
        .map_err(|e| Error::io("create", tree.path(rel), e))?;
    copy_range(file, offset, size, &out).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            changed(tar, rel)
        } else {
            Error::io("write", tree.path(rel), e)
        }
    })?;
    finish_metadata(tree, &out, mode, mtime)
        .map_err(|(action, e)| Error::io(action, tree.path(rel), e))
}

/// The compressed case: streams the archive again and writes every regular
/// file of `model`.
fn stream_files(
    tree: &TreeWriter<'_>,
    tar: &Path,
    file: &File,
    compression: TarCodec,
    model: &Model,
    workers: usize,
    on_done: &mut dyn FnMut(),
) -> Result<usize, Error> {
    let abort = AtomicBool::new(false);
    let (job_tx, job_rx) = mpsc::sync_channel::<Vec<Job>>(QUEUE);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Result<usize, Error>>();
    std::thread::scope(|s| {
        let reader_done = done_tx.clone();
        let abort_ref = &abort;
        s.spawn(move || {
            let result = read_archive(
                &mut tree.for_thread(),
                tar,
                file,
                compression,
                model,
                abort_ref,
                &job_tx,
                &reader_done,
            );
            if let Err(e) = result {
                let _ = reader_done.send(Err(e));
            }
        });
        for _ in 0..workers {
            let done = done_tx.clone();
            let rx = &job_rx;
            s.spawn(move || {
                let mut tree = tree.for_thread();
                loop {
                    let batch = rx.lock().map(|r| r.recv());
                    let Ok(Ok(batch)) = batch else { break };
                    let result = batch.iter().try_fold(0, |written, job| {
                        write_bytes(&mut tree, job)
                            .map(|()| written + 1)
                            .map_err(|e| Error::io("write", tree.path(&job.rel), e))
                    });
                    if done.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        collect(&done_rx, &abort, on_done)
    })
}

/// The reading side: sends small files to the workers, writes large ones.
#[allow(clippy::too_many_arguments)] // one call site: the stream's state
fn read_archive(
    tree: &mut TreeWriter<'_>,
    tar: &Path,
    file: &File,
    compression: TarCodec,
    model: &Model,
    abort: &AtomicBool,
    jobs: &mpsc::SyncSender<Vec<Job>>,
    done: &mpsc::Sender<Result<usize, Error>>,
) -> Result<(), Error> {
    let corrupt = |e: io::Error| Error::CorruptTar {
        install: InstallCommand::default(),
        tar: tar.to_path_buf(),
        reason: e.to_string(),
    };
    // The file the scan checked, read from its start (never the path
    // again, which may name another file by now).
    let reader = compression
        .decoder(BufReader::with_capacity(
            READ_BUFFER,
            PositionedReader::new(file),
        ))
        .map_err(|e| Error::read("open", tar, e))?;
    let mut archive = tar::Archive::new(reader);
    let mut batch = Vec::new();
    let mut batch_bytes = 0;
    for entry in archive.entries().map_err(corrupt)? {
        if abort.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut entry = entry.map_err(corrupt)?;
        if !matches!(
            entry.header().entry_type(),
            tar::EntryType::Regular | tar::EntryType::Continuous
        ) {
            continue;
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let rel = scan::member_path(&raw, &model.names).map_err(|reason| Error::UnsafeMember {
            tar: tar.to_path_buf(),
            member: raw.clone(),
            reason,
        })?;
        // The archive changed between the passes: refuse to go on.
        let Some(Kind::File { mode, mtime, .. }) = model.members.get(&rel) else {
            return Err(changed(tar, &raw));
        };
        if entry.size() > IN_MEMORY_LIMIT {
            write_file(tree, &rel, *mode, *mtime, &mut entry)
                .map_err(|e| e.into_error(&tree.path(&rel), tar))?;
            let _ = done.send(Ok(1));
            continue;
        }
        let mut data = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
        entry.read_to_end(&mut data).map_err(corrupt)?;
        batch_bytes += data.len();
        batch.push(Job {
            rel,
            mode: *mode,
            mtime: *mtime,
            data,
        });
        if batch.len() >= BATCH_FILES || batch_bytes >= BATCH_BYTES {
            batch_bytes = 0;
            if jobs.send(std::mem::take(&mut batch)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        let _ = jobs.send(batch);
    }
    Ok(())
}

/// A small file from memory: create, write, mode, mtime.
fn write_bytes(tree: &mut TreeWriter<'_>, job: &Job) -> io::Result<()> {
    let mut file = tree.create_file(&job.rel, job.mode)?;
    file.write_all(&job.data)?;
    finish_metadata(tree, &file, job.mode, job.mtime).map_err(|(_, e)| e)
}

enum WriteError {
    Read(io::Error),
    Write(&'static str, io::Error),
}

impl WriteError {
    fn into_error(self, dest: &Path, tar: &Path) -> Error {
        match self {
            WriteError::Read(e) => Error::CorruptTar {
                install: InstallCommand::default(),
                tar: tar.to_path_buf(),
                reason: e.to_string(),
            },
            WriteError::Write(action, e) => Error::io(action, dest, e),
        }
    }
}

fn write_file(
    tree: &mut TreeWriter<'_>,
    rel: &str,
    mode: u32,
    mtime: u64,
    from: &mut dyn Read,
) -> Result<(), WriteError> {
    let mut file = tree
        .create_file(rel, mode)
        .map_err(|e| WriteError::Write("create", e))?;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(WriteError::Read(e)),
        };
        file.write_all(&buffer[..n])
            .map_err(|e| WriteError::Write("write", e))?;
    }
    finish_metadata(tree, &file, mode, mtime).map_err(|(action, e)| WriteError::Write(action, e))
}

/// The tar's mode bits and mtime on a file `tree` created and wrote.
fn finish_metadata(
    tree: &TreeWriter<'_>,
    file: &File,
    mode: u32,
    mtime: u64,
) -> Result<(), (&'static str, io::Error)> {
    if !tree.creates_exact_mode(mode) {
        set_mode(file, mode).map_err(|e| ("set the mode of", e))?;
    }
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(mtime))
        .map_err(|e| ("set the mtime of", e))
}

/// Gives a written file the tar's mode bits.
#[cfg(unix)]
fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// Windows has no mode bits: a file without any write bit is read-only.
#[cfg(windows)]
fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    if mode & 0o222 == 0 {
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(true);
        file.set_permissions(permissions)?;
    }
    Ok(())
}

/// A link of the archive kept as a symbolic link: its path, its text, and
/// the path (site-packages-relative) its chain resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptLink {
    pub(crate) link: String,
    pub(crate) text: String,
    pub(crate) resolved: String,
}

#[cfg(unix)]
fn make_symlink(tree: &mut TreeWriter<'_>, kept: &KeptLink) -> io::Result<()> {
    tree.symlink(&kept.text, &kept.link)
}

/// Windows creates symlinks only with a privilege (developer mode or an
/// administrator), so a kept link becomes what needs none: a hard link to
/// the file it resolves to (a copy where hard links fail), and for a
/// directory a directory of such links to its contents. The target exists
/// by now (links come after every file and directory), in the tree or in a
/// runtime package, and is reached through their confined handles.
#[cfg(windows)]
fn make_symlink(tree: &mut TreeWriter<'_>, kept: &KeptLink) -> io::Result<()> {
    link_or_copy(tree, &kept.resolved, &kept.link)
}

#[cfg(windows)]
fn link_or_copy(tree: &mut TreeWriter<'_>, from: &str, to: &str) -> io::Result<()> {
    if let Some(names) = tree.list_source(from)? {
        tree.create_dir(to, 0o755)?;
        for name in names {
            link_or_copy(tree, &format!("{from}/{name}"), &format!("{to}/{name}"))?;
        }
        Ok(())
    } else {
        tree.hard_link(from, to).or_else(|e| {
            if fs_helpers::confined::refusal(&e).is_some() {
                Err(e)
            } else {
                tree.copy(from, to)
            }
        })
    }
}

/// Creates the hard links (`(link, source)`) and symlinks ([`KeptLink`]),
/// all site-packages-relative; `on_done` is called once per link.
///
/// Hard links come first, symlinks after them all: a kept symlink may point
/// at a hard link (`bin/amdclang -> ../lib/llvm/bin/amdclang`), and a crash
/// between the two must not leave a dangling symlink, which `pip uninstall`
/// does not remove (it skips paths that do not exist).
pub(crate) fn make_links(
    tree: &TreeWriter<'_>,
    hard_links: &[(String, String)],
    symlinks: &[KeptLink],
    workers: usize,
    on_done: &mut dyn FnMut(),
) -> Result<Vec<DevelWarning>, Error> {
    let mut warnings = in_parallel(tree, hard_links, workers, |_| 1, on_done, hard_link)?;
    warnings.extend(in_parallel(
        tree,
        symlinks,
        workers,
        |_| 1,
        on_done,
        |tree, kept| {
            make_symlink(tree, kept)
                .map_err(|e| Error::io("create symlink", tree.path(&kept.link), e))?;
            Ok(None)
        },
    )?);
    // Threads finish in any order; report in path order.
    warnings.sort_by(|a, b| format!("{a}").cmp(&format!("{b}")));
    Ok(warnings)
}

/// Runs `make` over `jobs` on `workers` threads, each taking a run of
/// jobs of about the same total `weight`; `on_done` is called once per job
/// made. Stops at the first error.
fn in_parallel<J: Sync>(
    tree: &TreeWriter<'_>,
    jobs: &[J],
    workers: usize,
    weight: impl Fn(&J) -> u64,
    on_done: &mut dyn FnMut(),
    make: impl Fn(&mut TreeWriter<'_>, &J) -> Result<Option<DevelWarning>, Error> + Sync,
) -> Result<Vec<DevelWarning>, Error> {
    let workers = if jobs.len() < PARALLEL_FROM {
        1
    } else {
        workers
    };
    if workers == 1 {
        let mut tree = tree.for_thread();
        let mut warnings = Vec::new();
        for job in jobs {
            warnings.extend(make(&mut tree, job)?);
            on_done();
        }
        return Ok(warnings);
    }
    // Each worker reports once per `BATCH_FILES` links: (links made, warnings).
    let (done_tx, done_rx) = mpsc::channel::<Result<(usize, Vec<DevelWarning>), Error>>();
    let abort = AtomicBool::new(false);
    let mut warnings = Vec::new();
    std::thread::scope(|s| {
        for part in split_by_weight(jobs, workers, &weight) {
            let done = done_tx.clone();
            let abort = &abort;
            let make = &make;
            s.spawn(move || {
                let mut tree = tree.for_thread();
                for batch in part.chunks(BATCH_FILES) {
                    if abort.load(Ordering::Relaxed) {
                        return;
                    }
                    let result =
                        batch
                            .iter()
                            .try_fold((0, Vec::new()), |(made, mut warnings), job| {
                                warnings.extend(make(&mut tree, job)?);
                                Ok((made + 1, warnings))
                            });
                    if done.send(result).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        drain(&done_rx, &abort, |(made, found)| {
            warnings.extend(found);
            for _ in 0..made {
                on_done();
            }
        })
    })?;
    Ok(warnings)
}

/// `jobs` cut into at most `parts` runs, in order, of about equal total
/// `weight` (a run ends once it reaches its share).
fn split_by_weight<J>(jobs: &[J], parts: usize, weight: impl Fn(&J) -> u64) -> Vec<&[J]> {
    let total: u64 = jobs.iter().map(&weight).sum();
    let share = total.div_ceil(parts.max(1) as u64).max(1);
    let mut runs = Vec::with_capacity(parts);
    let (mut start, mut run_weight) = (0, 0);
    for (i, job) in jobs.iter().enumerate() {
        run_weight += weight(job);
        if run_weight >= share {
            runs.push(&jobs[start..=i]);
            (start, run_weight) = (i + 1, 0);
        }
    }
    if start < jobs.len() {
        runs.push(&jobs[start..]);
    }
    runs
}

fn hard_link(
    tree: &mut TreeWriter<'_>,
    (link, source): &(String, String),
) -> Result<Option<DevelWarning>, Error> {
    match tree.hard_link(source, link) {
        Ok(()) => Ok(None),
        Err(e) if can_copy_instead(&e) => {
            tree.copy(source, link)
                .map_err(|e| Error::io("copy", tree.path(link), e))?;
            Ok(Some(DevelWarning::Copied {
                path: link.to_owned(),
                reason: e.to_string(),
            }))
        }
        Err(e) => Err(Error::io("hard-link", tree.path(link), e)),
    }
}

/// Errors after which copying the file is the best we can do.
fn can_copy_instead(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied
            | io::ErrorKind::CrossesDevices
            | io::ErrorKind::Unsupported
            | io::ErrorKind::TooManyLinks
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree_names::TreeNames;
    use std::fs;

    /// A model of one file whose bytes are `size` at `offset` of the tar.
    fn one_file(offset: u64, size: u64) -> Model {
        let names = TreeNames::new(&dist_info::nonce::Nonce::NONE);
        let mut model = Model::new(names.clone());
        model.members.insert(
            format!("{}/f", names.root()),
            Kind::File {
                mode: 0o644,
                mtime: 0,
                offset,
                size,
            },
        );
        model
    }

    fn copy(tar_bytes: &[u8], model: &Model) -> (tempfile::TempDir, Result<usize, Error>) {
        let site = tempfile::tempdir().unwrap();
        let tar = site.path().join("t.tar");
        fs::write(&tar, tar_bytes).unwrap();
        fs::create_dir(site.path().join(model.names.root())).unwrap();
        let dir = fs_helpers::confined::Dir::open(&site.path().join(model.names.root())).unwrap();
        let sources = crate::tree_writer::Sources::default();
        let tree = TreeWriter::new(site.path(), model.names.root(), &dir, &sources);
        let file = File::open(&tar).unwrap();
        let result = write_files(&tree, &tar, &file, TarCodec::None, model, 2, &mut || {});
        (site, result)
    }

    #[test]
    fn an_uncompressed_tar_is_copied_from_the_scanned_offsets() {
        let model = one_file(3, 4);
        let (site, result) = copy(b"abcdefghij", &model);
        assert_eq!(result.unwrap(), 1);
        let written = site.path().join(model.names.root()).join("f");
        assert_eq!(fs::read(written).unwrap(), b"defg");
    }

    #[test]
    fn a_tar_shorter_than_scanned_is_refused() {
        let model = one_file(8, 10);
        let (_site, result) = copy(b"abcdefghij", &model);
        let error = result.unwrap_err();
        assert!(
            matches!(&error, Error::CorruptTar { reason, .. } if reason.ends_with("changed while unpacking")),
            "{error}"
        );
    }

    #[test]
    fn runs_share_the_weight_not_the_count() {
        let sizes = [1, 1, 1, 1, 1, 1, 20, 1, 1, 1, 1, 1, 1, 1, 1, 1];
        let runs = split_by_weight(&sizes, 2, |&s| s);
        let weights: Vec<u64> = runs.iter().map(|r| r.iter().sum()).collect();
        assert_eq!(weights, [26, 9]);
        assert_eq!(runs.concat(), sizes);
        // Never more runs than asked for, none empty, and nothing lost.
        for parts in 1..=20 {
            let runs = split_by_weight(&sizes, parts, |&s| s);
            assert!(runs.len() <= parts && runs.iter().all(|r| !r.is_empty()));
            assert_eq!(runs.concat(), sizes, "{parts}");
        }
        assert!(split_by_weight(&[] as &[u64], 2, |&s| s).is_empty());
        assert_eq!(split_by_weight(&[0u64, 0], 2, |&s| s).concat(), [0, 0]);
    }
}
