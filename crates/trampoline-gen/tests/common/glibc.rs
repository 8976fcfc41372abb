//! The glibc floor check (docs/behaviour.md#native-binaries): a native binary shipped in a wheel
//! must run on glibc 2.28 and newer, so it is static or every versioned
//! glibc symbol it needs is at or below 2.28. Written over `object` alone
//! so other crates' tests (the `rocm-sdk` binary's) can copy it as is.

use object::read::elf::{ElfFile64, ProgramHeader as _};
use object::{LittleEndian, elf};

/// The manylinux_2_28 floor.
pub(crate) const FLOOR: GlibcVersion = GlibcVersion([2, 28, 0]);

/// A glibc symbol version, `GLIBC_2.28` → `[2, 28, 0]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GlibcVersion(pub(crate) [u32; 3]);

impl GlibcVersion {
    /// Parses the name of a version need, `GLIBC_2.2.5`; None for others
    /// (`GLIBC_PRIVATE`, `GCC_3.0`, ...).
    pub(crate) fn parse(name: &str) -> Option<GlibcVersion> {
        let mut parts = name.strip_prefix("GLIBC_")?.split('.');
        let mut version = [0; 3];
        for slot in &mut version {
            match parts.next() {
                Some(part) => *slot = part.parse().ok()?,
                None => break,
            }
        }
        parts.next().is_none().then_some(GlibcVersion(version))
    }
}

impl std::fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [major, minor, patch] = self.0;
        write!(f, "GLIBC_{major}.{minor}")?;
        if patch != 0 {
            write!(f, ".{patch}")?;
        }
        Ok(())
    }
}

/// How an x86_64/aarch64 ELF executable depends on glibc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GlibcNeed {
    /// No interpreter, no dynamic section: needs no shared libc at all.
    Static,
    /// Dynamically linked; every `GLIBC_*` version it needs, sorted.
    Dynamic(Vec<GlibcVersion>),
}

impl GlibcNeed {
    /// The newest glibc version needed, if any.
    pub(crate) fn newest(&self) -> Option<GlibcVersion> {
        match self {
            GlibcNeed::Static => None,
            GlibcNeed::Dynamic(versions) => versions.last().copied(),
        }
    }
}

/// Reads what `image` (a 64-bit little-endian ELF file) needs of glibc.
pub(crate) fn glibc_need(image: &[u8]) -> Result<GlibcNeed, String> {
    // `object` reads headers in place and wants them aligned; an
    // `include_bytes!` slice is not, a fresh heap copy is.
    let image = image.to_vec();
    let image = image.as_slice();
    let file =
        ElfFile64::<LittleEndian>::parse(image).map_err(|e| format!("not an ELF file: {e}"))?;
    let endian = file.endian();
    let dynamic = file
        .elf_program_headers()
        .iter()
        .any(|ph| matches!(ph.p_type(endian), elf::PT_INTERP | elf::PT_DYNAMIC));
    if !dynamic {
        return Ok(GlibcNeed::Static);
    }
    let sections = file.elf_section_table();
    let mut versions = Vec::new();
    if let Some((mut needs, link)) = sections
        .gnu_verneed(endian, image)
        .map_err(|e| format!("bad version needs: {e}"))?
    {
        let strings = sections
            .strings(endian, image, link)
            .map_err(|e| format!("bad version strings: {e}"))?;
        while let Some((_need, mut auxes)) = needs.next().map_err(|e| e.to_string())? {
            while let Some(aux) = auxes.next().map_err(|e| e.to_string())? {
                let name = aux.name(endian, strings).map_err(|e| e.to_string())?;
                if let Some(version) = GlibcVersion::parse(&String::from_utf8_lossy(name)) {
                    versions.push(version);
                }
            }
        }
    }
    versions.sort_unstable();
    versions.dedup();
    Ok(GlibcNeed::Dynamic(versions))
}

/// Ok when `image` runs on glibc `FLOOR` and newer; else says which
/// version it needs.
pub(crate) fn check_glibc_floor(image: &[u8]) -> Result<GlibcNeed, String> {
    let need = glibc_need(image)?;
    match need.newest() {
        Some(newest) if newest > FLOOR => Err(format!(
            "needs {newest}, newer than the {FLOOR} floor: link it statically or against an older glibc"
        )),
        _ => Ok(need),
    }
}
