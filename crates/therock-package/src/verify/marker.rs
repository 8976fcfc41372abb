//! The part of PEP 508 a release's requirements use: `name[extras] spec ;
//! marker`, with markers over `extra`, `sys_platform`, `platform_system`
//! and `os_name` combined by `and`, `or` and parentheses.

use dist_info::requirement::Platform;
use dist_info::version::Version;

/// One `Requires-Dist` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The name as written.
    pub name: String,
    /// Comma-separated version clauses (`==7.1.0`, `>=1`), possibly none.
    pub specifiers: Vec<(String, String)>,
    /// The marker, parsed.
    pub marker: Option<Marker>,
    /// The line as written.
    pub text: String,
}

/// A parsed environment marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marker {
    And(Box<Marker>, Box<Marker>),
    Or(Box<Marker>, Box<Marker>),
    /// `variable op "value"` (either side may be the literal).
    Compare {
        variable: String,
        op: String,
        value: String,
    },
}

/// The environment a marker is evaluated in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Env<'a> {
    pub platform: Platform,
    pub extra: Option<&'a str>,
}

impl Marker {
    /// Evaluates the marker. Variables other than the four above (Python
    /// version, machine) do not vary across one release's platform set,
    /// so their comparisons count as true.
    pub(crate) fn eval(&self, env: Env<'_>) -> bool {
        match self {
            Self::And(a, b) => a.eval(env) && b.eval(env),
            Self::Or(a, b) => a.eval(env) || b.eval(env),
            Self::Compare {
                variable,
                op,
                value,
            } => {
                let actual = match variable.as_str() {
                    "extra" => match env.extra {
                        Some(e) => dist_info::requirement::normalize_extra(e),
                        None => return op == "!=",
                    },
                    "sys_platform" => env.platform.sys_platform().to_owned(),
                    "platform_system" => match env.platform {
                        Platform::Linux => "Linux".into(),
                        Platform::Windows => "Windows".into(),
                    },
                    "os_name" => match env.platform {
                        Platform::Linux => "posix".into(),
                        Platform::Windows => "nt".into(),
                    },
                    _ => return true,
                };
                let value = if variable == "extra" {
                    dist_info::requirement::normalize_extra(value)
                } else {
                    value.clone()
                };
                match op.as_str() {
                    "==" => actual == value,
                    "!=" => actual != value,
                    _ => true,
                }
            }
        }
    }
}

impl Requirement {
    /// Parses one `Requires-Dist` value.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (head, marker) = match text.split_once(';') {
            Some((h, m)) => (h.trim(), Some(parse_marker(m.trim())?)),
            None => (text.trim(), None),
        };
        let name_end = head
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(head.len());
        let name = head[..name_end].to_owned();
        if name.is_empty() {
            return Err(format!("no distribution name in {text:?}"));
        }
        let mut rest = head[name_end..].trim();
        if let Some(after) = rest.strip_prefix('[') {
            let close = after
                .find(']')
                .ok_or_else(|| format!("unclosed [ in {text:?}"))?;
            rest = after[close + 1..].trim();
        }
        let rest = rest.trim_start_matches('(').trim_end_matches(')').trim();
        let mut specifiers = Vec::new();
        for clause in rest.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let op_len = clause
                .find(|c: char| !matches!(c, '=' | '<' | '>' | '!' | '~'))
                .unwrap_or(clause.len());
            let (op, version) = clause.split_at(op_len);
            if op.is_empty() {
                return Err(format!("cannot read version clause {clause:?} in {text:?}"));
            }
            specifiers.push((op.to_owned(), version.trim().to_owned()));
        }
        Ok(Self {
            name,
            specifiers,
            marker,
            text: text.to_owned(),
        })
    }

    /// Whether the marker holds in `env` (no marker: always).
    pub(crate) fn applies(&self, env: Env<'_>) -> bool {
        self.marker.as_ref().is_none_or(|m| m.eval(env))
    }

    /// Whether `version` satisfies every version clause.
    pub(crate) fn admits(&self, version: &str) -> bool {
        self.specifiers.iter().all(|(op, want)| {
            if op == "==" || op == "===" {
                return want == version
                    || (op == "=="
                        && matches!((Version::parse(want), Version::parse(version)), (Ok(a), Ok(b)) if a == b));
            }
            let (Ok(want), Ok(have)) = (Version::parse(want), Version::parse(version)) else {
                return false;
            };
            match op.as_str() {
                "!=" => have != want,
                "<=" => have <= want,
                ">" => have > want,
                "<" => have < want,
                // `>=`, and `~=` read as at least the named version.
                _ => have >= want,
            }
        })
    }
}

fn parse_marker(text: &str) -> Result<Marker, String> {
    let tokens = tokenize(text)?;
    let mut pos = 0;
    let marker = parse_or(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected {:?} in marker {text:?}", tokens[pos]));
    }
    Ok(marker)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Op(String),
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' || c == ')' {
            tokens.push(if c == '(' { Token::Open } else { Token::Close });
            i += 1;
        } else if c == '"' || c == '\'' {
            let end = chars[i + 1..]
                .iter()
                .position(|&d| d == c)
                .ok_or_else(|| format!("unclosed quote in marker {text:?}"))?;
            tokens.push(Token::Quoted(chars[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else if matches!(c, '=' | '!' | '<' | '>' | '~') {
            let start = i;
            while i < chars.len() && matches!(chars[i], '=' | '!' | '<' | '>' | '~') {
                i += 1;
            }
            tokens.push(Token::Op(chars[start..i].iter().collect()));
        } else {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '.' | '-'))
            {
                i += 1;
            }
            if start == i {
                return Err(format!("unexpected {c:?} in marker {text:?}"));
            }
            tokens.push(Token::Word(chars[start..i].iter().collect()));
        }
    }
    Ok(tokens)
}

fn parse_or(tokens: &[Token], pos: &mut usize) -> Result<Marker, String> {
    let mut left = parse_and(tokens, pos)?;
    while tokens.get(*pos) == Some(&Token::Word("or".into())) {
        *pos += 1;
        left = Marker::Or(Box::new(left), Box::new(parse_and(tokens, pos)?));
    }
    Ok(left)
}

fn parse_and(tokens: &[Token], pos: &mut usize) -> Result<Marker, String> {
    let mut left = parse_atom(tokens, pos)?;
    while tokens.get(*pos) == Some(&Token::Word("and".into())) {
        *pos += 1;
        left = Marker::And(Box::new(left), Box::new(parse_atom(tokens, pos)?));
    }
    Ok(left)
}

fn parse_atom(tokens: &[Token], pos: &mut usize) -> Result<Marker, String> {
    if tokens.get(*pos) == Some(&Token::Open) {
        *pos += 1;
        let inner = parse_or(tokens, pos)?;
        if tokens.get(*pos) != Some(&Token::Close) {
            return Err("missing ) in marker".into());
        }
        *pos += 1;
        return Ok(inner);
    }
    let (Some(left), Some(Token::Op(op)), Some(right)) =
        (tokens.get(*pos), tokens.get(*pos + 1), tokens.get(*pos + 2))
    else {
        return Err(format!(
            "expected `variable op \"value\"` at token {}",
            *pos
        ));
    };
    *pos += 3;
    let (variable, value) = match (left, right) {
        (Token::Word(v), Token::Quoted(q)) | (Token::Quoted(q), Token::Word(v)) => {
            (v.clone(), q.clone())
        }
        _ => return Err(format!("cannot read comparison {left:?} {op} {right:?}")),
    };
    Ok(Marker::Compare {
        variable,
        op: op.clone(),
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(platform: Platform, extra: Option<&str>) -> Env<'_> {
        Env { platform, extra }
    }

    #[test]
    fn pins_with_extra_and_platform() {
        let r = Requirement::parse(
            r#"rocm-sdk-device-gfx942==7.1.0; extra == "device-gfx942" and sys_platform == "linux""#,
        )
        .unwrap();
        assert_eq!(r.name, "rocm-sdk-device-gfx942");
        assert!(r.admits("7.1.0") && !r.admits("7.1.1"));
        assert!(r.applies(env(Platform::Linux, Some("device_gfx942"))));
        assert!(!r.applies(env(Platform::Windows, Some("device-gfx942"))));
        assert!(!r.applies(env(Platform::Linux, None)));
    }

    #[test]
    fn or_parentheses_and_ranges() {
        let r = Requirement::parse(
            r#"foo[bar] (>=1.0, <2) ; (sys_platform == 'win32' or os_name == "posix") and python_version >= "3.9""#,
        )
        .unwrap();
        assert!(r.admits("1.5") && !r.admits("2.0") && !r.admits("0.9"));
        assert!(r.applies(env(Platform::Linux, None)));
        assert!(r.applies(env(Platform::Windows, None)));
        assert!(Requirement::parse("; x").is_err());
        assert!(Requirement::parse("foo; sys_platform ==").is_err());
        assert!(Requirement::parse("foo; (sys_platform == 'linux'").is_err());
    }
}
