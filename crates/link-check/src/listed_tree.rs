//! [`ListedTree`]: a tree its caller lists, the paths it has and the parsed
//! ELF files among them, with nothing read from disk. The
//! build uses it to check the set it just wrote (it classified every file
//! and parsed every ELF file it edited) without reading its wheels again.

use std::collections::BTreeSet;

use crate::Error;
use crate::tree::{FileTree, Scan, ScanDepth, TreeElf};

/// A tree given as its file paths and the parsed ELF files among them.
#[derive(Debug, Clone, Default)]
pub struct ListedTree {
    paths: BTreeSet<String>,
    files: Vec<TreeElf>,
}

impl ListedTree {
    /// The tree of `paths` (every file, ELF or not, `/`-separated and
    /// relative to the root) whose ELF files are `files` (each also among
    /// `paths`). [`ScanDepth::LinksAndImports`] is not available: a scan
    /// reports the files without imports.
    pub fn new<I, S>(paths: I, files: Vec<TreeElf>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut paths: BTreeSet<String> = paths.into_iter().map(Into::into).collect();
        paths.extend(files.iter().map(|f| f.path.clone()));
        let mut files = files;
        files.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.origin.cmp(&b.origin)));
        Self { paths, files }
    }
}

impl FileTree for ListedTree {
    fn contains_file(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    fn scan(
        &self,
        select: &(dyn Fn(&str) -> bool + Sync),
        _depth: ScanDepth,
    ) -> Result<Scan, Error> {
        Ok(Scan {
            files: self
                .files
                .iter()
                .filter(|f| select(&f.path))
                .cloned()
                .collect(),
            unreadable: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DirTree, LinkChecker};

    /// A shared object compiled by gcc (a TEST_PACKAGES of xtask/src/ci.rs,
    /// with gcc-multilib for `-m32`) with `flags`, its ELF facts.
    fn library(dir: &std::path::Path, name: &str, flags: &[&str]) -> elf_surgery::ElfFile {
        let src = dir.join("unit.c");
        std::fs::write(&src, "int f(void) { return 1; }\n").unwrap();
        let out = dir.join(name);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let status = std::process::Command::new("gcc")
            .args(flags.iter().filter(|f| **f == "-m32"))
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&src)
            .args(flags.iter().filter(|f| **f != "-m32"))
            .status()
            .unwrap();
        assert!(status.success());
        elf_surgery::ElfFile::open(&out).unwrap()
    }

    #[test]
    fn a_library_of_another_class_is_passed_over_as_the_loader_does() {
        // An i386 runtime searching `$ORIGIN` then `$ORIGIN/../lib32`: the
        // x86_64 libdep.so.1 beside it is not what the loader takes.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let host = library(root, "pkg/lib/libdep.so.1", &["-Wl,-soname,libdep.so.1"]);
        let lib32 = root.join("pkg/lib32");
        let dep32 = library(
            root,
            "pkg/lib32/libdep.so.1",
            &["-m32", "-Wl,-soname,libdep.so.1"],
        );
        let user = library(
            root,
            "pkg/lib/librt-i386.so",
            &[
                "-m32",
                "-L",
                lib32.to_str().unwrap(),
                "-Wl,--no-as-needed",
                "-l:libdep.so.1",
                "-Wl,-rpath,$ORIGIN:$ORIGIN/../lib32",
            ],
        );
        let elf = |path: &str, elf: elf_surgery::ElfFile| TreeElf {
            path: path.to_owned(),
            origin: None,
            elf,
            imports: None,
        };
        let resolution = |files: Vec<TreeElf>| {
            let report = LinkChecker::new().check(&ListedTree::new(Vec::<String>::new(), files));
            let report = report.unwrap();
            let user = report
                .files
                .iter()
                .find(|f| f.path == "pkg/lib/librt-i386.so")
                .unwrap();
            user.needed[0].resolution.clone()
        };
        assert_eq!(
            resolution(vec![
                elf("pkg/lib/librt-i386.so", user.clone()),
                elf("pkg/lib/libdep.so.1", host.clone()),
                elf("pkg/lib32/libdep.so.1", dep32),
            ]),
            crate::Resolution::Tree {
                path: "pkg/lib32/libdep.so.1".into()
            }
        );
        assert_eq!(
            resolution(vec![
                elf("pkg/lib/librt-i386.so", user),
                elf("pkg/lib/libdep.so.1", host),
            ]),
            crate::Resolution::Unresolved
        );
    }

    #[test]
    fn the_facts_give_the_report_the_same_files_on_disk_give() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let dep = library(root, "pkg/lib/libdep.so.1", &["-Wl,-soname,libdep.so.1"]);
        let lib_dir = root.join("pkg/lib");
        let user = library(
            root,
            "pkg/lib/libuser.so",
            &[
                "-L",
                lib_dir.to_str().unwrap(),
                "-Wl,--no-as-needed",
                "-l:libdep.so.1",
                "-Wl,-rpath,$ORIGIN",
            ],
        );
        let lost = library(
            root,
            "pkg/bin/liblost.so",
            &[
                "-L",
                lib_dir.to_str().unwrap(),
                "-Wl,--no-as-needed",
                "-l:libdep.so.1",
                "-Wl,-rpath,$ORIGIN",
            ],
        );
        std::fs::write(root.join("pkg/README"), "text").unwrap();
        std::fs::remove_file(root.join("unit.c")).unwrap();
        let elf = |path: &str, elf: elf_surgery::ElfFile| TreeElf {
            path: path.to_owned(),
            origin: None,
            elf,
            imports: None,
        };
        let facts = ListedTree::new(
            ["pkg/README"],
            vec![
                elf("pkg/lib/libuser.so", user),
                elf("pkg/lib/libdep.so.1", dep),
                elf("pkg/bin/liblost.so", lost),
            ],
        );
        let checker = LinkChecker::new();
        let from_facts = checker.check(&facts).unwrap();
        let from_disk = checker.check(&DirTree::open(root).unwrap()).unwrap();
        assert_eq!(from_facts, from_disk);
        let unresolved: Vec<String> = from_facts.unresolved().map(|u| u.to_string()).collect();
        assert_eq!(
            unresolved,
            [
                "pkg/bin/liblost.so: NEEDED libdep.so.1 not found in pkg/bin, and it is neither \
              an allowed system library nor the loader"
            ]
        );
    }
}
