//! `therock-package index DIST_DIR [--per-family]`: a find-links / simple
//! index page (PEP 503 anchors with `#sha256=` fragments) listing the
//! release's wheels and sdists, sorted, URL-encoded, deterministic and
//! written atomically.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;

use crate::verify::{list_packages, sha256_file};

/// `therock-package index`.
#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// The dist directory to index (`index.html` is written into it).
    #[arg(value_name = "DIST_DIR")]
    dir: PathBuf,
    /// Legacy releases with several families: one page per `dist/{F}/`
    /// listing that family's packages and the shared ones beside it.
    #[arg(long)]
    per_family: bool,
    /// Print the pages written, with every link, as JSON (docs/formats.md).
    #[arg(long)]
    json: bool,
}

impl IndexArgs {
    /// Whether `--json` was given.
    pub(crate) fn json(&self) -> bool {
        self.json
    }
}

/// One link of a page: the path relative to the page, and the file's hash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
struct Link {
    href: String,
    name: String,
    sha256: String,
}

/// One page written.
#[derive(Debug, Clone, Serialize)]
struct Page {
    path: PathBuf,
    title: String,
    links: Vec<Link>,
}

/// What `index` wrote (text, or JSON with `--json`: docs/formats.md).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexReport {
    schema: u32,
    pages: Vec<Page>,
}

impl IndexReport {
    /// One line per page.
    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        for page in &self.pages {
            let _ = writeln!(
                out,
                "wrote {} ({} packages)",
                page.path.display(),
                page.links.len()
            );
        }
        out
    }

    /// Pretty JSON, keys in schema order, one final newline.
    pub(crate) fn to_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).expect("the report serialises");
        out.push('\n');
        out
    }
}

/// `therock-package index`.
pub(crate) fn index(args: &IndexArgs) -> Result<IndexReport> {
    let dir = &args.dir;
    if !dir.is_dir() {
        bail!(
            "{} is not a directory; pass the dist directory to index",
            dir.display()
        );
    }
    let packages = list_packages(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    if packages.is_empty() {
        bail!(
            "{} holds no wheel or sdist; build the packages first",
            dir.display()
        );
    }
    // Relative path inside `dir` → hash, and the top-level group.
    let mut groups: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for path in &packages {
        let rel = path
            .strip_prefix(dir)
            .expect("listed under dir")
            .to_string_lossy()
            .into_owned();
        let group = rel.rsplit_once('/').map_or("", |(g, _)| g).to_owned();
        let sha = sha256_file(path).with_context(|| format!("cannot read {}", path.display()))?;
        groups.entry(group).or_default().push((rel, sha));
    }
    let mut written = Vec::new();
    if args.per_family {
        let shared = groups.remove("").unwrap_or_default();
        if groups.is_empty() {
            bail!(
                "{} has no per-family subdirectories (dist/{{F}}/, written by legacy builds with several families); \
                 index it without --per-family",
                dir.display()
            );
        }
        let top: Vec<Link> = shared
            .iter()
            .map(|(rel, sha)| link(rel, rel, sha))
            .collect();
        written.push(write_page(
            &dir.join("index.html"),
            "ROCm Python packages",
            top,
        )?);
        for (family, files) in &groups {
            let mut links: Vec<Link> = files
                .iter()
                .map(|(rel, sha)| link(rel, &rel[family.len() + 1..], sha))
                .collect();
            let up = "../".repeat(family.split('/').count());
            for (rel, sha) in &shared {
                if !links.iter().any(|l| l.name == rel.as_str()) {
                    links.push(link(rel, &format!("{up}{rel}"), sha));
                }
            }
            let title = format!("ROCm Python packages for {family}");
            written.push(write_page(
                &dir.join(family).join("index.html"),
                &title,
                links,
            )?);
        }
    } else {
        let mut by_name: BTreeMap<String, &str> = BTreeMap::new();
        let mut links = Vec::new();
        for (rel, sha) in groups.values().flatten() {
            let name = rel.rsplit('/').next().unwrap_or(rel).to_owned();
            if let Some(other) = by_name.insert(name.clone(), rel) {
                bail!(
                    "{} holds {name} twice ({other} and {rel}); one page cannot offer both: \
                     use --per-family for a legacy release with several families",
                    dir.display()
                );
            }
            links.push(link(rel, rel, sha));
        }
        written.push(write_page(
            &dir.join("index.html"),
            "ROCm Python packages",
            links,
        )?);
    }
    Ok(IndexReport {
        schema: 1,
        pages: written,
    })
}

fn link(rel: &str, href: &str, sha256: &str) -> Link {
    Link {
        href: href
            .split('/')
            .map(percent_encode)
            .collect::<Vec<_>>()
            .join("/"),
        name: rel.rsplit('/').next().unwrap_or(rel).to_owned(),
        sha256: sha256.to_owned(),
    }
}

/// Writes a page atomically (a temporary file renamed over the old one).
fn write_page(path: &Path, title: &str, mut links: Vec<Link>) -> Result<Page> {
    links.sort();
    let html = render(title, &links);
    let tmp = path.with_file_name(format!(".index.html.{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(html.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(Page {
        path: path.to_owned(),
        title: title.to_owned(),
        links,
    })
}

/// The page: a PEP 503 simple-repository page pip and uv both read as
/// `--find-links` (and as a project page of a simple index).
fn render(title: &str, links: &[Link]) -> String {
    let title = html_escape(title);
    let mut out = format!(
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.0\">\n    <title>{title}</title>\n  </head>\n  <body>\n    <h1>{title}</h1>\n"
    );
    for l in links {
        let _ = writeln!(
            out,
            "    <a href=\"{}#sha256={}\">{}</a><br>",
            l.href,
            l.sha256,
            html_escape(&l.name)
        );
    }
    out.push_str("  </body>\n</html>\n");
    out
}

/// Percent-encodes everything but RFC 3986 unreserved characters (so a
/// local version's `+` becomes `%2B`).
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding() {
        assert_eq!(
            percent_encode("torch-2.1.0+rocm7.1-py3.whl"),
            "torch-2.1.0%2Brocm7.1-py3.whl"
        );
        assert_eq!(percent_encode("a b&c"), "a%20b%26c");
        assert_eq!(html_escape("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
    }

    #[test]
    fn page_is_sorted_and_escaped() {
        let links = vec![
            link("b/x+1.whl", "b/x+1.whl", "22"),
            link("a.tar.gz", "a.tar.gz", "11"),
        ];
        let mut sorted = links.clone();
        sorted.sort();
        let html = render("T&T", &sorted);
        let a = html.find("a.tar.gz#sha256=11").unwrap();
        let b = html.find("b/x%2B1.whl#sha256=22\">x+1.whl</a>").unwrap();
        assert!(a < b);
        assert!(html.contains("<title>T&amp;T</title>"));
    }
}
