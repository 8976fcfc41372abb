//! [`Edit`]: an edit as data — patches over the source plus appended bytes —
//! and the two ways to apply it: a streaming [`EditReader`] and
//! [`Edit::write_atomically`]. The unchanged bulk of the file is streamed
//! from the source; only edited regions live in memory.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use fs_helpers::atomic_write::AtomicFile;

use crate::error::Result;
use crate::source::{ReadAt, Source, Stamp};

/// Bytes that replace `bytes.len()` bytes of the source at `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    offset: u64,
    bytes: Vec<u8>,
}

impl Patch {
    /// Offset in the source (and in the output: patches never move bytes).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The replacement bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn end(&self) -> u64 {
        self.offset + self.bytes.len() as u64
    }
}

/// A piece of the data appended after the end of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Appended {
    /// Zero bytes (alignment padding).
    Zeros(u64),
    /// New bytes.
    Bytes(Vec<u8>),
    /// A copy of `len` source bytes from `offset` (e.g. the old string table).
    Source {
        /// Where the copied range starts in the source.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
}

impl Appended {
    fn len(&self) -> u64 {
        match self {
            Self::Zeros(n) | Self::Source { len: n, .. } => *n,
            Self::Bytes(b) => b.len() as u64,
        }
    }
}

/// Why an edit leaves the file as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unchanged {
    /// The file already has exactly the requested search path and tag.
    AlreadyDone,
    /// A static executable (no dynamic section) needs no search path.
    NoDynamicSection,
}

/// A verified edit of one file: patches inside the source, data appended
/// after it, and the output length known in advance.
///
/// Every `Edit` this crate hands out has passed verification on the edited
/// view of the file; applying it to the same source yields those bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The source this edit was planned for, checked when it is applied.
    source: Stamp,
    patches: Vec<Patch>,
    appended: Vec<Appended>,
    unchanged: Option<Unchanged>,
}

/// One contiguous run of the output.
enum Piece<'a> {
    Source { offset: u64, len: u64 },
    Bytes(&'a [u8]),
    Zeros(u64),
}

impl Piece<'_> {
    fn len(&self) -> u64 {
        match self {
            Self::Source { len, .. } | Self::Zeros(len) => *len,
            Self::Bytes(b) => b.len() as u64,
        }
    }
}

impl Edit {
    /// The identity edit (the output is the source).
    pub(crate) fn unchanged(source: Stamp, why: Unchanged) -> Self {
        Self {
            source,
            patches: Vec::new(),
            appended: Vec::new(),
            unchanged: Some(why),
        }
    }

    /// Builds an edit; patches must lie inside the source and not overlap.
    pub(crate) fn new(
        source: Stamp,
        mut patches: Vec<Patch>,
        appended: Vec<Appended>,
    ) -> Result<Self> {
        patches.retain(|p| !p.bytes.is_empty());
        patches.sort_by_key(|p| p.offset);
        for pair in patches.windows(2) {
            if pair[0].end() > pair[1].offset {
                return Err(crate::error::unsupported(format!(
                    "structures to rewrite overlap at {:#x}",
                    pair[1].offset
                )));
            }
        }
        if patches.last().is_some_and(|p| p.end() > source.len()) {
            return Err(crate::error::truncated("a structure to rewrite"));
        }
        Ok(Self {
            source,
            patches,
            appended,
            unchanged: None,
        })
    }

    pub(crate) fn patch(offset: u64, bytes: Vec<u8>) -> Patch {
        Patch { offset, bytes }
    }

    /// Length of the source this edit was planned for.
    pub fn source_len(&self) -> u64 {
        self.source.len()
    }

    /// Length of the edited file.
    pub fn output_len(&self) -> u64 {
        self.source.len() + self.appended.iter().map(Appended::len).sum::<u64>()
    }

    /// Replacements inside the source, sorted by offset, non-overlapping.
    pub fn patches(&self) -> &[Patch] {
        &self.patches
    }

    /// What follows the source's last byte, in order.
    pub fn appended(&self) -> &[Appended] {
        &self.appended
    }

    /// `Some` when the output equals the source, with the reason.
    pub fn unchanged_reason(&self) -> Option<Unchanged> {
        self.unchanged
    }

    /// True when applying this edit changes no byte.
    pub fn is_identity(&self) -> bool {
        self.patches.is_empty() && self.appended.is_empty()
    }

    fn pieces(&self) -> Vec<Piece<'_>> {
        let mut out = Vec::with_capacity(self.patches.len() * 2 + self.appended.len() + 1);
        let mut pos = 0;
        for p in &self.patches {
            if p.offset > pos {
                out.push(Piece::Source {
                    offset: pos,
                    len: p.offset - pos,
                });
            }
            out.push(Piece::Bytes(&p.bytes));
            pos = p.end();
        }
        if self.source.len() > pos {
            out.push(Piece::Source {
                offset: pos,
                len: self.source.len() - pos,
            });
        }
        for a in &self.appended {
            out.push(match a {
                Appended::Zeros(n) => Piece::Zeros(*n),
                Appended::Bytes(b) => Piece::Bytes(b),
                Appended::Source { offset, len } => Piece::Source {
                    offset: *offset,
                    len: *len,
                },
            });
        }
        out.retain(|p| p.len() > 0);
        out
    }

    /// A reader producing the edited file from `source`, which must be the
    /// file this edit was planned for (its length, and its bytes wherever
    /// the parse read, are checked).
    pub fn reader<R: Read + Seek>(&self, mut source: R) -> Result<EditReader<R>> {
        self.source.check(&mut Source::new(&mut source)?)?;
        let mut start = 0;
        let pieces = self
            .pieces()
            .into_iter()
            .map(|p| {
                let owned = match p {
                    Piece::Source { offset, len } => OwnedPiece::Source { offset, len },
                    Piece::Bytes(b) => OwnedPiece::Bytes(b.to_vec()),
                    Piece::Zeros(n) => OwnedPiece::Zeros(n),
                };
                let s = start;
                start += owned.len();
                (s, owned)
            })
            .collect();
        Ok(EditReader {
            source,
            pieces,
            index: 0,
            within: 0,
            source_pos: None,
        })
    }

    /// Writes the edited file to `dest` atomically
    /// (`fs_helpers::atomic_write`: a temporary file beside `dest`,
    /// renamed over it once complete, removed on error). On error nothing
    /// appears at `dest`. `dest` may be the source's own path.
    pub fn write_atomically<R: Read + Seek>(
        &self,
        source: &mut R,
        dest: &Path,
        permissions: fs::Permissions,
    ) -> Result<()> {
        self.write_atomically_inner(source, dest, permissions)
            .map_err(|e| e.at(dest))
    }

    fn write_atomically_inner<R: Read + Seek>(
        &self,
        source: &mut R,
        dest: &Path,
        permissions: fs::Permissions,
    ) -> Result<()> {
        self.source.check(&mut Source::new(source)?)?;
        let temp = AtomicFile::create(dest)?;
        {
            // Written through the `File` itself, so `io::copy` can hand the
            // unchanged ranges to the kernel (`copy_file_range`).
            let mut file = temp.file();
            let out = &mut file;
            for piece in self.pieces() {
                match piece {
                    Piece::Source { offset, len } => {
                        source.seek(SeekFrom::Start(offset))?;
                        let copied = io::copy(&mut (&mut *source).take(len), out)?;
                        if copied != len {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "the source shrank while it was being copied",
                            )
                            .into());
                        }
                    }
                    Piece::Bytes(b) => out.write_all(b)?,
                    Piece::Zeros(n) => io::copy(&mut io::repeat(0).take(n), out).map(drop)?,
                }
            }
            out.flush()?;
        }
        temp.file().set_permissions(permissions)?;
        temp.commit()?;
        Ok(())
    }
}

enum OwnedPiece {
    Source { offset: u64, len: u64 },
    Bytes(Vec<u8>),
    Zeros(u64),
}

impl OwnedPiece {
    fn len(&self) -> u64 {
        match self {
            Self::Source { len, .. } | Self::Zeros(len) => *len,
            Self::Bytes(b) => b.len() as u64,
        }
    }
}

/// Streams an edited file: unchanged ranges come straight from the source.
///
/// Produced by [`Edit::reader`]; yields exactly [`Edit::output_len`] bytes.
pub struct EditReader<R> {
    source: R,
    /// (output offset, piece)
    pieces: Vec<(u64, OwnedPiece)>,
    index: usize,
    within: u64,
    source_pos: Option<u64>,
}

impl<R> std::fmt::Debug for EditReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditReader")
            .field("pieces", &self.pieces.len())
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<R: Read + Seek> Read for EditReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some((_, piece)) = self.pieces.get(self.index) {
            let left = piece.len() - self.within;
            if left == 0 {
                self.index += 1;
                self.within = 0;
                continue;
            }
            if buf.is_empty() {
                return Ok(0);
            }
            let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            let n = match piece {
                OwnedPiece::Bytes(b) => {
                    let at = self.within as usize;
                    buf[..n].copy_from_slice(&b[at..at + n]);
                    n
                }
                OwnedPiece::Zeros(_) => {
                    buf[..n].fill(0);
                    n
                }
                OwnedPiece::Source { offset, .. } => {
                    let at = offset + self.within;
                    if self.source_pos != Some(at) {
                        self.source.seek(SeekFrom::Start(at))?;
                    }
                    let got = self.source.read(&mut buf[..n])?;
                    if got == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the source ended early while streaming an edited ELF file",
                        ));
                    }
                    self.source_pos = Some(at + got as u64);
                    got
                }
            };
            self.within += n as u64;
            return Ok(n);
        }
        Ok(0)
    }
}

/// The edited file as seen through the edit, without writing it: what
/// verification parses.
pub(crate) struct EditView<'a, S> {
    source: &'a mut S,
    pieces: Vec<(u64, Piece<'a>)>,
    len: u64,
}

impl<'a, S: ReadAt> EditView<'a, S> {
    pub(crate) fn new(edit: &'a Edit, source: &'a mut S) -> Self {
        let mut start = 0;
        let pieces = edit
            .pieces()
            .into_iter()
            .map(|p| {
                let s = start;
                start += p.len();
                (s, p)
            })
            .collect();
        Self {
            source,
            pieces,
            len: start,
        }
    }
}

impl<S: ReadAt> ReadAt for EditView<'_, S> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut filled = 0usize;
        let first = self.pieces.partition_point(|(s, p)| s + p.len() <= offset);
        for (start, piece) in &self.pieces[first..] {
            if filled == buf.len() {
                break;
            }
            let at = offset + filled as u64;
            let within = at - start;
            let n = usize::try_from(piece.len() - within)
                .unwrap_or(usize::MAX)
                .min(buf.len() - filled);
            let dst = &mut buf[filled..filled + n];
            match piece {
                Piece::Source { offset: src, .. } => {
                    self.source.read_exact_at(src + within, dst)?;
                }
                Piece::Bytes(b) => {
                    let w = within as usize;
                    dst.copy_from_slice(&b[w..w + n]);
                }
                Piece::Zeros(_) => dst.fill(0),
            }
            filled += n;
        }
        if filled == buf.len() {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end of the edited view",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::error::ErrorKind;

    fn sample() -> Edit {
        Edit::new(
            Stamp::of_len(10),
            vec![
                Edit::patch(8, b"XY".to_vec()),
                Edit::patch(2, b"ab".to_vec()),
            ],
            vec![
                Appended::Zeros(2),
                Appended::Source { offset: 0, len: 3 },
                Appended::Bytes(b"!".to_vec()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn reader_applies_patches_and_appends() {
        let edit = sample();
        let source = b"0123456789".to_vec();
        let mut out = Vec::new();
        // Tiny reads exercise piece boundaries.
        let mut reader = edit.reader(Cursor::new(&source)).unwrap();
        let mut buf = [0u8; 3];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, b"01ab4567XY\x00\x00012!");
        assert_eq!(out.len() as u64, edit.output_len());
    }

    #[test]
    fn view_reads_across_pieces() {
        let edit = sample();
        let mut source = b"0123456789".to_vec();
        let mut cursor = Cursor::new(&mut source);
        let mut src = crate::source::Source::new(&mut cursor).unwrap();
        let mut view = EditView::new(&edit, &mut src);
        let mut buf = [0u8; 6];
        view.read_exact_at(7, &mut buf).unwrap();
        assert_eq!(&buf, b"7XY\0\x000");
        assert!(view.read_exact_at(14, &mut buf).is_err());
    }

    #[test]
    fn overlapping_patches_and_wrong_sources_are_errors() {
        let overlap = Edit::new(
            Stamp::of_len(10),
            vec![Edit::patch(1, vec![0; 4]), Edit::patch(3, vec![1])],
            vec![],
        );
        assert!(overlap.is_err());
        let past_end = Edit::new(Stamp::of_len(4), vec![Edit::patch(3, vec![0; 2])], vec![]);
        assert!(past_end.is_err());
        let err = sample().reader(Cursor::new(vec![0u8; 9])).unwrap_err();
        assert!(matches!(
            err.kind(),
            ErrorKind::SourceChanged {
                expected: 10,
                actual: 9
            }
        ));
    }
}
