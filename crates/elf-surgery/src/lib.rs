//! ELF surgery: reads ELF facts and edits library search paths in
//! process, verified before anything is written.
//!
//! - [`ElfFile`] classifies a file ([`ElfKind`]) and reads SONAME, NEEDED,
//!   RPATH, RUNPATH and the interpreter from a bounded set of reads.
//! - [`ElfFile::read_imports`] reads what a file takes from other objects:
//!   the symbol versions it needs per library (`.gnu.version_r`) and its
//!   undefined dynamic symbols with their versions ([`Imports`]).
//! - [`ElfFile::plan_edit`] turns a [`SearchPathEdit`] into an [`Edit`]:
//!   patches over the source plus appended data, verified on the edited
//!   view (re-parsed, loader invariants checked, the new path read back).
//! - [`ElfFile::library_name_literals`] reads the unversioned library names
//!   (`libX.so`) a file holds as string literals; [`RuntimeAlias`] writes
//!   the tiny shared object that stands for a library under such a name.
//! - An [`Edit`] is applied by streaming: [`Edit::reader`] (a plain
//!   `std::io::Read`, for the wheel writer) or [`Edit::write_atomically`].
//!
//! ```no_run
//! use std::fs::File;
//! use elf_surgery::{ElfFile, SearchPathEdit};
//!
//! let path = std::path::Path::new("build/lib/libamdhip64.so.6");
//! let mut source = File::open(path)?;
//! let elf = ElfFile::parse(&mut source)?;
//! let request = SearchPathEdit::append(["$ORIGIN/../../_rocm_sdk_core/lib/llvm/lib"]).force_rpath();
//! let edit = elf.plan_edit(&mut source, &request)?;
//! let mut reader = edit.reader(&mut source)?; // exactly edit.output_len() bytes
//! std::io::copy(&mut reader, &mut std::io::sink())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod edit;
mod error;
mod file;
#[cfg(test)]
mod handmade;
mod imports;
mod literals;
mod plan;
mod runtime_alias;
mod search_path;
mod shape;
mod source;
mod verify;

use std::fs;
use std::io::{Read, Seek};
use std::path::Path;

pub use edit::{Appended, Edit, EditReader, Patch, Unchanged};
pub use error::{Error, ErrorKind, Result};
pub use file::{ElfFile, ElfKind, classify};
pub use imports::{ImportedSymbol, Imports, SymbolVersion, VersionNeed};
pub use runtime_alias::{
    LibraryShape, RuntimeAlias, alias_target, is_unversioned_name, is_versioned_form,
};
pub use search_path::SearchPathEdit;
pub use shape::{ElfClass, Endianness};

use source::Source;

impl ElfFile {
    /// Plans `request` on this file and verifies the result on the edited
    /// view of `source` (the same file this was parsed from).
    ///
    /// Files of both classes and byte orders, for any machine, are edited
    /// the same way. A static executable yields an unchanged edit
    /// ([`Unchanged::NoDynamicSection`]); device code (AMDGPU code objects)
    /// and object files are [`ErrorKind::Unsupported`].
    pub fn plan_edit<R: Read + Seek>(
        &self,
        source: &mut R,
        request: &SearchPathEdit,
    ) -> Result<Edit> {
        self.planned_and_verified(source, request)
            .map(|(edit, _)| edit)
    }

    /// [`ElfFile::plan_edit`], also returning the facts of the edited file
    /// as a reader of the output parses them (the verification's own
    /// re-parse; this file itself for an unchanged edit), so a caller can
    /// check the output's links without reading it again.
    pub fn plan_edit_with_result<R: Read + Seek>(
        &self,
        source: &mut R,
        request: &SearchPathEdit,
    ) -> Result<(Edit, ElfFile)> {
        let (edit, edited) = self.planned_and_verified(source, request)?;
        Ok((edit, edited.unwrap_or_else(|| self.clone())))
    }

    fn planned_and_verified<R: Read + Seek>(
        &self,
        source: &mut R,
        request: &SearchPathEdit,
    ) -> Result<(Edit, Option<Self>)> {
        let mut src = Source::new(source)?;
        self.check_source(&mut src)?;
        let planned = plan::plan(self, request)?;
        let edited = verify::verified_result(
            self,
            &planned.edit,
            &mut src,
            request,
            planned.target.as_ref(),
        )?;
        Ok((planned.edit, edited))
    }
}

/// Edits the file at `path` in place (atomically, keeping its permissions)
/// and returns the edit that was applied; an unchanged edit writes nothing.
pub fn edit_file(path: &Path, request: &SearchPathEdit) -> Result<Edit> {
    let inner = || -> Result<Edit> {
        let mut source = fs::File::open(path)?;
        let permissions = source.metadata()?.permissions();
        let elf = ElfFile::parse(&mut source)?;
        let edit = elf.plan_edit(&mut source, request)?;
        if !edit.is_identity() {
            edit.write_atomically(&mut source, path, permissions)?;
        }
        Ok(edit)
    };
    inner().map_err(|e| e.at(path))
}
