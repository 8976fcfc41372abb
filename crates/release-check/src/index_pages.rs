//! Index pages and `.metadata` files beside the packages describe the
//! packages as they are (docs/verify.md#index-pages). When a dist
//! directory holds what `therock-package index` writes — a flat
//! `index.html`, a PEP 503 `simple/` tree, PEP 658 `<file>.metadata`
//! files — pip and uv trust it: they check every `#sha256=` and
//! `data-core-metadata` hash against the download and refuse a package
//! whose bytes differ, and they resolve from a `.metadata` file without
//! opening the wheel. Pages written before a build replaced packages are
//! what this finds: every link reaches a package of the directory with
//! its hash and `Requires-Python`, every `.metadata` file is its
//! package's metadata, and every package is listed by the pages of each
//! layout present.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use fs_helpers::error_chain::Chain;
use fs_helpers::file_hash::sha256_bytes;
use pypa_formats::core_metadata::headers;
use wheel_writer::dist_dir::is_staging;
use wheel_writer::{WheelReader, limits};

use super::Release;
use super::release::{DistFile, Kind};

/// The largest page or `.metadata` file read; a larger one is reported.
const MAX_FILE: u64 = 64 << 20;

/// The pages and `.metadata` files under one dist directory.
#[derive(Default)]
struct Found {
    pages: Vec<PathBuf>,
    metadata: Vec<PathBuf>,
}

/// Which pages a page is one of.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layout {
    /// `index.html` beside the packages (a `--find-links` page).
    Flat,
    /// A page of a `simple/` tree (an `--index-url`).
    Simple,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Simple => "simple",
        }
    }
}

/// The problems of every dist directory's pages and `.metadata` files;
/// `None` when no directory has any.
pub(crate) fn check(dirs: &[PathBuf], release: &Release) -> Option<Vec<String>> {
    let mut problems = Vec::new();
    let mut any = false;
    for dir in dirs {
        let found = match find(dir) {
            Ok(found) => found,
            Err(e) => {
                problems.push(format!("{}: cannot list it: {e}", dir.display()));
                continue;
            }
        };
        if found.pages.is_empty() && found.metadata.is_empty() {
            continue;
        }
        any = true;
        DirCheck::new(dir, release).run(&found, &mut problems);
    }
    any.then_some(problems)
}

/// Every `index.html` and `*.metadata` under `dir`, sorted; links are not
/// followed and a build's staging directory is not entered.
fn find(dir: &Path) -> std::io::Result<Found> {
    let mut found = Found::default();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() {
                if !is_staging(&name) {
                    stack.push(entry.path());
                }
            } else if kind.is_file() && name == "index.html" {
                found.pages.push(entry.path());
            } else if kind.is_file() && name.ends_with(".metadata") {
                found.metadata.push(entry.path());
            }
        }
    }
    found.pages.sort();
    found.metadata.sort();
    Ok(found)
}

/// The check of one dist directory.
struct DirCheck<'r> {
    dir: &'r Path,
    /// The directory's packages by path.
    packages: BTreeMap<&'r Path, &'r DistFile>,
    /// Core metadata of each package read so far (`None`: unreadable).
    metadata: BTreeMap<PathBuf, Option<Vec<u8>>>,
    /// SHA-256 of each `.metadata` file, by the package it describes.
    metadata_sha: BTreeMap<PathBuf, String>,
    /// Which pages list each package.
    listed: BTreeMap<&'r Path, BTreeSet<Layout>>,
}

impl<'r> DirCheck<'r> {
    fn new(dir: &'r Path, release: &'r Release) -> Self {
        let packages = release
            .files
            .iter()
            .filter(|f| f.path.starts_with(dir))
            .map(|f| (f.path.as_path(), f))
            .collect();
        Self {
            dir,
            packages,
            metadata: BTreeMap::new(),
            metadata_sha: BTreeMap::new(),
            listed: BTreeMap::new(),
        }
    }

    fn again(&self) -> String {
        format!("run `therock-package index {}` again", self.dir.display())
    }

    fn run(mut self, found: &Found, problems: &mut Vec<String>) {
        for file in &found.metadata {
            self.check_metadata_file(file, problems);
        }
        let mut layouts = BTreeSet::new();
        for page in &found.pages {
            let layout = self.layout_of(page);
            layouts.insert(layout);
            self.check_page(page, layout, problems);
        }
        for layout in layouts {
            for (path, file) in &self.packages {
                if !self.listed.get(path).is_some_and(|l| l.contains(&layout)) {
                    problems.push(format!(
                        "{}: no {} index page of {} lists it (the pages were written before it); \
                         {}",
                        file.display,
                        layout.name(),
                        self.dir.display(),
                        self.again()
                    ));
                }
            }
        }
    }

    /// A page below a `simple` directory belongs to a simple tree.
    fn layout_of(&self, page: &Path) -> Layout {
        let rel = page.strip_prefix(self.dir).unwrap_or(page);
        if rel.components().any(|c| c.as_os_str() == "simple") {
            Layout::Simple
        } else {
            Layout::Flat
        }
    }

    /// The core metadata of `file` (a wheel's `METADATA`, an sdist's
    /// `PKG-INFO`), read once.
    fn metadata_of(&mut self, file: &DistFile) -> Option<&[u8]> {
        self.metadata
            .entry(file.path.clone())
            .or_insert_with(|| match &file.kind {
                Kind::Wheel(_) => WheelReader::open(&file.path)
                    .and_then(|mut r| {
                        let member = format!("{}/METADATA", r.dist_info_dir());
                        r.read_member(&member, limits::METADATA)
                    })
                    .ok(),
                Kind::Sdist(_) => crate::release::sdist_pkg_info(&file.path).ok(),
            })
            .as_deref()
    }

    fn check_metadata_file(&mut self, path: &Path, problems: &mut Vec<String>) {
        let shown = path.display();
        let described = path.with_extension("");
        let bytes = match read_bounded(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                problems.push(format!("{shown}: {e}"));
                return;
            }
        };
        self.metadata_sha
            .insert(described.clone(), sha256_bytes(&bytes).hex());
        let Some(file) = self.packages.get(described.as_path()).copied() else {
            problems.push(format!(
                "{shown}: describes {}, which is not in the directory (an index of an earlier \
                 build); {}, or remove it",
                described.file_name().unwrap_or_default().to_string_lossy(),
                self.again()
            ));
            return;
        };
        let again = self.again();
        match self.metadata_of(file) {
            // The well-formed check says why it cannot be read.
            None => {}
            Some(metadata) if metadata == bytes.as_slice() => {}
            Some(_) => problems.push(format!(
                "{shown}: is not the metadata of {} (an index of an earlier build of it), so \
                 resolvers would read stale requirements; {again}",
                file.display
            )),
        }
    }

    fn check_page(&mut self, page: &Path, layout: Layout, problems: &mut Vec<String>) {
        let shown = page.display().to_string();
        let text = match read_bounded(page) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                problems.push(format!("{shown}: {e}"));
                return;
            }
        };
        let base = page.parent().unwrap_or(self.dir);
        for anchor in anchors(&text) {
            let Some(href) = anchor.get("href") else {
                continue;
            };
            let (target, fragment) = href.split_once('#').unwrap_or((href, ""));
            if target.is_empty() || is_external(target) {
                continue;
            }
            let Some(resolved) = resolve(base, self.dir, target) else {
                problems.push(format!(
                    "{shown}: links {href}, which is outside {}; {}",
                    self.dir.display(),
                    self.again()
                ));
                continue;
            };
            if target.ends_with('/') {
                if !resolved.join("index.html").is_file() {
                    problems.push(format!(
                        "{shown}: links {href}, which has no index.html; {}",
                        self.again()
                    ));
                }
                continue;
            }
            let Some(file) = self.packages.get(resolved.as_path()).copied() else {
                problems.push(format!(
                    "{shown}: links {href}, which is not a package of the directory (a page of \
                     an earlier build); {}",
                    self.again()
                ));
                continue;
            };
            self.listed
                .entry(file.path.as_path())
                .or_default()
                .insert(layout);
            self.check_link(&shown, &anchor, fragment, file, problems);
        }
    }

    /// A link to a package: its hash, its metadata file's hash and its
    /// `Requires-Python` are the package's.
    fn check_link(
        &mut self,
        page: &str,
        anchor: &Anchor,
        fragment: &str,
        file: &DistFile,
        problems: &mut Vec<String>,
    ) {
        let again = self.again();
        let name = &file.file_name;
        if let Some(sha) = fragment.strip_prefix("sha256=")
            && !sha.eq_ignore_ascii_case(&file.sha256)
        {
            problems.push(format!(
                "{page}: the link to {name} carries sha256 {sha}, but the file's is {} (a page \
                 of an earlier build), so pip refuses the download; {again}",
                file.sha256
            ));
        }
        let announced = anchor
            .get("data-core-metadata")
            .or_else(|| anchor.get("data-dist-info-metadata"));
        if let Some(announced) = announced
            && announced != "false"
        {
            match self.metadata_sha.get(&file.path) {
                None => problems.push(format!(
                    "{page}: the link to {name} announces a {name}.metadata file, which is not \
                     there; {again}"
                )),
                Some(sha) => {
                    if let Some(said) = announced.strip_prefix("sha256=")
                        && !said.eq_ignore_ascii_case(sha)
                    {
                        problems.push(format!(
                            "{page}: the link to {name} gives its metadata the sha256 {said}, \
                             but {name}.metadata has {sha}, so pip refuses it; {again}"
                        ));
                    }
                }
            }
        }
        let said = anchor.get("data-requires-python");
        let actual = self.metadata_of(file).and_then(|bytes| {
            headers(&String::from_utf8_lossy(bytes))
                .into_iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("Requires-Python"))
                .map(|(_, v)| v)
        });
        let readable = self.metadata_of(file).is_some();
        if readable && said.map(str::trim) != actual.as_deref().map(str::trim) {
            problems.push(format!(
                "{page}: the link to {name} says Requires-Python {}, but the package says {}; \
                 {again}",
                said.unwrap_or("nothing"),
                actual.as_deref().unwrap_or("nothing")
            ));
        }
    }
}

/// Reads a page or `.metadata` file of at most [`MAX_FILE`] bytes.
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot be read: {}", Chain(&e)))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {}", Chain(&e)))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "is larger than {} MiB, more than an index file of a release",
            MAX_FILE >> 20
        ));
    }
    Ok(bytes)
}

/// A link with a scheme or to another host (not a file of the directory).
fn is_external(href: &str) -> bool {
    href.starts_with("//")
        || href.starts_with('/')
        || href
            .split_once(':')
            .is_some_and(|(scheme, _)| !scheme.contains('/') && !scheme.is_empty())
}

/// The file or directory a relative `href` of a page in `base` names,
/// percent-decoded; `None` when it leaves `root`.
fn resolve(base: &Path, root: &Path, href: &str) -> Option<PathBuf> {
    let mut path = base.to_owned();
    for segment in href.split('/') {
        match percent_decode(segment).as_str() {
            "" | "." => {}
            ".." => {
                if path == root || !path.pop() {
                    return None;
                }
            }
            name => {
                if Path::new(name)
                    .components()
                    .any(|c| !matches!(c, Component::Normal(_)))
                {
                    return None;
                }
                path.push(name);
            }
        }
    }
    path.starts_with(root).then_some(path)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One `<a>` tag's attributes (names lower-cased, values unescaped).
struct Anchor {
    attributes: Vec<(String, String)>,
}

impl Anchor {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The `<a ...>` tags of an HTML page, as an HTML tokenizer reads their
/// attributes: names case-insensitive, values quoted with `"` or `'` or
/// bare, character references decoded.
fn anchors(html: &str) -> Vec<Anchor> {
    let mut out = Vec::new();
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(at) = html[i..].find('<') {
        let start = i + at + 1;
        i = start;
        let is_anchor = bytes
            .get(start)
            .is_some_and(|b| b.eq_ignore_ascii_case(&b'a'))
            && bytes
                .get(start + 1)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/');
        if !is_anchor {
            continue;
        }
        let (attributes, end) = attributes(html, start + 1);
        out.push(Anchor { attributes });
        i = end;
    }
    out
}

/// The attributes from `at` to the tag's `>`, and where the tag ends.
fn attributes(html: &str, mut at: usize) -> (Vec<(String, String)>, usize) {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] == b'>' {
            return (out, (at + 1).min(bytes.len()));
        }
        let name_start = at;
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() && !b"=>/".contains(&bytes[at]) {
            at += 1;
        }
        let name = html[name_start..at].to_ascii_lowercase();
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let mut value = String::new();
        if bytes.get(at) == Some(&b'=') {
            at += 1;
            while at < bytes.len() && bytes[at].is_ascii_whitespace() {
                at += 1;
            }
            let (raw, end) = if let Some(&q @ (b'"' | b'\'')) = bytes.get(at) {
                let close = html[at + 1..]
                    .find(char::from(q))
                    .map_or(bytes.len(), |e| at + 1 + e);
                (&html[at + 1..close], (close + 1).min(bytes.len()))
            } else {
                let end = html[at..]
                    .find(|c: char| c.is_ascii_whitespace() || c == '>')
                    .map_or(bytes.len(), |e| at + e);
                (&html[at..end], end)
            };
            value = unescape(raw);
            at = end;
        }
        out.push((name, value));
    }
}

/// Decodes HTML character references: the named ones a page of links
/// uses and numeric ones.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';').filter(|e| *e <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        if let Some(c) = decoded {
            out.push(c);
            rest = &rest[end + 1..];
        } else {
            out.push('&');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_read_as_an_html_tokenizer_reads_them() {
        let page = r#"<html><body><A HREF="b/x%2B1.whl#sha256=22" data-requires-python="&gt;=3.9,&lt;4" data-core-metadata='sha256=33'>x+1.whl</a><br>
            <a href=plain.tar.gz>p</a><abbr title="x">no</abbr><a>none</a>"#;
        let found = anchors(page);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].get("href"), Some("b/x%2B1.whl#sha256=22"));
        assert_eq!(found[0].get("data-requires-python"), Some(">=3.9,<4"));
        assert_eq!(found[0].get("data-core-metadata"), Some("sha256=33"));
        assert_eq!(found[1].get("href"), Some("plain.tar.gz"));
        assert_eq!(found[2].get("href"), None);
        assert_eq!(unescape("a&amp;b&#39;c&#x41;&bogus;&"), "a&b'cA&bogus;&");
    }

    #[test]
    fn links_resolve_inside_the_directory_only() {
        let root = Path::new("/d");
        let base = Path::new("/d/simple/rocm");
        assert_eq!(
            resolve(base, root, "../../rocm-7.1.0.tar.gz"),
            Some(PathBuf::from("/d/rocm-7.1.0.tar.gz"))
        );
        assert_eq!(
            resolve(root, root, "x%2B1.whl"),
            Some(PathBuf::from("/d/x+1.whl"))
        );
        assert_eq!(resolve(root, root, "../etc/passwd"), None);
        assert_eq!(resolve(base, root, "../../../x"), None);
        assert!(is_external("https://example.com/x.whl"));
        assert!(is_external("/abs/x.whl"));
        assert!(!is_external("sub/x.whl"));
    }
}
