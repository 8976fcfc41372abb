//! [`Imports`]: what a file takes from other objects at run time. The
//! symbol versions it needs (`.gnu.version_r`, found the way the loader
//! finds it, through `DT_VERNEED`/`DT_VERNEEDNUM`) and its undefined
//! dynamic symbols (`.dynsym`) with the version each binds to
//! (`.gnu.version`, `DT_VERSYM`). A manylinux policy limits exactly these.

use std::collections::BTreeMap;
use std::io::{Read, Seek};

use object::elf;
use object::read::elf::Sym;
use object::{Endianness as ByteOrder, U32};

use crate::error::{Result, malformed};
use crate::file::ElfFile;
use crate::shape::{Decoder, Dynamic, ElfClass, Layout, vaddr_to_offset, views};
use crate::source::{ReadAt, Source};

/// More libraries than any real file names; a larger count is a lie.
const MAX_LIBRARIES: u64 = 1 << 12;
/// `Elf32_Verneed`/`Elf64_Verneed` and the `Vernaux` entries are 16 bytes in both classes.
const VERNEED_SIZE: u64 = 16;
const VERNAUX_SIZE: u64 = 16;
/// Symbols read per bounded chunk.
const SYMBOL_CHUNK: u64 = 4096;

/// What a file imports: versions it needs per library, and its undefined
/// dynamic symbols.
///
/// ```no_run
/// use std::fs::File;
/// let mut file = File::open("build/lib/libamdhip64.so.7")?;
/// let elf = elf_surgery::ElfFile::parse(&mut file)?;
/// for need in &elf.read_imports(&mut file)?.needs {
///     println!("{}: {}", need.library, need.versions.join(" ")); // "libc.so.6: GLIBC_2.2.5 GLIBC_2.34"
/// }
/// # Ok::<(), elf_surgery::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imports {
    /// `.gnu.version_r`, in file order: one entry per library.
    pub needs: Vec<VersionNeed>,
    /// Undefined symbols of `.dynsym`, in table order.
    pub symbols: Vec<ImportedSymbol>,
    /// The first function the file defines and exports (global, default
    /// visibility), in table order: a symbol a load check can look up.
    pub first_export: Option<String>,
}

/// The versions a file needs from one library (one `Verneed` entry and
/// its `Vernaux` chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionNeed {
    /// The library as the linker recorded it: its SONAME (`libc.so.6`).
    pub library: String,
    /// Version names, in file order (`GLIBC_2.2.5`, `GLIBC_2.34`).
    pub versions: Vec<String>,
}

/// An undefined symbol of the dynamic symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedSymbol {
    /// The symbol name (`pthread_create`, `_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE`).
    pub name: String,
    /// Bound weakly (`STB_WEAK`): the file loads without it.
    pub weak: bool,
    /// The version it binds to; `None` for an unversioned reference.
    pub version: Option<SymbolVersion>,
}

/// One needed version: which library provides it, and its name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymbolVersion {
    /// The library (`libc.so.6`).
    pub library: String,
    /// The version name (`GLIBC_2.34`).
    pub name: String,
}

impl ElfFile {
    /// Reads what the file imports from `source` (the same file it was
    /// parsed from). A file without a dynamic section imports nothing; a
    /// version or symbol table outside the file or contradicting itself is
    /// an error, like any other malformed structure.
    pub fn read_imports<R: Read + Seek>(&self, source: &mut R) -> Result<Imports> {
        let Some(layout) = &self.layout else {
            return Ok(Imports::default());
        };
        let mut src = Source::new(source)?;
        self.check_source(&mut src)?;
        read(&mut src, layout)
    }
}

fn read(src: &mut impl ReadAt, layout: &Layout) -> Result<Imports> {
    let Some(dynamic) = &layout.dynamic else {
        return Ok(Imports::default());
    };
    // One read of the whole string table: names are many and short.
    let strings = match &dynamic.strtab {
        Some(t) => src.read_vec(t.offset, t.size, "dynamic string table")?,
        None => Vec::new(),
    };
    let strings = Strings(&strings);
    let (needs, by_index) = version_needs(src, layout, dynamic, &strings)?;
    let (symbols, first_export) =
        undefined_symbols(src, layout, dynamic, &strings, &needs, &by_index)?;
    Ok(Imports {
        needs,
        symbols,
        first_export,
    })
}

/// The dynamic string table, in memory.
struct Strings<'a>(&'a [u8]);

impl Strings<'_> {
    fn get(&self, index: u32, what: &str) -> Result<String> {
        let rest = usize::try_from(index)
            .ok()
            .and_then(|i| self.0.get(i..))
            .filter(|rest| !rest.is_empty())
            .ok_or_else(|| {
                malformed(format!(
                    "{what} names string {index:#x}, outside the dynamic string table ({:#x} bytes)",
                    self.0.len()
                ))
            })?;
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
            malformed(format!(
                "{what} names string {index:#x}, which runs past the end of the dynamic string table"
            ))
        })?;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }
}

/// `.gnu.version` index (a `vna_other`) → (library, version) positions in
/// the needs.
type VersionIndex = BTreeMap<u16, (usize, usize)>;

fn version_needs(
    src: &mut impl ReadAt,
    layout: &Layout,
    dynamic: &Dynamic,
    strings: &Strings<'_>,
) -> Result<(Vec<VersionNeed>, VersionIndex)> {
    let e = layout.decoder.byte_order();
    let (addr, count) = match (
        dynamic.value(elf::DT_VERNEED),
        dynamic.value(elf::DT_VERNEEDNUM),
    ) {
        (None, None) => return Ok((Vec::new(), VersionIndex::new())),
        (Some(addr), Some(count)) => (addr, count),
        _ => {
            return Err(malformed(
                "DT_VERNEED and DT_VERNEEDNUM must appear together",
            ));
        }
    };
    if count > MAX_LIBRARIES {
        return Err(malformed(format!("DT_VERNEEDNUM claims {count} entries")));
    }
    let mut at = vaddr_to_offset(&layout.segments, addr, VERNEED_SIZE).ok_or_else(|| {
        malformed(format!(
            "DT_VERNEED {addr:#x} is not inside a loaded segment"
        ))
    })?;
    let what = ".gnu.version_r";
    let mut needs = Vec::new();
    let mut by_index = VersionIndex::new();
    for n in 0..count {
        let bytes = src.read_vec(at, VERNEED_SIZE, what)?;
        let entry = &views::<elf::Verneed<ByteOrder>>(&bytes)[0];
        let version = entry.vn_version.get(e);
        if version != elf::VER_NEED_CURRENT {
            return Err(malformed(format!(
                "{what} entry {n} has version {version}, not {}",
                elf::VER_NEED_CURRENT
            )));
        }
        let aux_count = entry.vn_cnt.get(e);
        let library = strings.get(entry.vn_file.get(e), what)?;
        let mut versions = Vec::new();
        let mut aux_at = checked_offset(at, entry.vn_aux.get(e), what)?;
        for a in 0..aux_count {
            let bytes = src.read_vec(aux_at, VERNAUX_SIZE, what)?;
            let aux = &views::<elf::Vernaux<ByteOrder>>(&bytes)[0];
            let index = aux.vna_other.get(e) & elf::VERSYM_VERSION;
            by_index.insert(index, (needs.len(), versions.len()));
            versions.push(strings.get(aux.vna_name.get(e), what)?);
            match aux.vna_next.get(e) {
                0 if a + 1 < aux_count => {
                    return Err(malformed(format!(
                        "{what} entry {n} ({library}) ends after {} of its {aux_count} versions",
                        a + 1
                    )));
                }
                0 => break,
                next => aux_at = checked_offset(aux_at, next, what)?,
            }
        }
        needs.push(VersionNeed { library, versions });
        match entry.vn_next.get(e) {
            0 if n + 1 < count => {
                return Err(malformed(format!(
                    "{what} ends after {} of the {count} entries DT_VERNEEDNUM names",
                    n + 1
                )));
            }
            0 => break,
            next => at = checked_offset(at, next, what)?,
        }
    }
    Ok((needs, by_index))
}

/// The fields of a dynamic symbol the import scan reads.
struct SymbolFields {
    name: u32,
    bind: u8,
    kind: u8,
    visibility: u8,
    shndx: u16,
}

/// The symbols of a chunk of `.dynsym` read whole.
fn symbols(d: Decoder, table: &[u8]) -> Vec<SymbolFields> {
    fn fields<S: Sym<Endian = ByteOrder>>(table: &[S], e: ByteOrder) -> Vec<SymbolFields> {
        table
            .iter()
            .map(|s| SymbolFields {
                name: s.st_name(e),
                bind: s.st_bind(),
                kind: s.st_type(),
                visibility: s.st_visibility(),
                shndx: s.st_shndx(e),
            })
            .collect()
    }
    let e = d.byte_order();
    match d.class {
        ElfClass::Elf32 => fields(views::<elf::Sym32<ByteOrder>>(table), e),
        ElfClass::Elf64 => fields(views::<elf::Sym64<ByteOrder>>(table), e),
    }
}

fn checked_offset(base: u64, delta: u32, what: &str) -> Result<u64> {
    base.checked_add(u64::from(delta))
        .ok_or_else(|| malformed(format!("{what}: offset overflows")))
}

fn undefined_symbols(
    src: &mut impl ReadAt,
    layout: &Layout,
    dynamic: &Dynamic,
    strings: &Strings<'_>,
    needs: &[VersionNeed],
    by_index: &VersionIndex,
) -> Result<(Vec<ImportedSymbol>, Option<String>)> {
    let d = layout.decoder;
    let Some(addr) = dynamic.value(elf::DT_SYMTAB) else {
        return Ok((Vec::new(), None));
    };
    let entsize = d.sym_size() as u64;
    if let Some(declared) = dynamic.value(elf::DT_SYMENT)
        && declared != entsize
    {
        return Err(malformed(format!(
            "DT_SYMENT is {declared}, not the {entsize} bytes of a symbol"
        )));
    }
    let count = symbol_count(src, layout, dynamic, addr)?;
    if count == 0 {
        return Ok((Vec::new(), None));
    }
    let span = |n: u64, size: u64, what: &str| {
        n.checked_mul(size)
            .ok_or_else(|| malformed(format!("{what} claims {n} entries")))
    };
    let table_at = vaddr_to_offset(&layout.segments, addr, span(count, entsize, "DT_SYMTAB")?)
        .ok_or_else(|| {
            malformed(format!(
                "DT_SYMTAB {addr:#x} ({count} symbols) is not inside a loaded segment"
            ))
        })?;
    let versym_at = match dynamic.value(elf::DT_VERSYM) {
        Some(vaddr) => Some(
            vaddr_to_offset(&layout.segments, vaddr, span(count, 2, "DT_VERSYM")?).ok_or_else(
                || {
                    malformed(format!(
                        "DT_VERSYM {vaddr:#x} ({count} entries) is not inside a loaded segment"
                    ))
                },
            )?,
        ),
        None => None,
    };
    let what = ".dynsym";
    let mut out = Vec::new();
    let mut first_export = None;
    let mut first = 0;
    while first < count {
        let n = SYMBOL_CHUNK.min(count - first);
        let table = src.read_vec(table_at.saturating_add(first * entsize), n * entsize, what)?;
        let versym = match versym_at {
            Some(at) => Some(src.read_vec(at.saturating_add(first * 2), n * 2, ".gnu.version")?),
            None => None,
        };
        let versym = versym.as_deref().map(views::<elf::Versym<ByteOrder>>);
        for (i, sym) in symbols(d, &table).into_iter().enumerate() {
            // Entry 0 is the reserved null symbol.
            if first == 0 && i == 0 {
                continue;
            }
            if sym.name == 0 {
                continue;
            }
            if sym.shndx != elf::SHN_UNDEF {
                let exported = sym.bind == elf::STB_GLOBAL
                    && sym.kind == elf::STT_FUNC
                    && sym.visibility == elf::STV_DEFAULT;
                if exported && first_export.is_none() {
                    first_export = Some(strings.get(sym.name, what)?);
                }
                continue;
            }
            let version = versym
                .map(|v| v[i].0.get(d.byte_order()) & elf::VERSYM_VERSION)
                .and_then(|index| by_index.get(&index))
                .map(|&(library, version)| SymbolVersion {
                    library: needs[library].library.clone(),
                    name: needs[library].versions[version].clone(),
                });
            out.push(ImportedSymbol {
                name: strings.get(sym.name, what)?,
                weak: sym.bind == elf::STB_WEAK,
                version,
            });
        }
        first += n;
    }
    Ok((out, first_export))
}

/// How many entries `.dynsym` has: its section header says so exactly;
/// without section headers, the hash table the loader uses.
fn symbol_count(
    src: &mut impl ReadAt,
    layout: &Layout,
    dynamic: &Dynamic,
    addr: u64,
) -> Result<u64> {
    let entsize = layout.decoder.sym_size() as u64;
    if let Some(section) = layout
        .sections
        .iter()
        .find(|s| s.sh_type == elf::SHT_DYNSYM && s.addr == addr)
    {
        return Ok(section.size / entsize);
    }
    if let Some(hash) = dynamic.value(elf::DT_HASH) {
        // nbucket, nchain: nchain is the number of symbols.
        let at = table_offset(layout, hash, 8, "DT_HASH")?;
        let bytes = src.read_vec(at, 8, "DT_HASH table")?;
        let header = &views::<elf::HashHeader<ByteOrder>>(&bytes)[0];
        return Ok(u64::from(
            header.chain_count.get(layout.decoder.byte_order()),
        ));
    }
    if let Some(gnu_hash) = dynamic.value(elf::DT_GNU_HASH) {
        return gnu_hash_symbol_count(src, layout, gnu_hash);
    }
    Ok(0)
}

fn table_offset(layout: &Layout, vaddr: u64, len: u64, what: &str) -> Result<u64> {
    vaddr_to_offset(&layout.segments, vaddr, len)
        .ok_or_else(|| malformed(format!("{what} {vaddr:#x} is not inside a loaded segment")))
}

/// The symbol count implied by a GNU hash table: one past the last symbol
/// of the highest bucket's chain (chains end with bit 0 set).
fn gnu_hash_symbol_count(src: &mut impl ReadAt, layout: &Layout, vaddr: u64) -> Result<u64> {
    let d = layout.decoder;
    let e = d.byte_order();
    let what = "DT_GNU_HASH table";
    let at = table_offset(layout, vaddr, 16, "DT_GNU_HASH")?;
    let bytes = src.read_vec(at, 16, what)?;
    let header = &views::<elf::GnuHashHeader<ByteOrder>>(&bytes)[0];
    let nbuckets = u64::from(header.bucket_count.get(e));
    let symoffset = u64::from(header.symbol_base.get(e));
    let bloom_words = u64::from(header.bloom_count.get(e));
    let word = if d.is64() { 8 } else { 4 };
    let buckets_at = bloom_words
        .checked_mul(word)
        .and_then(|bloom| at.checked_add(16 + bloom))
        .ok_or_else(|| malformed(format!("{what}: bloom filter size overflows")))?;
    // read_vec refuses a range past the end before allocating.
    let buckets = src.read_vec(buckets_at, nbuckets * 4, what)?;
    let last = views::<U32<ByteOrder>>(&buckets)
        .iter()
        .map(|b| u64::from(b.get(e)))
        .max()
        .unwrap_or(0);
    if last < symoffset {
        return Ok(symoffset);
    }
    let chains_at = buckets_at + nbuckets * 4;
    let mut index = last;
    loop {
        let entry = src.read_vec(chains_at + (index - symoffset) * 4, 4, what)?;
        if views::<U32<ByteOrder>>(&entry)[0].get(e) & 1 != 0 {
            return Ok(index + 1);
        }
        index += 1;
    }
}
