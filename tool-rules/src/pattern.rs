//! ECMA-262 `pattern`s translated to the syntax of the Rust `regex` crate.
//!
//! JSON Schema says a `pattern` is an ECMA-262 regular expression, and the validators that
//! clients run (ajv and most others) evaluate it like `new RegExp(pattern, "u")`: over code
//! points, with ASCII `\d`, `\w` and `\b`, ECMA's own `\s` and `.`, and `^`/`$` at the ends
//! of the input only. The Rust `regex` crate reads the same text differently (its `\d` is every
//! Unicode digit), so a pattern is never handed to it as written: it is parsed here with the
//! ECMA-262 grammar (with the `u` flag) and rewritten into Rust syntax that matches exactly the
//! same strings (S2). A pattern whose ECMA meaning Rust cannot express in linear
//! time (lookaround, backreferences) has no translation: it is rejected, never given another
//! meaning.
//!
//! It is std only on purpose: tool-core compiles the translation with the `regex` crate
//! (`tool_core::schema::Pattern`), and tool-macros checks a pattern with it at compile time,
//! so a pattern is checked in the very dialect the parser enforces, without the macros
//! depending on the runtime.
//!
//! Unicode property escapes (`\p{…}`) take the names ECMA-262 takes, spelled exactly
//! (General_Category values, binary properties, `Script=`/`Script_Extensions=` values); their
//! tables are those of the `regex` crate, so a character assigned in a newer Unicode version
//! than the crate's may be classified differently from a newer JavaScript engine.

mod class;
mod properties;

use std::fmt::{self, Write as _};

pub use properties::{BINARY_PROPERTIES, GENERAL_CATEGORIES, SCRIPTS};

/// Why a pattern has no translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Where the problem starts, in characters from the start of the pattern (0-based).
    pub at: usize,
    /// The pattern is valid ECMA-262 but cannot run on a linear-time engine (lookaround,
    /// backreferences, an oversized repetition); otherwise it is not ECMA-262 at all.
    pub unsupported: bool,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at + 1;
        match self.unsupported {
            true => write!(f, "unsupported pattern at character {at}: {}", self.message),
            false => write!(f, "invalid pattern at character {at}: {}", self.message),
        }
    }
}

impl std::error::Error for Error {}

/// The Rust `regex` source that matches exactly the strings `source` matches as an ECMA-262
/// pattern with the `u` flag (no other flag), searched unanchored as JSON Schema does.
///
/// # Errors
///
/// Returns where and why `source` has no translation: it is not ECMA-262, or it is but has no
/// linear-time meaning (lookaround, backreferences).
pub fn translate(source: &str) -> Result<String, Error> {
    let mut parser = Parser {
        chars: source.chars().collect(),
        pos: 0,
        out: String::with_capacity(source.len() * 2),
        names: Vec::new(),
        captures: 0,
        references: Vec::new(),
        depth: 0,
        unsupported: None,
    };
    parser.disjunction()?;
    if parser.pos < parser.chars.len() {
        // `disjunction` stops only at the end or at a `)` that closes no group.
        return Err(syntax(
            parser.pos,
            "unmatched `)`: write `\\)` for a literal parenthesis",
        ));
    }
    // Syntax errors first: a pattern that is not ECMA-262 is reported as such, even when it
    // also uses something unsupported.
    for (at, reference) in &parser.references {
        let found = match reference {
            Reference::Number(n) => usize::try_from(*n).is_ok_and(|n| n <= parser.captures),
            Reference::Name(name) => parser.names.contains(name),
        };
        if !found {
            return Err(syntax(*at, "the backreference refers to no group"));
        }
    }
    match parser.unsupported {
        Some(e) => Err(e),
        None => Ok(parser.out),
    }
}

/// The deepest nesting of groups accepted (the `regex` crate has its own limit too).
const MAX_DEPTH: usize = 200;
/// `.`: any code point but the ECMA-262 line terminators.
const DOT: &str = r"[^\n\r\x{2028}\x{2029}]";
/// Matches no string (a lone surrogate, `[]`, `\p{Cs}`: nothing a Rust string can hold).
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";
/// Matches every code point (`[^]`).
const ANY: &str = r"[\x{0}-\x{10FFFF}]";
/// The body of a class of every code point.
const ANY_BODY: &str = r"\x{0}-\x{10FFFF}";
/// `\d` inside a class.
const DIGIT_BODY: &str = "0-9";
/// `\w` inside a class: ASCII only, since no `i` flag is involved.
const WORD_BODY: &str = "0-9A-Za-z_";
/// `\s` inside a class: ECMA-262 WhiteSpace (with every `Zs` code point) and LineTerminator.
/// U+0085 and U+180E are not in it.
const SPACE_BODY: &str = r"\t\n\x{B}\x{C}\r\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// An ASCII word boundary (`\b`): ECMA-262 word characters are `[A-Za-z0-9_]`.
const WORD_BOUNDARY: &str = r"(?-u:\b)";
/// Not an ASCII word boundary (`\B`). The `regex` crate never reports an empty match inside
/// a code point of a `&str`, so this only ever holds between code points, as in ECMA-262.
const NOT_WORD_BOUNDARY: &str = r"(?-u:\B)";

fn syntax(at: usize, message: impl Into<String>) -> Error {
    Error {
        at,
        unsupported: false,
        message: message.into(),
    }
}

fn unsupported(at: usize, message: impl Into<String>) -> Error {
    Error {
        at,
        unsupported: true,
        message: message.into(),
    }
}

/// Why lookaround is rejected, and what to write instead.
const NO_LOOKAROUND: &str = "patterns are matched in linear time, without lookaround; match \
     the text itself (`^[a-z\\d]*\\d[a-z\\d]*$` rather than `^(?=.*\\d)[a-z\\d]+$`), or check \
     the condition in a `validate = path` function";

/// Why backreferences are rejected, and what to write instead.
const NO_BACKREFERENCE: &str = "patterns are matched in linear time, without backreferences; \
     spell out what may repeat, or compare the parts in a `validate = path` function";

/// A backreference, kept to check that its group exists.
enum Reference {
    Number(u64),
    Name(String),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// The group names seen so far: ECMA-262 rejects a repeated one.
    names: Vec<String>,
    /// The capturing groups seen so far.
    captures: usize,
    /// The backreferences, with where they start.
    references: Vec<(usize, Reference)>,
    depth: usize,
    /// The first thing found that has no linear-time translation: reported once the whole
    /// pattern has been checked for syntax errors.
    unsupported: Option<Error>,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Disjunction :: Alternative ( `|` Alternative )*
    fn disjunction(&mut self) -> Result<(), Error> {
        loop {
            self.alternative()?;
            if !self.eat('|') {
                return Ok(());
            }
            self.out.push('|');
        }
    }

    /// Alternative :: Term*, up to a `|`, a `)` or the end.
    fn alternative(&mut self) -> Result<(), Error> {
        let start = self.out.len();
        while self.peek().is_some_and(|c| c != '|' && c != ')') {
            self.term()?;
        }
        if self.out.len() == start {
            self.out.push_str("(?:)");
        }
        Ok(())
    }

    /// Term :: Assertion | Atom Quantifier?
    fn term(&mut self) -> Result<(), Error> {
        let at = self.pos;
        let Some(c) = self.next() else {
            return Ok(());
        };
        match c {
            '^' => return self.assertion(at, r"\A", "`^`"),
            '$' => return self.assertion(at, r"\z", "`$`"),
            '\\' if self.eat('b') => return self.assertion(at, WORD_BOUNDARY, "`\\b`"),
            '\\' if self.eat('B') => return self.assertion(at, NOT_WORD_BOUNDARY, "`\\B`"),
            '\\' => self.atom_escape(at)?,
            '(' => {
                if self.group(at)? {
                    return self.assertion(at, "", "lookaround");
                }
            }
            '[' => self.class(at)?,
            '.' => self.out.push_str(DOT),
            '*' | '+' | '?' => {
                return Err(syntax(
                    at,
                    format!("nothing to repeat before `{c}`: write `\\{c}` for a literal `{c}`"),
                ));
            }
            '{' | '}' | ']' => {
                return Err(syntax(
                    at,
                    format!(
                        "a lone `{c}` is not allowed with the `u` flag: write `\\{c}` for a \
                         literal `{c}`"
                    ),
                ));
            }
            c => push_literal(&mut self.out, u32::from(c)),
        }
        self.quantifier()
    }

    /// An assertion: written out, and never repeated (the `u` flag forbids it).
    fn assertion(&mut self, at: usize, rust: &str, what: &str) -> Result<(), Error> {
        self.out.push_str(rust);
        match self.peek() {
            Some(c @ ('*' | '+' | '?' | '{')) => Err(syntax(
                self.pos,
                format!(
                    "the assertion {what} at character {} cannot be repeated by `{c}`",
                    at + 1
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Quantifier :: (`*` | `+` | `?` | `{n}` | `{n,}` | `{n,m}`) `?`?
    fn quantifier(&mut self) -> Result<(), Error> {
        let at = self.pos;
        match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                self.out.push(c);
            }
            Some('{') => {
                self.pos += 1;
                let incomplete = || {
                    syntax(
                        at,
                        "incomplete quantifier `{`: write `{n}`, `{n,}` or `{n,m}`, or `\\{` for \
                         a literal brace",
                    )
                };
                if self.peek() == Some(',') {
                    return Err(syntax(
                        at,
                        "`{,n}` is not an ECMA-262 quantifier: write `{0,n}`",
                    ));
                }
                let min = self.decimal(at)?.ok_or_else(incomplete)?;
                let ranged = self.eat(',');
                let max = if ranged {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.decimal(at)?.ok_or_else(incomplete)?)
                    }
                } else {
                    Some(min)
                };
                if !self.eat('}') {
                    return Err(incomplete());
                }
                match max {
                    Some(max) if max < min => {
                        return Err(syntax(
                            at,
                            format!("numbers out of order in the quantifier `{{{min},{max}}}`"),
                        ));
                    }
                    Some(_) if !ranged => {
                        let _ = write!(self.out, "{{{min}}}");
                    }
                    Some(max) => {
                        let _ = write!(self.out, "{{{min},{max}}}");
                    }
                    None => {
                        let _ = write!(self.out, "{{{min},}}");
                    }
                }
            }
            _ => return Ok(()),
        }
        if self.eat('?') {
            self.out.push('?');
        }
        Ok(())
    }

    /// A decimal repetition count, if digits follow.
    fn decimal(&mut self, at: usize) -> Result<Option<u32>, Error> {
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            value = value.saturating_mul(10).saturating_add(u64::from(d));
        }
        if self.pos == start {
            return Ok(None);
        }
        u32::try_from(value).map(Some).map_err(|_| {
            unsupported(
                at,
                format!(
                    "the repetition count {value} is too large: counts go up to {}",
                    u32::MAX
                ),
            )
        })
    }

    /// After `(`: a group; or a lookaround, which is unsupported (and then `true`: it is
    /// an assertion, which cannot be repeated).
    fn group(&mut self, at: usize) -> Result<bool, Error> {
        let mut lookaround = None;
        if self.eat('?') {
            match self.next() {
                Some(':') => {}
                Some('=') => lookaround = Some("lookahead `(?=…)`"),
                Some('!') => lookaround = Some("negative lookahead `(?!…)`"),
                Some('<') if self.eat('=') => lookaround = Some("lookbehind `(?<=…)`"),
                Some('<') if self.eat('!') => lookaround = Some("negative lookbehind `(?<!…)`"),
                Some('<') => {
                    let name = self.group_name(at)?;
                    if self.names.contains(&name) {
                        return Err(syntax(
                            at,
                            format!(
                                "the group name `{name}` is used twice: give each group its \
                                 own name"
                            ),
                        ));
                    }
                    self.names.push(name);
                    self.captures += 1;
                }
                _ => {
                    return Err(syntax(
                        at,
                        "invalid group `(?`: ECMA-262 patterns have `(…)`, `(?:…)` and \
                         `(?<name>…)`; write `\\(` for a literal parenthesis",
                    ));
                }
            }
        } else {
            self.captures += 1;
        }
        if let Some(what) = lookaround {
            self.unsupport(unsupported(
                at,
                format!("{what} is not supported: {NO_LOOKAROUND}"),
            ));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(unsupported(
                at,
                format!("groups are nested more than {MAX_DEPTH} deep"),
            ));
        }
        // Captures change nothing about which strings match: every group is non-capturing.
        self.out.push_str("(?:");
        self.disjunction()?;
        if !self.eat(')') {
            return Err(syntax(
                at,
                "unclosed group `(`: close it with `)`, or write `\\(` for a literal parenthesis",
            ));
        }
        self.out.push(')');
        self.depth -= 1;
        Ok(lookaround.is_some())
    }

    /// Keeps the first unsupported construct, to report once the syntax is known to be valid.
    fn unsupport(&mut self, e: Error) {
        self.unsupported.get_or_insert(e);
    }

    /// After `(?<` or `\k<`: a group name up to `>`, which must be an identifier.
    fn group_name(&mut self, at: usize) -> Result<String, Error> {
        let mut name = String::new();
        loop {
            let here = self.pos;
            let c = match self.next() {
                Some('>') => break,
                Some('\\') if self.eat('u') => {
                    let unit = self.unicode_escape(here)?;
                    char::from_u32(unit).ok_or_else(|| bad_name(here))?
                }
                Some(c) => c,
                None => {
                    return Err(syntax(
                        at,
                        "unclosed group name `(?<`: end the name with `>`",
                    ));
                }
            };
            let ok = if name.is_empty() {
                is_id_start(c)
            } else {
                is_id_start(c) || is_id_continue(c)
            };
            if !ok {
                return Err(bad_name(here));
            }
            name.push(c);
        }
        if name.is_empty() {
            return Err(bad_name(at));
        }
        Ok(name)
    }

    /// After `\` outside a class (not `\b` or `\B`).
    fn atom_escape(&mut self, at: usize) -> Result<(), Error> {
        match self.peek() {
            Some(c @ ('d' | 'D' | 's' | 'S' | 'w' | 'W')) => {
                self.pos += 1;
                self.out.push_str(&standalone(&class_escape_body(c)));
            }
            Some(c @ ('p' | 'P')) => {
                self.pos += 1;
                let body = self.property(at, c == 'P')?;
                self.out.push_str(&standalone(&body));
            }
            Some('1'..='9') => {
                let mut number: u64 = 0;
                while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
                    self.pos += 1;
                    number = number.saturating_mul(10).saturating_add(u64::from(d));
                }
                self.references.push((at, Reference::Number(number)));
                self.unsupport(unsupported(
                    at,
                    format!("backreference `\\{number}` is not supported: {NO_BACKREFERENCE}"),
                ));
                // Never compiled: the translation fails with the error just kept.
                self.out.push_str(NOTHING);
            }
            Some('k') => {
                self.pos += 1;
                if !self.eat('<') {
                    return Err(syntax(
                        at,
                        "`\\k` must be followed by a group name, such as `\\k<year>`; write `k` \
                         alone for the letter",
                    ));
                }
                let name = self.group_name(at)?;
                self.unsupport(unsupported(
                    at,
                    format!("backreference `\\k<{name}>` is not supported: {NO_BACKREFERENCE}"),
                ));
                self.references.push((at, Reference::Name(name)));
                self.out.push_str(NOTHING);
            }
            _ => {
                let unit = self.character_escape(at, false)?;
                push_literal(&mut self.out, unit);
            }
        }
        Ok(())
    }

    /// After `\`: a CharacterEscape, as a code point (or a lone surrogate).
    fn character_escape(&mut self, at: usize, in_class: bool) -> Result<u32, Error> {
        let Some(c) = self.next() else {
            return Err(syntax(
                at,
                "`\\` at the end of the pattern: write `\\\\` for a backslash",
            ));
        };
        Ok(match c {
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'c' => match self.peek() {
                Some(letter) if letter.is_ascii_alphabetic() => {
                    self.pos += 1;
                    u32::from(letter) % 32
                }
                _ => {
                    return Err(syntax(
                        at,
                        "`\\c` must be followed by a letter, such as `\\cJ`",
                    ));
                }
            },
            '0' if self.peek().is_some_and(|d| d.is_ascii_digit()) => {
                return Err(syntax(
                    at,
                    "`\\0` cannot be followed by a digit with the `u` flag: write `\\x00` for \
                     NUL",
                ));
            }
            '0' => 0,
            'x' => match (self.hex_digit(), self.hex_digit()) {
                (Some(high), Some(low)) => high * 16 + low,
                _ => {
                    return Err(syntax(
                        at,
                        "`\\x` must be followed by two hex digits, such as `\\x41`",
                    ));
                }
            },
            'u' => self.unicode_escape(at)?,
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => u32::from(c),
            '-' if in_class => u32::from('-'),
            '-' => {
                return Err(syntax(
                    at,
                    "`\\-` is only allowed inside a class with the `u` flag: write `-` alone",
                ));
            }
            other => {
                return Err(syntax(
                    at,
                    format!(
                        "invalid escape `\\{other}`: with the `u` flag only `^$\\.*+?()[]{{}}|/` \
                         (and `-` in a class) can be escaped; write `{other}` alone if you \
                         mean the character"
                    ),
                ));
            }
        })
    }

    fn hex_digit(&mut self) -> Option<u32> {
        let d = self.peek()?.to_digit(16)?;
        self.pos += 1;
        Some(d)
    }

    /// After `\u`: `{hex…}` or four hex digits, a surrogate pair written as two escapes
    /// making one code point.
    fn unicode_escape(&mut self, at: usize) -> Result<u32, Error> {
        let invalid = || {
            syntax(
                at,
                "invalid Unicode escape: write `\\u` with four hex digits (`\\u00e9`) or a code \
                 point up to 10FFFF in braces (`\\u{1F600}`)",
            )
        };
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.hex_digit() {
                value = value.saturating_mul(16).saturating_add(d);
                digits += 1;
            }
            if digits == 0 || value > 0x10FFFF || !self.eat('}') {
                return Err(invalid());
            }
            return Ok(value);
        }
        let unit = self.four_hex().ok_or_else(invalid)?;
        if (0xD800..=0xDBFF).contains(&unit)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            let save = self.pos;
            self.pos += 2;
            match self.four_hex() {
                Some(low) if (0xDC00..=0xDFFF).contains(&low) => {
                    return Ok(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                }
                _ => self.pos = save,
            }
        }
        Ok(unit)
    }

    fn four_hex(&mut self) -> Option<u32> {
        let start = self.pos;
        let mut value = 0;
        for _ in 0..4 {
            match self.hex_digit() {
                Some(d) => value = value * 16 + d,
                None => {
                    self.pos = start;
                    return None;
                }
            }
        }
        Some(value)
    }
}

fn bad_name(at: usize) -> Error {
    syntax(
        at,
        "invalid group name: a name is an identifier, such as `(?<year>\\d{4})`",
    )
}

/// ID_Start, approximately: a name with a rare non-ASCII start character is refused.
fn is_id_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '$' || c == '_' || (!c.is_ascii() && c.is_alphabetic())
}

/// ID_Continue, approximately (as for [`is_id_start`]).
fn is_id_continue(c: char) -> bool {
    c.is_ascii_digit()
        || c == '\u{200C}'
        || c == '\u{200D}'
        || (!c.is_ascii() && c.is_alphanumeric())
}

/// The body of a Rust class for `\d`, `\D`, `\s`, `\S`, `\w` or `\W`.
fn class_escape_body(c: char) -> String {
    match c {
        'd' => DIGIT_BODY.to_owned(),
        'D' => format!("[^{DIGIT_BODY}]"),
        's' => SPACE_BODY.to_owned(),
        'S' => format!("[^{SPACE_BODY}]"),
        'w' => WORD_BODY.to_owned(),
        _ => format!("[^{WORD_BODY}]"),
    }
}

/// A class body as a whole Rust class (one atom that a quantifier can follow).
fn standalone(body: &str) -> String {
    if body.is_empty() {
        NOTHING.to_owned()
    } else {
        format!("[{body}]")
    }
}

fn is_surrogate(unit: u32) -> bool {
    (0xD800..=0xDFFF).contains(&unit)
}

/// One code point, outside a class. A lone surrogate can occur in no Rust string (nor in
/// any JSON text a parser accepts), so it matches nothing.
fn push_literal(out: &mut String, unit: u32) {
    match char::from_u32(unit) {
        Some(c) if c.is_ascii_alphanumeric() => out.push(c),
        Some(_) => {
            let _ = write!(out, "\\x{{{unit:X}}}");
        }
        None => out.push_str(NOTHING),
    }
}

/// A range of a class body, without the surrogates no Rust string holds.
fn push_range(body: &mut String, lo: u32, hi: u32) {
    let lo = if is_surrogate(lo) { 0xE000 } else { lo };
    let hi = if is_surrogate(hi) { 0xD7FF } else { hi };
    if lo == hi {
        let _ = write!(body, "\\x{{{lo:X}}}");
    } else if lo < hi {
        let _ = write!(body, "\\x{{{lo:X}}}-\\x{{{hi:X}}}");
    }
}
