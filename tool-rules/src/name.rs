//! Tool names: rule N1, the fix proposed for a name that breaks it, and the names the macros
//! derive (N2): a tool's name from its fn, its handle's type name from the tool's name.

use std::fmt;

/// The longest tool name, in bytes (N1).
pub const MAX_NAME_LEN: usize = 64;

/// Why a string is not a valid tool name (N1).
///
/// A valid name is 1–64 bytes of `a-z`, `0-9` and `-`, starts and ends with a letter or a
/// digit, and has no `--`. Such a name is accepted by every major model provider and by MCP.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    TooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// The name holds an upper-case ASCII letter.
    Uppercase {
        /// The offending character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// The name holds a character that is not ASCII.
    NonAscii {
        /// The offending character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// The name holds an ASCII character other than `a-z`, `0-9` and `-`.
    InvalidChar {
        /// The offending character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// The name starts with `-`.
    LeadingHyphen,
    /// The name ends with `-`.
    TrailingHyphen,
    /// The name holds `--`.
    DoubleHyphen {
        /// The byte offset of the first `-` of the pair.
        at: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("a tool name cannot be empty"),
            NameError::TooLong { len } => write!(
                f,
                "a tool name is at most {MAX_NAME_LEN} bytes long, this one has {len}"
            ),
            NameError::Uppercase { found, at } => {
                write!(f, "a tool name is lower case: found {found:?} at byte {at}")
            }
            NameError::NonAscii { found, at } => {
                write!(f, "a tool name is ASCII only: found {found:?} at byte {at}")
            }
            NameError::InvalidChar { found, at } => write!(
                f,
                "a tool name holds only `a-z`, `0-9` and `-`: found {found:?} at byte {at}"
            ),
            NameError::LeadingHyphen => {
                f.write_str("a tool name starts with a letter or a digit, not `-`")
            }
            NameError::TrailingHyphen => {
                f.write_str("a tool name ends with a letter or a digit, not `-`")
            }
            NameError::DoubleHyphen { at } => {
                write!(f, "a tool name cannot hold `--` (at byte {at})")
            }
        }
    }
}

impl std::error::Error for NameError {}

/// Checks a tool name against rule N1.
///
/// # Errors
///
/// Returns the first rule the name breaks.
///
/// ```
/// # use tool_rules::name::{check_name, NameError};
/// assert!(check_name("lookup-window").is_ok());
/// assert_eq!(check_name("Lookup"), Err(NameError::Uppercase { found: 'L', at: 0 }));
/// ```
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong { len: name.len() });
    }
    for (at, found) in name.char_indices() {
        match found {
            'a'..='z' | '0'..='9' | '-' => {}
            'A'..='Z' => return Err(NameError::Uppercase { found, at }),
            c if !c.is_ascii() => return Err(NameError::NonAscii { found, at }),
            _ => return Err(NameError::InvalidChar { found, at }),
        }
    }
    if name.starts_with('-') {
        return Err(NameError::LeadingHyphen);
    }
    if name.ends_with('-') {
        return Err(NameError::TrailingHyphen);
    }
    if let Some(at) = name.find("--") {
        return Err(NameError::DoubleHyphen { at });
    }
    Ok(())
}

/// Proposes the valid name nearest to `name`, or `None` when nothing of it can be kept.
///
/// Upper-case letters become lower case (a `camelCase` hump becomes a hyphen), `_`, `.`,
/// spaces and other separators become `-`, other characters are dropped, runs of hyphens
/// collapse, and the result is trimmed to [`MAX_NAME_LEN`] bytes.
///
/// ```
/// # use tool_rules::name::suggest_name;
/// assert_eq!(suggest_name("Lookup_Window").as_deref(), Some("lookup-window"));
/// assert_eq!(suggest_name("getWeather").as_deref(), Some("get-weather"));
/// assert_eq!(suggest_name("--a--b--").as_deref(), Some("a-b"));
/// assert_eq!(suggest_name("日本"), None);
/// ```
pub fn suggest_name(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut prev_lower_or_digit = false;
    for c in name.chars() {
        match c {
            'a'..='z' | '0'..='9' => {
                out.push(c);
                prev_lower_or_digit = true;
            }
            'A'..='Z' => {
                if prev_lower_or_digit {
                    out.push('-');
                }
                out.push(c.to_ascii_lowercase());
                prev_lower_or_digit = false;
            }
            c if c.is_ascii() => {
                out.push('-');
                prev_lower_or_digit = false;
            }
            _ => {}
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for c in out.chars() {
        if c == '-' && (collapsed.is_empty() || collapsed.ends_with('-')) {
            continue;
        }
        collapsed.push(c);
    }
    collapsed.truncate(MAX_NAME_LEN);
    while collapsed.ends_with('-') {
        collapsed.pop();
    }
    (!collapsed.is_empty()).then_some(collapsed)
}

/// The tool name derived from a function's identifier: `find_window` → `find-window`.
///
/// A raw identifier's `r#` prefix is dropped. The result is not checked; pass it to
/// [`check_name`].
pub fn name_from_fn(ident: &str) -> String {
    ident.trim_start_matches("r#").replace('_', "-")
}

/// The type name generated for a tool: `lookup-window` → `LookupWindow`.
///
/// ```
/// # use tool_rules::name::type_name_for;
/// assert_eq!(type_name_for("lookup-window"), "LookupWindow");
/// assert_eq!(type_name_for("v2-api"), "V2Api");
/// ```
pub fn type_name_for(tool_name: &str) -> String {
    let mut out = String::with_capacity(tool_name.len());
    for part in tool_name.split('-').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// A tool name that passed [`check_name`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolName(Box<str>);

impl ToolName {
    /// Checks `name` and keeps it.
    ///
    /// # Errors
    ///
    /// Returns the rule of N1 that `name` breaks.
    pub fn new(name: &str) -> Result<Self, NameError> {
        check_name(name)?;
        Ok(Self(name.into()))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // N1: every rule, and the boundaries of each.
    #[test]
    fn n1_accepts_valid_names() {
        for name in ["a", "0", "lookup-window", "a-1-b", &"x".repeat(64)] {
            assert_eq!(check_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn n1_rejects_each_broken_rule() {
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(
            check_name(&"x".repeat(65)),
            Err(NameError::TooLong { len: 65 })
        );
        assert_eq!(
            check_name("lookUp"),
            Err(NameError::Uppercase { found: 'U', at: 4 })
        );
        assert_eq!(
            check_name("a_b"),
            Err(NameError::InvalidChar { found: '_', at: 1 })
        );
        assert_eq!(
            check_name("café"),
            Err(NameError::NonAscii { found: 'é', at: 3 })
        );
        assert_eq!(check_name("-a"), Err(NameError::LeadingHyphen));
        assert_eq!(check_name("a-"), Err(NameError::TrailingHyphen));
        assert_eq!(check_name("a--b"), Err(NameError::DoubleHyphen { at: 1 }));
    }

    #[test]
    fn n2_suggestions_are_valid() {
        for bad in [
            "Lookup_Window",
            "a..b",
            "  x  ",
            &"ab_".repeat(40),
            "HTTPServer",
            "é-a",
        ] {
            let good = suggest_name(bad).expect("a suggestion");
            assert_eq!(check_name(&good), Ok(()), "{bad} -> {good}");
        }
    }

    #[test]
    fn derived_names() {
        assert_eq!(name_from_fn("find_window"), "find-window");
        assert_eq!(name_from_fn("r#match"), "match");
        assert_eq!(type_name_for("lookup-window"), "LookupWindow");
    }
}
