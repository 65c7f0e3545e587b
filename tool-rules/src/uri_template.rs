//! URI templates of MCP resource templates (rule M7): the simple expansion of RFC 6570
//! (`test://orders/{id}/lines`), checked the same way by `#[resource]` at compile time and by
//! the server at build time, and matched against the URIs clients read.
//!
//! A template is literal text and variables `{name}` (letters, digits and `_`). Only simple
//! expansion is read: an operator (`{+path}`, `{?q}`, …), a modifier (`{id*}`, `{id:3}`) or a
//! list (`{a,b}`) is refused, and so are two variables with nothing between them, and a
//! variable followed by text that starts with a character a value may hold (`{id}x`), since
//! either would make a URI match the template in more than one way. So each URI matches in
//! one way at most, found in one pass over it.

use std::fmt;

/// The longest template accepted, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 1024;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text that a URI holds as it is.
    Literal(String),
    /// A variable: its name.
    Variable(String),
}

/// A checked URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    pieces: Vec<Piece>,
}

/// Why a template is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The template is empty.
    Empty,
    /// The template is longer than [`MAX_TEMPLATE_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// It does not start with a scheme (`name:`).
    NoScheme,
    /// A `{` at this byte is never closed, or a `}` at this byte was never opened.
    Unbalanced {
        /// The byte offset.
        at: usize,
    },
    /// A variable's name is empty or holds something other than letters, digits and `_`
    /// (an operator, a modifier, a list).
    BadVariable {
        /// What the braces held.
        name: String,
    },
    /// A variable appears twice.
    Duplicate {
        /// Its name.
        name: String,
    },
    /// A variable is followed by another, or by text starting with a character a value may
    /// hold: a URI could match in more than one way.
    Ambiguous {
        /// The variable's name.
        name: String,
    },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the URI template is empty"),
            Self::TooLong { len } => write!(
                f,
                "the URI template is {len} bytes long; at most {MAX_TEMPLATE_LEN} are allowed"
            ),
            Self::NoScheme => f.write_str(
                "the URI has no scheme: start it with one, as in `docs://guide` or `file:///a`",
            ),
            Self::Unbalanced { at } => write!(
                f,
                "the brace at byte {at} has no partner: write each variable as `{{name}}`"
            ),
            Self::BadVariable { name } => write!(
                f,
                "`{{{name}}}` is not a simple variable: name it with letters, digits and `_` \
                 only (operators, modifiers and lists of RFC 6570 are not supported)"
            ),
            Self::Duplicate { name } => write!(
                f,
                "the variable `{name}` appears twice: give each variable its own name"
            ),
            Self::Ambiguous { name } => write!(
                f,
                "the variable `{name}` is followed by another variable or by text that a value \
                 may hold: separate it with `/`, `?`, `&`, `=`, `,`, `;` or `:`"
            ),
        }
    }
}

impl std::error::Error for TemplateError {}

/// Whether a value of a variable may hold `c` as it is (RFC 3986 unreserved, and `%` of a
/// percent-encoded byte).
fn value_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'%')
}

/// Whether a URI or template starts with a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`).
pub fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

impl UriTemplate {
    /// Checks `source`.
    ///
    /// # Errors
    ///
    /// Returns the first [`TemplateError`] found.
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        if source.is_empty() {
            return Err(TemplateError::Empty);
        }
        if source.len() > MAX_TEMPLATE_LEN {
            return Err(TemplateError::TooLong { len: source.len() });
        }
        if !has_scheme(source) {
            return Err(TemplateError::NoScheme);
        }
        let pieces = split(source)?;
        check_pieces(&pieces)?;
        Ok(Self {
            source: source.to_owned(),
            pieces,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Its pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The names of its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// Whether the template has no variable (a plain URI).
    pub fn is_plain(&self) -> bool {
        self.variables().next().is_none()
    }

    /// The value of each variable in `uri`, percent-decoded, in the template's order; `None`
    /// when `uri` does not match or a value does not decode to UTF-8. Linear in `uri`.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let bytes = uri.as_bytes();
        let mut at = 0;
        let mut values = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => {
                    let rest = bytes.get(at..)?;
                    if !rest.starts_with(text.as_bytes()) {
                        return None;
                    }
                    at += text.len();
                }
                Piece::Variable(name) => {
                    let start = at;
                    while bytes.get(at).is_some_and(|&b| value_char(b)) {
                        at += 1;
                    }
                    let raw = &uri[start..at];
                    values.push((name.clone(), percent_decode(raw)?));
                }
            }
        }
        (at == bytes.len()).then_some(values)
    }
}

/// The template's literal text and variables.
fn split(source: &str) -> Result<Vec<Piece>, TemplateError> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = source.char_indices();
    while let Some((at, c)) = rest.next() {
        match c {
            '{' => {
                let close = source[at..]
                    .find('}')
                    .ok_or(TemplateError::Unbalanced { at })?;
                let name = &source[at + 1..at + close];
                if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    return Err(TemplateError::BadVariable {
                        name: name.to_owned(),
                    });
                }
                if !literal.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Variable(name.to_owned()));
                // Skip to the closing brace.
                for _ in 0..name.chars().count() + 1 {
                    rest.next();
                }
            }
            '}' => return Err(TemplateError::Unbalanced { at }),
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(pieces)
}

/// Each variable once, and each followed by the end or by text no value may start.
fn check_pieces(pieces: &[Piece]) -> Result<(), TemplateError> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let Piece::Variable(name) = piece else {
            continue;
        };
        if seen.contains(&name.as_str()) {
            return Err(TemplateError::Duplicate { name: name.clone() });
        }
        seen.push(name);
        let ambiguous = match pieces.get(i + 1) {
            None => false,
            Some(Piece::Variable(_)) => true,
            Some(Piece::Literal(text)) => text.bytes().next().is_none_or(value_char),
        };
        if ambiguous {
            return Err(TemplateError::Ambiguous { name: name.clone() });
        }
    }
    Ok(())
}

/// `raw` with its `%XX` escapes decoded; `None` for a bad escape or bytes that are not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(b);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m7_a_template_matches_its_uris_and_decodes_values() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["id"]);
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vec![("id".to_owned(), "123".to_owned())])
        );
        assert_eq!(
            t.matches("test://template/a%20b/data"),
            Some(vec![("id".to_owned(), "a b".to_owned())])
        );
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template/1/data/x"), None);
        assert_eq!(t.matches("test://template/%zz/data"), None);
        assert_eq!(t.matches("test://template/%ff/data"), None);
        assert_eq!(t.matches("other://x"), None);
    }

    #[test]
    fn m7_bad_templates_are_refused_with_the_reason() {
        use TemplateError::*;
        assert_eq!(UriTemplate::parse(""), Err(Empty));
        assert_eq!(UriTemplate::parse("no-scheme/{a}"), Err(NoScheme));
        assert_eq!(UriTemplate::parse("t://{a"), Err(Unbalanced { at: 4 }));
        assert_eq!(UriTemplate::parse("t://a}"), Err(Unbalanced { at: 5 }));
        assert!(matches!(
            UriTemplate::parse("t://{+a}"),
            Err(BadVariable { .. })
        ));
        assert!(matches!(
            UriTemplate::parse("t://{}"),
            Err(BadVariable { .. })
        ));
        assert!(matches!(
            UriTemplate::parse("t://{a}/{a}"),
            Err(Duplicate { .. })
        ));
        assert!(matches!(
            UriTemplate::parse("t://{a}{b}"),
            Err(Ambiguous { .. })
        ));
        assert!(matches!(
            UriTemplate::parse("t://{a}x"),
            Err(Ambiguous { .. })
        ));
        let long = format!("t://{}", "a".repeat(MAX_TEMPLATE_LEN));
        assert!(matches!(UriTemplate::parse(&long), Err(TooLong { .. })));
        assert!(UriTemplate::parse("t://static").unwrap().is_plain());
    }

    #[test]
    fn m7_matching_a_huge_uri_is_linear_and_refuses_it() {
        let t = UriTemplate::parse("t://{a}/end").unwrap();
        let huge = format!("t://{}", "a".repeat(1 << 20));
        assert_eq!(t.matches(&huge), None);
    }
}
