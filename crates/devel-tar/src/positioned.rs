//! Reading the devel tar at explicit offsets. Several threads read the one
//! open tar at once (the scan, the digest, the writers), so none of them
//! may use or move the file's shared offset.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use fs_helpers::positioned::read_at;

/// A reader over `file` that keeps its own position: seeking only moves
/// that position, so skipping a member's data reads nothing.
#[derive(Debug)]
pub(crate) struct PositionedReader<'f> {
    file: &'f File,
    position: u64,
    /// The end of the furthest byte actually read.
    furthest: u64,
}

impl<'f> PositionedReader<'f> {
    /// Reads `file` from its start.
    pub(crate) fn new(file: &'f File) -> Self {
        Self {
            file,
            position: 0,
            furthest: 0,
        }
    }

    /// The end of the furthest byte read: a seek past the end of the file
    /// succeeds, so only this tells whether bytes were there.
    pub(crate) fn furthest(&self) -> u64 {
        self.furthest
    }
}

impl Read for PositionedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_at(self.file, buf, self.position)?;
        self.position += n as u64;
        if n > 0 {
            self.furthest = self.furthest.max(self.position);
        }
        Ok(n)
    }
}

impl Seek for PositionedReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(by) => self.position.checked_add_signed(by),
            SeekFrom::End(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the tar is read from its start",
                ));
            }
        };
        self.position = target
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn seeks_move_only_the_own_position_and_furthest_counts_bytes_read() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"0123456789").unwrap();
        let mut reader = PositionedReader::new(&file);
        let mut two = [0; 2];
        reader.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"01");
        reader.seek(SeekFrom::Current(5)).unwrap();
        reader.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"78");
        assert_eq!(reader.furthest(), 9);
        // Past the end: the seek succeeds, nothing is read, furthest stays.
        reader.seek(SeekFrom::Start(100)).unwrap();
        assert_eq!(reader.read(&mut two).unwrap(), 0);
        assert_eq!(reader.furthest(), 9);
        assert!(reader.seek(SeekFrom::Current(-101)).is_err());
        // Another reader of the same file starts at 0 whatever this one did.
        let mut other = PositionedReader::new(&file);
        other.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"01");
    }
}
