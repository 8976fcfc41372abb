//! Writing the planned tree: regular files streamed from the archive's
//! second pass, then links. Both fan out over worker threads (file creation
//! is kernel-bound), while completions come back to the calling thread, which
//! alone reports progress.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, SystemTime};

use crate::compression::Compression;
use crate::error::Error;
use crate::scan::{self, Kind, Model};
use crate::warning::Warning;

/// Files larger than this are written by the reading thread itself, so
/// memory in flight stays bounded (`QUEUE` × this at most).
const IN_MEMORY_LIMIT: u64 = 4 << 20;
/// Batches in flight between the reader and the workers.
const QUEUE: usize = 8;
/// Small files travel in batches, so threads hand over work (and report
/// back) once per batch rather than once per file.
const BATCH_FILES: usize = 64;
const BATCH_BYTES: usize = 1 << 20;

/// How many threads write: the machine's parallelism, at most 8.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

struct Job {
    dest: PathBuf,
    mode: u32,
    mtime: u64,
    data: Vec<u8>,
}

/// Streams the archive again and writes every regular file of `model`;
/// `on_done` is called once per file written. Returns the count.
pub(crate) fn write_files(
    root: &Path,
    tar: &Path,
    compression: Compression,
    model: &Model,
    on_done: &mut dyn FnMut(),
) -> Result<usize, Error> {
    let abort = AtomicBool::new(false);
    let (job_tx, job_rx) = mpsc::sync_channel::<Vec<Job>>(QUEUE);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Result<usize, Error>>();
    let mut first_error = None;
    let mut files = 0;
    std::thread::scope(|s| {
        let reader_done = done_tx.clone();
        let abort_ref = &abort;
        s.spawn(move || {
            let result = read_archive(
                root,
                tar,
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
        for _ in 0..workers() {
            let done = done_tx.clone();
            let rx = &job_rx;
            s.spawn(move || {
                loop {
                    let batch = rx.lock().map(|r| r.recv());
                    let Ok(Ok(batch)) = batch else { break };
                    let result = batch.iter().try_fold(0, |written, job| {
                        write_bytes(job)
                            .map(|()| written + 1)
                            .map_err(|e| Error::io("write", &job.dest, e))
                    });
                    if done.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        for message in done_rx {
            match message {
                Ok(written) => {
                    for _ in 0..written {
                        files += 1;
                        on_done();
                    }
                }
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    match first_error {
        Some(e) => Err(e),
        None => Ok(files),
    }
}

/// The reading side: sends small files to the workers, writes large ones.
fn read_archive(
    root: &Path,
    tar: &Path,
    compression: Compression,
    model: &Model,
    abort: &AtomicBool,
    jobs: &mpsc::SyncSender<Vec<Job>>,
    done: &mpsc::Sender<Result<usize, Error>>,
) -> Result<(), Error> {
    let corrupt = |e: io::Error| Error::CorruptTar {
        tar: tar.to_path_buf(),
        reason: e.to_string(),
    };
    let reader = compression
        .open(tar)
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
        let Some(Kind::File { mode, mtime }) = model.members.get(&rel) else {
            return Err(Error::CorruptTar {
                tar: tar.to_path_buf(),
                reason: format!("{raw} changed while unpacking"),
            });
        };
        let dest = root.join(&rel);
        if entry.size() > IN_MEMORY_LIMIT {
            write_file(&dest, *mode, *mtime, &mut entry).map_err(|e| e.into_error(&dest, tar))?;
            let _ = done.send(Ok(1));
            continue;
        }
        let mut data = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
        entry.read_to_end(&mut data).map_err(corrupt)?;
        batch_bytes += data.len();
        batch.push(Job {
            dest,
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
fn write_bytes(job: &Job) -> io::Result<()> {
    let mut file = File::create_new(&job.dest)?;
    file.write_all(&job.data)?;
    set_mode(&file, job.mode)?;
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(job.mtime))
}

enum WriteError {
    Read(io::Error),
    Write(&'static str, io::Error),
}

impl WriteError {
    fn into_error(self, dest: &Path, tar: &Path) -> Error {
        match self {
            WriteError::Read(e) => Error::CorruptTar {
                tar: tar.to_path_buf(),
                reason: e.to_string(),
            },
            WriteError::Write(action, e) => Error::io(action, dest, e),
        }
    }
}

fn write_file(dest: &Path, mode: u32, mtime: u64, from: &mut dyn Read) -> Result<(), WriteError> {
    let file = File::create_new(dest).map_err(|e| WriteError::Write("create", e))?;
    finish_file(file, mode, mtime, from)
}

fn finish_file(
    mut file: File,
    mode: u32,
    mtime: u64,
    from: &mut dyn Read,
) -> Result<(), WriteError> {
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
    set_mode(&file, mode).map_err(|e| WriteError::Write("set the mode of", e))?;
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(mtime))
        .map_err(|e| WriteError::Write("set the mtime of", e))
}

/// Gives a written file the tar's mode bits.
#[cfg(unix)]
fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
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

#[cfg(unix)]
fn symlink(text: &str, path: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(text, path)
}

/// Windows creates symlinks only with a privilege (developer mode or an
/// administrator), so a kept link becomes what needs none: a hard link to a
/// file (a copy where hard links fail), and for a directory a directory of
/// such links to its contents. The target exists by now (links come after
/// every file and directory).
#[cfg(windows)]
fn symlink(text: &str, path: &Path) -> io::Result<()> {
    link_or_copy(&path.parent().unwrap_or(path).join(text), path)
}

#[cfg(windows)]
fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    if fs::metadata(from)?.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            link_or_copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        fs::hard_link(from, to).or_else(|_| fs::copy(from, to).map(drop))
    }
}

/// Creates the hard links (`(link, source)`) and symlinks (`(link, text)`),
/// all site-packages-relative; `on_done` is called once per link.
///
/// Hard links come first, symlinks after them all: a kept symlink may point
/// at a hard link (`bin/amdclang -> ../lib/llvm/bin/amdclang`), and a crash
/// between the two must not leave a dangling symlink, which `pip uninstall`
/// does not remove (it skips paths that do not exist).
pub(crate) fn make_links(
    root: &Path,
    hard_links: &[(String, String)],
    symlinks: &[(String, String)],
    on_done: &mut dyn FnMut(),
) -> Result<Vec<Warning>, Error> {
    let mut warnings = in_parallel(hard_links, on_done, |link, source| {
        hard_link(root, link, source)
    })?;
    warnings.extend(in_parallel(symlinks, on_done, |link, text| {
        let path = root.join(link);
        symlink(text, &path).map_err(|e| Error::io("create symlink", &path, e))?;
        Ok(None)
    })?);
    // Threads finish in any order; report in path order.
    warnings.sort_by(|a, b| format!("{a}").cmp(&format!("{b}")));
    Ok(warnings)
}

/// Runs `make` over `jobs` on the writer threads; `on_done` is called once
/// per job made. Stops at the first error.
fn in_parallel(
    jobs: &[(String, String)],
    on_done: &mut dyn FnMut(),
    make: impl Fn(&str, &str) -> Result<Option<Warning>, Error> + Sync,
) -> Result<Vec<Warning>, Error> {
    let chunk = jobs.len().div_ceil(workers()).max(1);
    // Each worker reports once per `BATCH_FILES` links: (links made, warnings).
    let (done_tx, done_rx) = mpsc::channel::<Result<(usize, Vec<Warning>), Error>>();
    let abort = AtomicBool::new(false);
    let mut warnings = Vec::new();
    let mut first_error = None;
    std::thread::scope(|s| {
        for part in jobs.chunks(chunk) {
            let done = done_tx.clone();
            let abort = &abort;
            let make = &make;
            s.spawn(move || {
                for batch in part.chunks(BATCH_FILES) {
                    if abort.load(Ordering::Relaxed) {
                        return;
                    }
                    let result = batch.iter().try_fold(
                        (0, Vec::new()),
                        |(made, mut warnings), (link, other)| {
                            warnings.extend(make(link, other)?);
                            Ok((made + 1, warnings))
                        },
                    );
                    if done.send(result).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        for message in done_rx {
            match message {
                Ok((made, found)) => {
                    warnings.extend(found);
                    for _ in 0..made {
                        on_done();
                    }
                }
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    match first_error {
        Some(e) => Err(e),
        None => Ok(warnings),
    }
}

fn hard_link(root: &Path, link: &str, source: &str) -> Result<Option<Warning>, Error> {
    let link_path = root.join(link);
    let source_path = root.join(source);
    match fs::hard_link(&source_path, &link_path) {
        Ok(()) => Ok(None),
        Err(e) if can_copy_instead(&e) => {
            fs::copy(&source_path, &link_path).map_err(|e| Error::io("copy", &link_path, e))?;
            Ok(Some(Warning::Copied {
                path: link.to_owned(),
                reason: e.to_string(),
            }))
        }
        Err(e) => Err(Error::io("hard-link", &link_path, e)),
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
