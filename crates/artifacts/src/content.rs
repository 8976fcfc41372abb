//! Reading the bytes of many sources: each archive is decompressed once.
//!
//! Directory files are independent units; all wanted members of one archive
//! form one unit, read front to back in a single decompression pass. Units
//! run in parallel on the rayon pool, so a pipeline that reads every source
//! once pays one decompression per archive, spread over the cores, and
//! holds at most one member per unit in memory (and only when several
//! entries share the same data, i.e. hard links).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::PathBuf;

use rayon::prelude::*;

use crate::artifact::{ArchiveRef, EntrySource};
use crate::{Error, Result};

/// Calls `f(item, reader)` once for every item, with a reader over exactly
/// the bytes of its source; in parallel across files and archives, in
/// offset order within one archive. Stops at the first error (the earliest
/// item's error when several units fail).
///
/// ```no_run
/// # fn main() -> Result<(), artifacts::Error> {
/// use std::io::Read;
/// use artifacts::{read_sources, EntrySource};
/// let items = vec![("a", EntrySource::file("a.txt")?)];
/// let refs: Vec<(&str, &EntrySource)> = items.iter().map(|(k, s)| (*k, s)).collect();
/// read_sources(&refs, |_name, r| {
///     let mut v = Vec::new();
///     r.read_to_end(&mut v).map_err(|e| artifacts::Error::Io { path: "a.txt".into(), source: e })?;
///     Ok::<(), artifacts::Error>(())
/// })?;
/// # Ok(()) }
/// ```
pub fn read_sources<T, E, F>(items: &[(T, &EntrySource)], f: F) -> Result<(), E>
where
    T: Sync,
    E: From<Error> + Send,
    F: Fn(&T, &mut dyn Read) -> Result<(), E> + Sync,
{
    let units = plan_units(items);
    let results: Vec<Result<(), (usize, E)>> = units
        .par_iter()
        .map(|unit| match unit {
            &Unit::File(i) => read_file(items, i, &f).map_err(|e| (i, e)),
            Unit::Archive(archive, wanted) => read_archive(items, archive, wanted, &f),
        })
        .collect();
    let first_error = results
        .into_iter()
        .filter_map(Result::err)
        .min_by_key(|(i, _)| *i);
    match first_error {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Wanted members of one archive, keyed by `(offset, size)`.
type Wanted = BTreeMap<(u64, u64), Vec<usize>>;

enum Unit<'a> {
    File(usize),
    /// The archive and `(offset, size, item indices)` sorted by offset.
    Archive(&'a ArchiveRef, Vec<(u64, u64, Vec<usize>)>),
}

fn plan_units<'a, T>(items: &[(T, &'a EntrySource)]) -> Vec<Unit<'a>> {
    let mut units = Vec::new();
    let mut archives: BTreeMap<PathBuf, (&'a ArchiveRef, Wanted)> = BTreeMap::new();
    for (i, (_, source)) in items.iter().enumerate() {
        match source {
            EntrySource::File { .. } => units.push(Unit::File(i)),
            EntrySource::ArchiveMember {
                archive,
                offset,
                size,
            } => {
                archives
                    .entry(archive.path.clone())
                    .or_insert_with(|| (archive, BTreeMap::new()))
                    .1
                    .entry((*offset, *size))
                    .or_default()
                    .push(i);
            }
        }
    }
    // Archives first: they are the long units, so start them early.
    let mut out: Vec<Unit> = archives
        .into_values()
        .map(|(a, wanted)| {
            Unit::Archive(a, wanted.into_iter().map(|((o, s), v)| (o, s, v)).collect())
        })
        .collect();
    out.append(&mut units);
    out
}

fn read_file<T, E, F>(items: &[(T, &EntrySource)], i: usize, f: &F) -> Result<(), E>
where
    E: From<Error>,
    F: Fn(&T, &mut dyn Read) -> Result<(), E>,
{
    let (item, source) = &items[i];
    let mut reader = source.open()?;
    f(item, &mut reader)
}

fn read_archive<T, E, F>(
    items: &[(T, &EntrySource)],
    archive: &ArchiveRef,
    wanted: &[(u64, u64, Vec<usize>)],
    f: &F,
) -> Result<(), (usize, E)>
where
    E: From<Error>,
    F: Fn(&T, &mut dyn Read) -> Result<(), E>,
{
    let first = wanted.first().map_or(0, |w| w.2[0]);
    let io = |i: usize, e: io::Error| (i, E::from(crate::archive::read_error(&archive.path, e)));
    let mut stream = crate::archive::decoder(archive).map_err(|e| (first, E::from(e)))?;
    let mut position = 0u64;
    for (offset, size, indices) in wanted {
        let i = indices[0];
        let gap = offset.checked_sub(position).ok_or_else(|| {
            (
                i,
                E::from(Error::BadArchive {
                    archive: archive.path.clone(),
                    reason: "members overlap in the index; re-open the artifact directory".into(),
                }),
            )
        })?;
        skip(&mut stream, gap).map_err(|e| io(i, e))?;
        if let [single] = indices.as_slice() {
            let mut member = (&mut stream).take(*size);
            f(&items[*single].0, &mut member).map_err(|e| (*single, e))?;
            // The callback may stop early; the stream must reach the end.
            io::copy(&mut member, &mut io::sink()).map_err(|e| io(i, e))?;
        } else {
            let mut bytes = Vec::with_capacity(usize::try_from(*size).unwrap_or(0));
            (&mut stream)
                .take(*size)
                .read_to_end(&mut bytes)
                .map_err(|e| io(i, e))?;
            for &j in indices {
                f(&items[j].0, &mut bytes.as_slice()).map_err(|e| (j, e))?;
            }
        }
        position = offset + size;
    }
    Ok(())
}

fn skip(stream: &mut dyn Read, n: u64) -> io::Result<()> {
    let skipped = io::copy(&mut stream.take(n), &mut io::sink())?;
    if skipped == n {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "archive ended before a member's data",
        ))
    }
}

/// Digests of many sources (SHA-256), read with [`read_sources`].
pub(crate) fn digests(sources: &[&EntrySource]) -> Result<Vec<[u8; 32]>> {
    use sha2::Digest;
    let items: Vec<(usize, &EntrySource)> = sources.iter().copied().enumerate().collect();
    let out = std::sync::Mutex::new(vec![[0u8; 32]; sources.len()]);
    read_sources(&items, |&i, r| {
        let mut hasher = sha2::Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = r
                .read(&mut buf)
                .map_err(|e| Error::io(sources[i].path(), e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        out.lock().expect("no panics while holding the lock")[i] = hasher.finalize().into();
        Ok::<(), Error>(())
    })?;
    Ok(out.into_inner().expect("no panics while holding the lock"))
}
