//! Character classes (`[…]`) and property escapes (`\p{…}`).

use super::properties::{BINARY_PROPERTIES, GENERAL_CATEGORIES, SCRIPTS};
use super::{
    ANY, ANY_BODY, Error, NOTHING, Parser, class_escape_body, push_range, syntax, unsupported,
};

/// One member of a character class: a code point (a lone surrogate stays one), or a set
/// written as the body of a Rust class (`0-9`, `[^0-9]`, `\p{gc=Lu}`, or nothing at all).
enum ClassAtom {
    Char(u32),
    Set(String),
}

impl Parser {
    /// After `[`: a class, written as one Rust class.
    pub(super) fn class(&mut self, at: usize) -> Result<(), Error> {
        let negated = self.eat('^');
        let mut body = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(syntax(
                        at,
                        "unclosed character class `[`: close it with `]`, or write `\\[` for a \
                         literal bracket",
                    ));
                }
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let first_at = self.pos;
            let first = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let second = self.class_atom()?;
                match (first, second) {
                    (ClassAtom::Char(lo), ClassAtom::Char(hi)) if lo <= hi => {
                        push_range(&mut body, lo, hi);
                    }
                    (ClassAtom::Char(_), ClassAtom::Char(_)) => {
                        return Err(syntax(first_at, "range out of order in character class"));
                    }
                    _ => {
                        return Err(syntax(
                            first_at,
                            "a class escape such as `\\d` cannot bound a range with the `u` \
                             flag: put `-` last (`[\\d-]`) or escape it (`[\\d\\-x]`)",
                        ));
                    }
                }
            } else {
                match first {
                    ClassAtom::Char(c) => push_range(&mut body, c, c),
                    ClassAtom::Set(set) => body.push_str(&set),
                }
            }
        }
        self.out.push_str(&match (body.is_empty(), negated) {
            (true, false) => NOTHING.to_owned(),
            (true, true) => ANY.to_owned(),
            (false, false) => format!("[{body}]"),
            (false, true) => format!("[^{body}]"),
        });
        Ok(())
    }

    /// One ClassAtom: a character, or `\` and a ClassEscape.
    fn class_atom(&mut self) -> Result<ClassAtom, Error> {
        let at = self.pos;
        match self.next() {
            Some('\\') => {}
            Some(c) => return Ok(ClassAtom::Char(u32::from(c))),
            None => {
                return Err(syntax(at, "unclosed character class `[`"));
            }
        }
        let unit = match self.peek() {
            Some('b') => {
                self.pos += 1;
                0x08
            }
            Some(c @ ('d' | 'D' | 's' | 'S' | 'w' | 'W')) => {
                self.pos += 1;
                return Ok(ClassAtom::Set(class_escape_body(c)));
            }
            Some(c @ ('p' | 'P')) => {
                self.pos += 1;
                return Ok(ClassAtom::Set(self.property(at, c == 'P')?));
            }
            Some(c @ ('1'..='9' | 'B' | 'k')) => {
                return Err(syntax(
                    at,
                    format!("`\\{c}` is not allowed inside a character class with the `u` flag"),
                ));
            }
            _ => self.character_escape(at, true)?,
        };
        Ok(ClassAtom::Char(unit))
    }

    /// After `\p` or `\P`: `{Name}` or `{Name=Value}`, as the body of a Rust class.
    pub(super) fn property(&mut self, at: usize, negated: bool) -> Result<String, Error> {
        if !self.eat('{') {
            return Err(syntax(
                at,
                "`\\p` must be followed by a property in braces, such as `\\p{L}`",
            ));
        }
        let mut text = String::new();
        loop {
            match self.next() {
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => text.push(c),
                _ => {
                    return Err(syntax(
                        at,
                        "invalid property escape: write `\\p{Name}` or `\\p{Name=Value}`, such \
                         as `\\p{Lu}` or `\\p{Script=Greek}`",
                    ));
                }
            }
        }
        let unknown = || {
            syntax(
                at,
                format!(
                    "unknown Unicode property `\\p{{{text}}}`: names are case-sensitive, such \
                     as `\\p{{Lu}}`, `\\p{{Letter}}`, `\\p{{Alphabetic}}`, `\\p{{Script=Greek}}`"
                ),
            )
        };
        let rust = match text.split_once('=') {
            Some(("General_Category" | "gc", value)) => general_category(value),
            Some((name @ ("Script" | "sc" | "Script_Extensions" | "scx"), value)) => {
                let key = if name.starts_with("Script_") || name == "scx" {
                    "scx"
                } else {
                    "sc"
                };
                lookup(SCRIPTS, value).map(|script| format!("{key}={script}"))
            }
            Some(_) => None,
            None => general_category(&text)
                .or_else(|| lookup(BINARY_PROPERTIES, &text).map(str::to_owned)),
        };
        let Some(rust) = rust else {
            let value = text
                .split_once('=')
                .map_or(text.as_str(), |(_, value)| value);
            if ["Changes_When_NFKC_Casefolded", "CWKCF", "Unknown", "Zzzz"].contains(&value) {
                return Err(unsupported(
                    at,
                    format!("the Unicode property `\\p{{{text}}}` is not supported here"),
                ));
            }
            return Err(unknown());
        };
        // Surrogates never occur in a Rust string, and the `regex` crate has no class for them.
        if rust == "gc=Cs" {
            return Ok(if negated { ANY_BODY } else { "" }.to_owned());
        }
        Ok(format!("\\{}{{{rust}}}", if negated { 'P' } else { 'p' }))
    }
}

/// The Rust form of a General_Category value, `gc=` and its short name.
fn general_category(value: &str) -> Option<String> {
    lookup(GENERAL_CATEGORIES, value).map(|short| format!("gc={short}"))
}

fn lookup(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, canonical)| *canonical)
}
