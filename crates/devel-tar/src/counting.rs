//! A reader that counts the bytes it yields: the scan checks that the tar
//! stream reached its end marker, the writer that a source gave exactly the
//! size it announced.

use std::io::{self, Read};

/// `inner`, counting the bytes read through it.
pub(crate) struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R> CountingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self { inner, count: 0 }
    }

    /// The bytes read so far.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}
