//! [`FileTree`]: what the checker needs to know about a tree of files.

use elf_surgery::{ElfFile, Imports};

use crate::Error;
use crate::report::Unreadable;

/// A tree of files laid out like one site-packages: which relative paths
/// exist, and the ELF facts of its files.
///
/// Paths are relative to the root, `/`-separated and normalised (no `.`,
/// `..` or empty segments).
pub trait FileTree: Sync {
    /// Whether `path` names a file of the tree (a link to a file counts).
    fn contains_file(&self, path: &str) -> bool;

    /// Parses every file for which `select(path)` holds and whose bytes
    /// start with the ELF magic, reading as much as `depth` asks for. Files that
    /// are ELF but cannot be parsed are listed in [`Scan::unreadable`];
    /// only a tree that cannot be read at all is an error.
    fn scan(&self, select: &(dyn Fn(&str) -> bool + Sync), depth: ScanDepth)
    -> Result<Scan, Error>;
}

/// How much of each ELF file a scan reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScanDepth {
    /// The dynamic facts links are resolved with (NEEDED, search paths,
    /// interpreter): a bounded read of headers and tables.
    #[default]
    Links,
    /// Also what the file imports (symbol versions and undefined
    /// symbols), for policy checks: reads the dynamic symbol table too.
    LinksAndImports,
}

/// The ELF files of a tree.
#[derive(Debug, Default)]
pub struct Scan {
    /// Parsed ELF files, sorted by path (then origin).
    pub files: Vec<TreeElf>,
    /// ELF files whose structures could not be parsed.
    pub unreadable: Vec<Unreadable>,
}

/// One ELF file of a tree.
#[derive(Debug, Clone)]
pub struct TreeElf {
    /// Where it is in the tree.
    pub path: String,
    /// Where it comes from when the tree is virtual (a wheel's file name).
    pub origin: Option<String>,
    /// Its facts.
    pub elf: ElfFile,
    /// What it imports, when the scan read it ([`ScanDepth::LinksAndImports`]).
    pub imports: Option<Imports>,
}

pub(crate) const ELF_MAGIC: [u8; 4] = *b"\x7fELF";

/// Parses one ELF file and, when asked, what it imports.
pub(crate) fn read_elf<R: std::io::Read + std::io::Seek>(
    source: &mut R,
    depth: ScanDepth,
) -> elf_surgery::Result<(ElfFile, Option<Imports>)> {
    let elf = ElfFile::parse(source)?;
    let imports = match depth {
        ScanDepth::Links => None,
        ScanDepth::LinksAndImports => Some(elf.read_imports(source)?),
    };
    Ok((elf, imports))
}
