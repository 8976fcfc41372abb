//! Man pages from a program's `clap` definition: one for the program and
//! one per visible command (`therock-package-build.1`), as `cargo xtask
//! man` installs them. Each page has clap's sections, then EXAMPLES (the
//! command's `after_help`, which starts with `Examples:`), EXIT STATUS and
//! ENVIRONMENT (the program's [`Extras`]).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap_mangen::Man;

/// A page that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the man page {path}; check that the directory is writable")]
pub struct ManPageError {
    /// The page.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The sections of every page that clap does not know.
#[derive(Debug, Clone, Copy)]
pub struct Extras {
    /// Each exit status and what it means.
    pub exit_status: &'static [(&'static str, &'static str)],
    /// Each environment variable the program reads and what it does.
    pub environment: &'static [(&'static str, &'static str)],
}

/// Writes `NAME.1` for `command` and `NAME-SUB.1` for every visible
/// subcommand (recursively) into `dir`, each atomically; returns the pages
/// in the order written (program first).
pub fn write_pages(
    command: &clap::Command,
    dir: &Path,
    extras: &Extras,
) -> Result<Vec<PathBuf>, ManPageError> {
    fs::create_dir_all(dir).map_err(|source| ManPageError {
        path: dir.to_owned(),
        source,
    })?;
    let mut command = command.clone().disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_tree(&command, dir, extras, &mut written)?;
    Ok(written)
}

fn write_tree(
    command: &clap::Command,
    dir: &Path,
    extras: &Extras,
    written: &mut Vec<PathBuf>,
) -> Result<(), ManPageError> {
    let man = Man::new(command.clone());
    let path = dir.join(man.get_filename());
    let page = render(&man, command, extras);
    page.and_then(|page| write_atomically(&path, &page))
        .map_err(|source| ManPageError {
            path: path.clone(),
            source,
        })?;
    written.push(path);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_tree(sub, dir, extras, written)?;
    }
    Ok(())
}

/// One page: clap's sections without its EXTRA section (the examples get
/// their own), then EXAMPLES, EXIT STATUS, ENVIRONMENT.
pub fn render(man: &Man, command: &clap::Command, extras: &Extras) -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut page)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut page)?;
    }
    if let Some(help) = command.get_after_help() {
        let text = help.to_string();
        let text = text.strip_prefix("Examples:").unwrap_or(&text);
        page.extend_from_slice(b".SH EXAMPLES\n.nf\n");
        for line in text.trim_matches('\n').lines() {
            page.extend_from_slice(roff_line(line).as_bytes());
            page.push(b'\n');
        }
        page.extend_from_slice(b".fi\n");
    }
    for (title, items) in [
        ("EXIT STATUS", extras.exit_status),
        ("ENVIRONMENT", extras.environment),
    ] {
        page.extend_from_slice(format!(".SH \"{title}\"\n").as_bytes());
        for (name, text) in items {
            page.extend_from_slice(
                format!(".TP\n\\fB{}\\fR\n{}\n", roff_line(name), roff_line(text)).as_bytes(),
            );
        }
    }
    if command.get_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    Ok(page)
}

/// One line of text as roff reads it literally: backslashes escaped, `-`
/// a real minus, a leading `.` or `'` not a request.
fn roff_line(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_examples_exit_status_and_environment() {
        let command = clap::Command::new("tool")
            .about("Does things.")
            .after_help("Examples:\n  tool --flag x\n  .dot first")
            .arg(clap::Arg::new("flag").long("flag"));
        let extras = Extras {
            exit_status: &[("0", "Done."), ("2", "Bad usage.")],
            environment: &[("NO_COLOR", "No colour.")],
        };
        let page = render(&Man::new(command.clone()), &command, &extras).unwrap();
        let page = String::from_utf8(page).unwrap();
        let tail = &page[page.find(".SH EXAMPLES").unwrap()..];
        insta::assert_snapshot!(tail, @r#"
            .SH EXAMPLES
            .nf
              tool \-\-flag x
              .dot first
            .fi
            .SH "EXIT STATUS"
            .TP
            \fB0\fR
            Done.
            .TP
            \fB2\fR
            Bad usage.
            .SH "ENVIRONMENT"
            .TP
            \fBNO_COLOR\fR
            No colour.
            "#);
    }
}
