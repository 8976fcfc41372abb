//! Fuzz-style test on the stable toolchain: mutated real libraries and
//! random inputs, a bounded number of deterministic iterations. Mutations
//! the parser refuses are drawn again, so every kept input reaches the
//! planner. Nothing may panic, verification never refuses what the planner
//! built, and every edit that is returned must be sound: its output
//! parses, carries the new RPATH, and is a fixed point of the same edit
//! (which re-checks every loader invariant on it as an input). The
//! coverage-guided counterpart is `fuzz/fuzz_targets/elf_edit.rs`.

mod common;

use std::fs;
use std::io::Cursor;

use common::{APPENDED, Linker, Rng, build_small_lib, corpus_request};
use elf_surgery::{ElfFile, ErrorKind, SearchPathEdit, Unchanged};

const ITERATIONS: usize = 1500;

/// What the planner made of an input that parses.
enum Planned {
    /// The edited bytes.
    Edited(Vec<u8>),
    /// Refused before verification (unsupported or malformed).
    Refused,
}

/// Plans and applies the corpus edit on `bytes` in memory; `None` when the
/// input does not parse (it never reaches the planner).
///
/// A refusal by verification would mean the planner built a bad edit from
/// an input it accepted: that is a bug even though nothing is written.
fn try_edit(bytes: &[u8]) -> Option<Planned> {
    let mut source = Cursor::new(bytes);
    let elf = ElfFile::parse(&mut source).ok()?;
    let edit = match elf.plan_edit(&mut source, &corpus_request()) {
        Ok(edit) => edit,
        Err(e) => {
            assert!(
                !matches!(e.kind(), ErrorKind::Verification(_)),
                "planner bug: {e}"
            );
            return Some(Planned::Refused);
        }
    };
    let mut out = Vec::new();
    std::io::copy(&mut edit.reader(&mut source).unwrap(), &mut out).unwrap();
    assert_eq!(out.len() as u64, edit.output_len());
    Some(Planned::Edited(out))
}

fn check_sound(out: &[u8]) {
    let mut cursor = Cursor::new(out);
    let elf = ElfFile::parse(&mut cursor).expect("an edited file parses");
    if elf.has_dynamic() {
        assert!(
            elf.rpath()
                .is_some_and(|r| r.ends_with("$ORIGIN/../x/lib:$ORIGIN/../../y/lib")),
            "{:?}",
            elf.rpath()
        );
        assert_eq!(elf.runpath(), None);
    }
    match elf.plan_edit(&mut cursor, &corpus_request()) {
        Ok(again) => assert!(again.is_identity(), "the edit is not a fixed point"),
        Err(e) => panic!("an edited file is refused as input: {e}"),
    }
}

/// Byte ranges worth mutating: headers and the tables an edit touches.
fn interesting_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let mut ranges = vec![(0, 64)];
    let (phoff, phnum) = (
        u64_at(32),
        usize::from(u16::from_le_bytes([bytes[56], bytes[57]])),
    );
    ranges.push((phoff, phoff + phnum * 56));
    let (shoff, shnum) = (
        u64_at(40),
        usize::from(u16::from_le_bytes([bytes[60], bytes[61]])),
    );
    ranges.push((shoff, shoff + shnum * 64));
    for i in 0..phnum {
        let h = phoff + i * 56;
        if u32::from_le_bytes(bytes[h..h + 4].try_into().unwrap()) == object::elf::PT_DYNAMIC {
            ranges.push((u64_at(h + 8), u64_at(h + 8) + u64_at(h + 32)));
        }
    }
    ranges.retain(|(s, e)| s < e && *e <= bytes.len());
    ranges
}

/// Mutates `base` until the result still parses, so that every input the
/// test keeps reaches the planner (a mutation the parser refuses tests
/// nothing the parser tests do not).
fn mutation_that_parses(base: &[u8], ranges: &[(usize, usize)], rng: &mut Rng) -> Vec<u8> {
    const DRAWS: usize = 1000;
    for _ in 0..DRAWS {
        let mut bytes = base.to_vec();
        for _ in 0..=rng.below(4) {
            let (s, e) = ranges[rng.below(ranges.len())];
            let at = s + rng.below(e - s);
            bytes[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                2 => bytes[at] ^ (1 << rng.below(8)),
                _ => rng.next_u64() as u8,
            };
        }
        if rng.below(10) == 0 {
            bytes.truncate(rng.below(bytes.len()));
        }
        if ElfFile::parse(&mut Cursor::new(&bytes)).is_ok() {
            return bytes;
        }
    }
    panic!("no mutation out of {DRAWS} still parses");
}

#[test]
fn mutated_libraries_never_panic_nor_yield_unsound_edits() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x5eed);
    let (mut edited, mut refused) = (0, 0);
    for (linker, name) in [(Linker::Gnu, "libgnu.so"), (Linker::Lld, "liblld.so")] {
        let base = fs::read(build_small_lib(dir.path(), linker, name)).unwrap();
        match try_edit(&base) {
            Some(Planned::Edited(out)) => check_sound(&out),
            _ => panic!("the unmutated library edits"),
        }
        let ranges = interesting_ranges(&base);
        for _ in 0..ITERATIONS / 2 {
            let bytes = mutation_that_parses(&base, &ranges, &mut rng);
            match try_edit(&bytes).expect("the mutation parses") {
                Planned::Edited(out) => {
                    check_sound(&out);
                    edited += 1;
                }
                Planned::Refused => refused += 1,
            }
        }
    }
    // Every kept input reached the planner; both of its outcomes are
    // exercised, or the mutations are not reaching anything.
    assert_eq!(edited + refused, ITERATIONS / 2 * 2);
    assert!(
        edited > 50 && refused > 50,
        "edited {edited}, refused {refused}"
    );
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng::new(42);
    for i in 0..ITERATIONS {
        let len = rng.below(2048);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if len >= 64 && i % 3 != 0 {
            bytes[..4].copy_from_slice(b"\x7fELF");
            bytes[4] = 2;
            bytes[5] = 1;
            bytes[18] = 62;
            bytes[19] = 0;
        }
        let mut source = Cursor::new(&bytes);
        if let Ok(elf) = ElfFile::parse(&mut source) {
            match elf.plan_edit(&mut source, &corpus_request()) {
                Ok(edit) => {
                    // Only a static executable may pass unchanged; anything
                    // else that passes must be sound.
                    if edit.unchanged_reason() != Some(Unchanged::NoDynamicSection) {
                        match try_edit(&bytes) {
                            Some(Planned::Edited(out)) => check_sound(&out),
                            _ => panic!("a planned edit is not applied the same way twice"),
                        }
                    }
                }
                Err(e) => assert!(
                    !matches!(e.kind(), ErrorKind::Verification(_)),
                    "planner bug: {e}"
                ),
            }
        }
    }
}

/// The inputs coverage-guided fuzzing found (`fuzz/fuzz_targets/elf_edit.rs`),
/// kept in `tests/fuzz-inputs/`: the first byte picks the request as the
/// fuzz target does, the rest is the file. Each must be refused without a
/// panic or a verification failure, or edited soundly.
#[test]
fn inputs_found_by_fuzzing() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-inputs");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = fs::read(&path).unwrap();
        let (&choice, bytes) = data.split_first().expect("an input has a request byte");
        let request = match choice % 3 {
            0 => SearchPathEdit::append(APPENDED).force_rpath(),
            1 => SearchPathEdit::append(APPENDED),
            _ => SearchPathEdit::set(APPENDED).force_rpath(),
        };
        let mut source = Cursor::new(bytes);
        if let Ok(elf) = ElfFile::parse(&mut source)
            && let Err(e) = elf.plan_edit(&mut source, &request)
        {
            assert!(
                !matches!(e.kind(), ErrorKind::Verification(_)),
                "{}: planner bug: {e}",
                path.display()
            );
        }
        seen += 1;
    }
    assert!(seen > 0, "no inputs in {}", dir.display());
}
