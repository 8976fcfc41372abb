//! The ELF reader and search-path editor (crates/elf-surgery): parse, read
//! the imports and the library names of `.rodata`, plan an RPATH edit
//! (which verifies itself), apply it, and check the result.
//!
//! Beyond "no panic": a verification failure is a planner bug (the planner
//! built a bad edit from an input it accepted), and every edit handed out
//! must stream exactly its announced length, re-parse with the new search
//! path, and be a fixed point of the same request.
#![no_main]

use std::io::Cursor;

use elf_surgery::{ElfFile, ErrorKind, SearchPathEdit, is_unversioned_name};
use libfuzzer_sys::fuzz_target;

const APPENDED: [&str; 2] = ["$ORIGIN/../x/lib", "$ORIGIN/../../y/lib"];

fn request(choice: u8) -> SearchPathEdit {
    match choice % 3 {
        0 => SearchPathEdit::append(APPENDED).force_rpath(),
        1 => SearchPathEdit::append(APPENDED),
        _ => SearchPathEdit::set(APPENDED).force_rpath(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, bytes)) = data.split_first() else {
        return;
    };
    let request = request(choice);
    let mut source = Cursor::new(bytes);
    let Ok(elf) = ElfFile::parse(&mut source) else {
        return;
    };
    // The facts read back without panicking, imports included.
    let _ = (elf.kind(), elf.soname(), elf.needed(), elf.interpreter());
    let _ = elf.read_imports(&mut source);
    // Runtime-alias discovery: every name found is an unversioned name.
    if let Ok(names) = elf.library_name_literals(&mut source) {
        for name in names {
            assert!(is_unversioned_name(&name), "found {name:?}");
        }
    }
    let edit = match elf.plan_edit(&mut source, &request) {
        Ok(edit) => edit,
        Err(e) => {
            assert!(
                !matches!(e.kind(), ErrorKind::Verification(_)),
                "the planner built an edit that fails verification: {e}"
            );
            return;
        }
    };
    let mut out = Vec::new();
    std::io::copy(&mut edit.reader(&mut source).unwrap(), &mut out).unwrap();
    assert_eq!(out.len() as u64, edit.output_len());
    if edit.is_identity() {
        assert_eq!(out, bytes);
        return;
    }
    let mut edited = Cursor::new(&out[..]);
    let after = ElfFile::parse(&mut edited).expect("an edited file parses");
    assert_eq!(after.kind(), elf.kind());
    assert_eq!(after.soname(), elf.soname());
    assert_eq!(after.needed(), elf.needed());
    let paths: Vec<&str> = [after.rpath(), after.runpath()]
        .into_iter()
        .flatten()
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| APPENDED.iter().all(|a| p.split(':').any(|e| e == *a))),
        "the new search path does not read back: {paths:?}"
    );
    if request.force_rpath {
        assert_eq!(
            after.runpath(),
            None,
            "a DT_RUNPATH is left beside a forced DT_RPATH"
        );
    }
    match after.plan_edit(&mut edited, &request) {
        Ok(again) => assert!(again.is_identity(), "the edit is not a fixed point"),
        Err(e) => panic!("an edited file is refused as input: {e}"),
    }
});
