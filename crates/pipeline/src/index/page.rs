//! The HTML of the index pages: PEP 503 anchors carrying the PEP 658/714
//! and PEP 503 `data-` attributes, sorted, percent-encoded and escaped, so
//! the same release always gives the same bytes.

use std::fmt::Write as _;

/// One anchor of a page of files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FileLink {
    /// The text of the anchor: the file name.
    pub name: String,
    /// The path relative to the page, `/`-separated, not yet encoded.
    pub href: String,
    /// Hex sha256 of the file (the `#sha256=` fragment).
    pub sha256: String,
    /// `Requires-Python` of the file's metadata (`data-requires-python`).
    pub requires_python: Option<String>,
    /// Hex sha256 of the `.metadata` file beside it (PEP 658/714).
    pub core_metadata_sha256: Option<String>,
}

/// A page of files: the flat find-links page, or one project's page of
/// a simple index.
pub(crate) fn files_page(title: &str, links: &[FileLink]) -> String {
    let mut out = head(title);
    for link in links {
        let _ = write!(
            out,
            "    <a href=\"{}#sha256={}\"",
            encode_path(&link.href),
            link.sha256
        );
        if let Some(spec) = &link.requires_python {
            let _ = write!(out, " data-requires-python=\"{}\"", html_escape(spec));
        }
        if let Some(sha) = &link.core_metadata_sha256 {
            // PEP 714's name, and PEP 658's for clients older than it.
            let _ = write!(
                out,
                " data-core-metadata=\"sha256={sha}\" data-dist-info-metadata=\"sha256={sha}\""
            );
        }
        let _ = writeln!(out, ">{}</a><br>", html_escape(&link.name));
    }
    out.push_str(TAIL);
    out
}

/// The root page of a simple index: one link per normalised project name.
pub(crate) fn projects_page(title: &str, projects: &[String]) -> String {
    let mut out = head(title);
    for project in projects {
        let _ = writeln!(
            out,
            "    <a href=\"{}/\">{}</a><br>",
            encode_path(project),
            html_escape(project)
        );
    }
    out.push_str(TAIL);
    out
}

fn head(title: &str) -> String {
    let title = html_escape(title);
    format!(
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.0\">\n    <title>{title}</title>\n  </head>\n  <body>\n    <h1>{title}</h1>\n"
    )
}

const TAIL: &str = "  </body>\n</html>\n";

/// Percent-encodes each `/`-separated segment: everything but RFC 3986
/// unreserved characters (so a local version's `+` becomes `%2B`).
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

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

    fn link(href: &str, sha256: &str) -> FileLink {
        FileLink {
            name: href.rsplit('/').next().unwrap().to_owned(),
            href: href.to_owned(),
            sha256: sha256.to_owned(),
            requires_python: None,
            core_metadata_sha256: None,
        }
    }

    #[test]
    fn encoding() {
        assert_eq!(
            percent_encode("torch-2.1.0+rocm7.1-py3.whl"),
            "torch-2.1.0%2Brocm7.1-py3.whl"
        );
        assert_eq!(percent_encode("a b&c"), "a%20b%26c");
        assert_eq!(encode_path("../../x+1.whl"), "../../x%2B1.whl");
        assert_eq!(html_escape("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
    }

    #[test]
    fn anchors_carry_hashes_escaped_requires_python_and_metadata() {
        let mut wheel = link("b/x+1.whl", "22");
        wheel.requires_python = Some(">=3.9,<4".into());
        wheel.core_metadata_sha256 = Some("33".into());
        let html = files_page("T&T", &[link("a.tar.gz", "11"), wheel]);
        insta::assert_snapshot!(html, @r#"
        <!DOCTYPE html>
        <html>
          <head>
            <meta name="pypi:repository-version" content="1.0">
            <title>T&amp;T</title>
          </head>
          <body>
            <h1>T&amp;T</h1>
            <a href="a.tar.gz#sha256=11">a.tar.gz</a><br>
            <a href="b/x%2B1.whl#sha256=22" data-requires-python="&gt;=3.9,&lt;4" data-core-metadata="sha256=33" data-dist-info-metadata="sha256=33">x+1.whl</a><br>
          </body>
        </html>
        "#);
    }

    #[test]
    fn projects_link_to_their_directories() {
        let html = projects_page("Simple index", &["rocm".into(), "rocm-sdk-core".into()]);
        assert!(html.contains("<a href=\"rocm/\">rocm</a><br>\n    <a href=\"rocm-sdk-core/\">"));
    }
}
