//! `therock-package index DIST_DIR [--layout flat|simple|both] [--per-family]`:
//! the pages pip and uv resolve a release from (`docs/pipeline.md`).
//!
//! - the flat page `index.html`, a `--find-links` source;
//! - a PEP 503 simple tree, `simple/index.html` and
//!   `simple/<project>/index.html`, an `--index-url`;
//! - beside every wheel, `<wheel>.metadata` (its `METADATA` bytes), which
//!   both layouts announce with `data-core-metadata` (PEP 658/714), so a
//!   resolver learns a multi-gigabyte wheel's dependencies without
//!   downloading it.
//!
//! Every link carries `#sha256=` and the file's `data-requires-python`;
//! pages are sorted and deterministic, and each file is written atomically
//! (metadata files first, then project pages, then the pages linking
//! them), so a reader never sees a link to a file not yet written.

mod carried;
mod distribution;
mod page;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{IndexError, IoAction, cannot};

/// What indexing returns.
type Result<T, E = IndexError> = std::result::Result<T, E>;

use distribution::Distribution;
use fs_helpers::file_hash::sha256_bytes;
use page::{FileLink, files_page, projects_page};
use wheel_writer::dist_dir::list_packages;

pub(crate) use carried::{find as find_index_files, write_again as write_index_again};

/// What to index, and which pages to write.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// The dist directory to index (the pages are written into it).
    pub dir: PathBuf,
    /// Which pages to write.
    pub layout: IndexLayout,
    /// Legacy releases with several families: one index per `dist/{F}/`
    /// listing that family's packages and the shared ones beside it.
    pub per_family: bool,
}

/// Which pages [`index`](crate::index()) writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IndexLayout {
    /// `index.html`, a find-links page.
    #[default]
    Flat,
    /// `simple/index.html` and `simple/<project>/index.html`.
    Simple,
    /// Both.
    Both,
}

impl IndexLayout {
    fn flat(self) -> bool {
        matches!(self, Self::Flat | Self::Both)
    }

    fn simple(self) -> bool {
        matches!(self, Self::Simple | Self::Both)
    }
}

/// One page written, and how many entries it lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WrittenPage {
    /// Where.
    pub path: PathBuf,
    /// Packages (a page of files) or projects (a simple index root).
    pub entries: usize,
    /// Whether its entries are projects.
    pub projects: bool,
}

/// What one index run wrote (text, or JSON with `--json`:
/// docs/formats.md).
#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexReport {
    /// The report format (1).
    pub schema: u32,
    /// Every `<wheel>.metadata` file.
    pub metadata_files: Vec<PathBuf>,
    /// Every page, in the order written.
    pub pages: Vec<WrittenPage>,
}

/// `therock-package index`: indexes the wheels and sdists under
/// `options.dir`, writing the `.metadata` file of every wheel, then the
/// pages of `options.layout`.
pub fn index(options: &IndexOptions) -> Result<IndexReport> {
    let dir = options.dir.as_path();
    if !dir.is_dir() {
        return Err(IndexError::NotADirectory {
            dir: dir.to_owned(),
        });
    }
    let listing = list_packages(dir).map_err(cannot(IoAction::List, dir))?;
    if let Some(refused) = listing.refused.first() {
        // A page would link a file no check has read.
        return Err(refused.clone().into());
    }
    let packages = listing.packages;
    if packages.is_empty() {
        return Err(IndexError::NoPackages {
            dir: dir.to_owned(),
        });
    }
    // Top-level group ("" or a family directory) → its distributions.
    let mut groups: BTreeMap<String, Vec<Distribution>> = BTreeMap::new();
    for path in &packages {
        let rel = path
            .strip_prefix(dir)
            .expect("listed under dir")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let group = rel.rsplit_once('/').map_or("", |(g, _)| g).to_owned();
        groups
            .entry(group)
            .or_default()
            .push(Distribution::read(path, rel)?);
    }
    let mut report = IndexReport {
        schema: 1,
        ..IndexReport::default()
    };
    // The metadata files first: no page may announce one not yet there.
    let mut metadata_sha = BTreeMap::new();
    for dist in groups.values().flatten() {
        if let Some(bytes) = &dist.core_metadata {
            let path = dir.join(format!("{}.metadata", dist.rel));
            write_atomically(&path, bytes)?;
            metadata_sha.insert(dist.rel.clone(), sha256_bytes(bytes).hex());
            report.metadata_files.push(path);
        }
    }
    let link = |dist: &Distribution, href: String| FileLink {
        name: dist.file_name.clone(),
        href,
        sha256: dist.sha256.clone(),
        requires_python: dist.requires_python.clone(),
        core_metadata_sha256: metadata_sha.get(&dist.rel).cloned(),
    };
    if options.per_family {
        let shared = groups.remove("").unwrap_or_default();
        if groups.is_empty() {
            return Err(IndexError::NoFamilyDirectories {
                dir: dir.to_owned(),
            });
        }
        for (family, files) in &groups {
            let mut links: Vec<(String, FileLink)> = files
                .iter()
                .map(|d| {
                    (
                        d.project.clone(),
                        link(d, d.rel[family.len() + 1..].to_owned()),
                    )
                })
                .collect();
            let up = "../".repeat(family.split('/').count());
            for d in &shared {
                if !links.iter().any(|(_, l)| l.name == d.file_name) {
                    links.push((d.project.clone(), link(d, format!("{up}{}", d.rel))));
                }
            }
            let title = format!("ROCm Python packages for {family}");
            write_pages(
                &dir.join(family),
                &title,
                links,
                options.layout,
                &mut report,
            )?;
        }
        let top = shared
            .iter()
            .map(|d| (d.project.clone(), link(d, d.rel.clone())))
            .collect();
        write_pages(
            dir,
            "ROCm Python packages",
            top,
            options.layout,
            &mut report,
        )?;
    } else {
        let mut by_name: BTreeMap<&str, &str> = BTreeMap::new();
        let mut links = Vec::new();
        for d in groups.values().flatten() {
            if let Some(other) = by_name.insert(&d.file_name, &d.rel) {
                return Err(IndexError::FileNameTwice {
                    dir: dir.to_owned(),
                    file_name: d.file_name.clone(),
                    first: other.to_owned(),
                    second: d.rel.clone(),
                });
            }
            links.push((d.project.clone(), link(d, d.rel.clone())));
        }
        write_pages(
            dir,
            "ROCm Python packages",
            links,
            options.layout,
            &mut report,
        )?;
    }
    Ok(report)
}

/// The pages of one index rooted at `base`: the simple tree's project
/// pages and root, then the flat page. `links` are (project, link with
/// `href` relative to `base`).
fn write_pages(
    base: &Path,
    title: &str,
    mut links: Vec<(String, FileLink)>,
    layout: IndexLayout,
    report: &mut IndexReport,
) -> Result<()> {
    links.sort_by(|a, b| a.1.cmp(&b.1));
    if layout.simple() {
        let simple = base.join("simple");
        let mut projects: BTreeMap<&str, Vec<FileLink>> = BTreeMap::new();
        for (project, link) in &links {
            // A project page sits two levels below `base`.
            let mut link = link.clone();
            link.href = format!("../../{}", link.href);
            projects.entry(project).or_default().push(link);
        }
        for (project, files) in &projects {
            let page = simple.join(project).join("index.html");
            let html = files_page(&format!("Links for {project}"), files);
            write_atomically(&page, html.as_bytes())?;
            report.pages.push(WrittenPage {
                path: page,
                entries: files.len(),
                projects: false,
            });
        }
        let names: Vec<String> = projects.keys().map(|p| (*p).to_owned()).collect();
        remove_stale_projects(&simple, &names)?;
        let root = simple.join("index.html");
        write_atomically(&root, projects_page(title, &names).as_bytes())?;
        report.pages.push(WrittenPage {
            path: root,
            entries: names.len(),
            projects: true,
        });
    }
    if layout.flat() {
        let flat: Vec<FileLink> = links.into_iter().map(|(_, l)| l).collect();
        let page = base.join("index.html");
        write_atomically(&page, files_page(title, &flat).as_bytes())?;
        report.pages.push(WrittenPage {
            path: page,
            entries: flat.len(),
            projects: false,
        });
    }
    Ok(())
}

/// Removes the project pages an earlier run wrote for projects no longer
/// in the directory (a directory holding only our `index.html`).
fn remove_stale_projects(simple: &Path, projects: &[String]) -> Result<()> {
    let entries = fs::read_dir(simple).map_err(cannot(IoAction::List, simple))?;
    for entry in entries {
        let entry = entry.map_err(cannot(IoAction::List, simple))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if !path.is_dir() || projects.contains(&name) {
            continue;
        }
        let page = path.join("index.html");
        let only_page = fs::read_dir(&path)
            .is_ok_and(|mut d| d.all(|e| e.is_ok_and(|e| e.file_name() == "index.html")));
        if only_page && page.is_file() {
            fs::remove_file(&page).map_err(cannot(IoAction::Remove, &page))?;
            fs::remove_dir(&path).map_err(cannot(IoAction::Remove, &path))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed over it; on failure nothing is left behind.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().expect("an index file has a directory");
    fs::create_dir_all(parent).map_err(cannot(IoAction::Create, parent))?;
    fs_helpers::atomic_write::write_atomic(path, bytes)
        .map_err(cannot(IoAction::Write, path))
        .map_err(Into::into)
}
