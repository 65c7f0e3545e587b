//! ECMA-262 `pattern`s translated to the syntax of the Rust `regex` crate.
//!
//! JSON Schema says a `pattern` is an ECMA-262 regular expression, and the validators that
//! clients run (ajv and most others) evaluate it like `new RegExp(pattern, "u")`: over code
//! points, with ASCII `\d`, `\w` and `\b`, ECMA's own `\s` and `.`, and `^`/`$` at the ends
//! of the input only. The Rust `regex` crate reads the same text differently (its `\d` is every
//! Unicode digit), so a pattern is never handed to it as written: it is parsed here with the
//! ECMA-262 grammar (with the `u` flag) and rewritten into Rust syntax that matches exactly the
//! same strings (S2, issue 10). A pattern whose ECMA meaning Rust cannot express in linear
//! time (lookaround, backreferences) has no translation: it is rejected, never given another
//! meaning.
//!
//! This file is self-contained (std only) on purpose: tool-core compiles it as
//! `schema::pattern::ecma`, and tool-macros includes the same file with `#[path]`, so the macro
//! checks a pattern at compile time in the very dialect the parser enforces, without depending
//! on the runtime.
//!
//! Unicode property escapes (`\p{…}`) take the names ECMA-262 takes, spelled exactly
//! (General_Category values, binary properties, `Script=`/`Script_Extensions=` values); their
//! tables are those of the `regex` crate, so a character assigned in a newer Unicode version
//! than the crate's may be classified differently from a newer JavaScript engine.

use std::fmt::Write as _;

/// Why a pattern has no translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    /// Where the problem starts, in characters from the start of the pattern (0-based).
    pub(crate) at: usize,
    /// The pattern is valid ECMA-262 but cannot run on a linear-time engine (lookaround,
    /// backreferences, an oversized repetition); otherwise it is not ECMA-262 at all.
    pub(crate) unsupported: bool,
    /// What is wrong and what to write instead.
    pub(crate) message: String,
}

/// The Rust `regex` source that matches exactly the strings `source` matches as an ECMA-262
/// pattern with the `u` flag (no other flag), searched unanchored as JSON Schema does.
pub(crate) fn translate(source: &str) -> Result<String, Error> {
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

/// One member of a character class: a code point (a lone surrogate stays one), or a set
/// written as the body of a Rust class (`0-9`, `[^0-9]`, `\p{gc=Lu}`, or nothing at all).
enum ClassAtom {
    Char(u32),
    Set(String),
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

    /// After `[`: a class, written as one Rust class.
    fn class(&mut self, at: usize) -> Result<(), Error> {
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
    fn property(&mut self, at: usize, negated: bool) -> Result<String, Error> {
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

/// General_Category values and aliases as ECMA-262 spells them, with the short name.
pub(crate) const GENERAL_CATEGORIES: &[(&str, &str)] = &[
    ("C", "C"),
    ("Other", "C"),
    ("Cc", "Cc"),
    ("Control", "Cc"),
    ("cntrl", "Cc"),
    ("Cf", "Cf"),
    ("Format", "Cf"),
    ("Cn", "Cn"),
    ("Unassigned", "Cn"),
    ("Co", "Co"),
    ("Private_Use", "Co"),
    ("Cs", "Cs"),
    ("Surrogate", "Cs"),
    ("L", "L"),
    ("Letter", "L"),
    ("LC", "LC"),
    ("Cased_Letter", "LC"),
    ("Ll", "Ll"),
    ("Lowercase_Letter", "Ll"),
    ("Lm", "Lm"),
    ("Modifier_Letter", "Lm"),
    ("Lo", "Lo"),
    ("Other_Letter", "Lo"),
    ("Lt", "Lt"),
    ("Titlecase_Letter", "Lt"),
    ("Lu", "Lu"),
    ("Uppercase_Letter", "Lu"),
    ("M", "M"),
    ("Mark", "M"),
    ("Combining_Mark", "M"),
    ("Mc", "Mc"),
    ("Spacing_Mark", "Mc"),
    ("Me", "Me"),
    ("Enclosing_Mark", "Me"),
    ("Mn", "Mn"),
    ("Nonspacing_Mark", "Mn"),
    ("N", "N"),
    ("Number", "N"),
    ("Nd", "Nd"),
    ("Decimal_Number", "Nd"),
    ("digit", "Nd"),
    ("Nl", "Nl"),
    ("Letter_Number", "Nl"),
    ("No", "No"),
    ("Other_Number", "No"),
    ("P", "P"),
    ("Punctuation", "P"),
    ("punct", "P"),
    ("Pc", "Pc"),
    ("Connector_Punctuation", "Pc"),
    ("Pd", "Pd"),
    ("Dash_Punctuation", "Pd"),
    ("Pe", "Pe"),
    ("Close_Punctuation", "Pe"),
    ("Pf", "Pf"),
    ("Final_Punctuation", "Pf"),
    ("Pi", "Pi"),
    ("Initial_Punctuation", "Pi"),
    ("Po", "Po"),
    ("Other_Punctuation", "Po"),
    ("Ps", "Ps"),
    ("Open_Punctuation", "Ps"),
    ("S", "S"),
    ("Symbol", "S"),
    ("Sc", "Sc"),
    ("Currency_Symbol", "Sc"),
    ("Sk", "Sk"),
    ("Modifier_Symbol", "Sk"),
    ("Sm", "Sm"),
    ("Math_Symbol", "Sm"),
    ("So", "So"),
    ("Other_Symbol", "So"),
    ("Z", "Z"),
    ("Separator", "Z"),
    ("Zl", "Zl"),
    ("Line_Separator", "Zl"),
    ("Zp", "Zp"),
    ("Paragraph_Separator", "Zp"),
    ("Zs", "Zs"),
    ("Space_Separator", "Zs"),
];

/// Binary Unicode properties as ECMA-262 spells them (but `Changes_When_NFKC_Casefolded`,
/// which the `regex` crate lacks), with the long name.
pub(crate) const BINARY_PROPERTIES: &[(&str, &str)] = &[
    ("ASCII", "ASCII"),
    ("ASCII_Hex_Digit", "ASCII_Hex_Digit"),
    ("AHex", "ASCII_Hex_Digit"),
    ("Alphabetic", "Alphabetic"),
    ("Alpha", "Alphabetic"),
    ("Any", "Any"),
    ("Assigned", "Assigned"),
    ("Bidi_Control", "Bidi_Control"),
    ("Bidi_C", "Bidi_Control"),
    ("Bidi_Mirrored", "Bidi_Mirrored"),
    ("Bidi_M", "Bidi_Mirrored"),
    ("Case_Ignorable", "Case_Ignorable"),
    ("CI", "Case_Ignorable"),
    ("Cased", "Cased"),
    ("Changes_When_Casefolded", "Changes_When_Casefolded"),
    ("CWCF", "Changes_When_Casefolded"),
    ("Changes_When_Casemapped", "Changes_When_Casemapped"),
    ("CWCM", "Changes_When_Casemapped"),
    ("Changes_When_Lowercased", "Changes_When_Lowercased"),
    ("CWL", "Changes_When_Lowercased"),
    ("Changes_When_Titlecased", "Changes_When_Titlecased"),
    ("CWT", "Changes_When_Titlecased"),
    ("Changes_When_Uppercased", "Changes_When_Uppercased"),
    ("CWU", "Changes_When_Uppercased"),
    ("Dash", "Dash"),
    (
        "Default_Ignorable_Code_Point",
        "Default_Ignorable_Code_Point",
    ),
    ("DI", "Default_Ignorable_Code_Point"),
    ("Deprecated", "Deprecated"),
    ("Dep", "Deprecated"),
    ("Diacritic", "Diacritic"),
    ("Dia", "Diacritic"),
    ("Emoji", "Emoji"),
    ("Emoji_Component", "Emoji_Component"),
    ("EComp", "Emoji_Component"),
    ("Emoji_Modifier", "Emoji_Modifier"),
    ("EMod", "Emoji_Modifier"),
    ("Emoji_Modifier_Base", "Emoji_Modifier_Base"),
    ("EBase", "Emoji_Modifier_Base"),
    ("Emoji_Presentation", "Emoji_Presentation"),
    ("EPres", "Emoji_Presentation"),
    ("Extended_Pictographic", "Extended_Pictographic"),
    ("ExtPict", "Extended_Pictographic"),
    ("Extender", "Extender"),
    ("Ext", "Extender"),
    ("Grapheme_Base", "Grapheme_Base"),
    ("Gr_Base", "Grapheme_Base"),
    ("Grapheme_Extend", "Grapheme_Extend"),
    ("Gr_Ext", "Grapheme_Extend"),
    ("Hex_Digit", "Hex_Digit"),
    ("Hex", "Hex_Digit"),
    ("IDS_Binary_Operator", "IDS_Binary_Operator"),
    ("IDSB", "IDS_Binary_Operator"),
    ("IDS_Trinary_Operator", "IDS_Trinary_Operator"),
    ("IDST", "IDS_Trinary_Operator"),
    ("ID_Continue", "ID_Continue"),
    ("IDC", "ID_Continue"),
    ("ID_Start", "ID_Start"),
    ("IDS", "ID_Start"),
    ("Ideographic", "Ideographic"),
    ("Ideo", "Ideographic"),
    ("Join_Control", "Join_Control"),
    ("Join_C", "Join_Control"),
    ("Logical_Order_Exception", "Logical_Order_Exception"),
    ("LOE", "Logical_Order_Exception"),
    ("Lowercase", "Lowercase"),
    ("Lower", "Lowercase"),
    ("Math", "Math"),
    ("Noncharacter_Code_Point", "Noncharacter_Code_Point"),
    ("NChar", "Noncharacter_Code_Point"),
    ("Pattern_Syntax", "Pattern_Syntax"),
    ("Pat_Syn", "Pattern_Syntax"),
    ("Pattern_White_Space", "Pattern_White_Space"),
    ("Pat_WS", "Pattern_White_Space"),
    ("Quotation_Mark", "Quotation_Mark"),
    ("QMark", "Quotation_Mark"),
    ("Radical", "Radical"),
    ("Regional_Indicator", "Regional_Indicator"),
    ("RI", "Regional_Indicator"),
    ("Sentence_Terminal", "Sentence_Terminal"),
    ("STerm", "Sentence_Terminal"),
    ("Soft_Dotted", "Soft_Dotted"),
    ("SD", "Soft_Dotted"),
    ("Terminal_Punctuation", "Terminal_Punctuation"),
    ("Term", "Terminal_Punctuation"),
    ("Unified_Ideograph", "Unified_Ideograph"),
    ("UIdeo", "Unified_Ideograph"),
    ("Uppercase", "Uppercase"),
    ("Upper", "Uppercase"),
    ("Variation_Selector", "Variation_Selector"),
    ("VS", "Variation_Selector"),
    ("White_Space", "White_Space"),
    ("space", "White_Space"),
    ("XID_Continue", "XID_Continue"),
    ("XIDC", "XID_Continue"),
    ("XID_Start", "XID_Start"),
    ("XIDS", "XID_Start"),
];

/// Script values as ECMA-262 spells them (long names and four-letter codes), with the long
/// name; `Katakana_Or_Hiragana`, which JavaScript engines refuse, is left out, and so is
/// `Unknown`, for which the `regex` crate has no class.
pub(crate) const SCRIPTS: &[(&str, &str)] = &[
    ("Adlam", "Adlam"),
    ("Adlm", "Adlam"),
    ("Aghb", "Caucasian_Albanian"),
    ("Ahom", "Ahom"),
    ("Anatolian_Hieroglyphs", "Anatolian_Hieroglyphs"),
    ("Arab", "Arabic"),
    ("Arabic", "Arabic"),
    ("Armenian", "Armenian"),
    ("Armi", "Imperial_Aramaic"),
    ("Armn", "Armenian"),
    ("Avestan", "Avestan"),
    ("Avst", "Avestan"),
    ("Bali", "Balinese"),
    ("Balinese", "Balinese"),
    ("Bamu", "Bamum"),
    ("Bamum", "Bamum"),
    ("Bass", "Bassa_Vah"),
    ("Bassa_Vah", "Bassa_Vah"),
    ("Batak", "Batak"),
    ("Batk", "Batak"),
    ("Beng", "Bengali"),
    ("Bengali", "Bengali"),
    ("Bhaiksuki", "Bhaiksuki"),
    ("Bhks", "Bhaiksuki"),
    ("Bopo", "Bopomofo"),
    ("Bopomofo", "Bopomofo"),
    ("Brah", "Brahmi"),
    ("Brahmi", "Brahmi"),
    ("Brai", "Braille"),
    ("Braille", "Braille"),
    ("Bugi", "Buginese"),
    ("Buginese", "Buginese"),
    ("Buhd", "Buhid"),
    ("Buhid", "Buhid"),
    ("Cakm", "Chakma"),
    ("Canadian_Aboriginal", "Canadian_Aboriginal"),
    ("Cans", "Canadian_Aboriginal"),
    ("Cari", "Carian"),
    ("Carian", "Carian"),
    ("Caucasian_Albanian", "Caucasian_Albanian"),
    ("Chakma", "Chakma"),
    ("Cham", "Cham"),
    ("Cher", "Cherokee"),
    ("Cherokee", "Cherokee"),
    ("Chorasmian", "Chorasmian"),
    ("Chrs", "Chorasmian"),
    ("Common", "Common"),
    ("Copt", "Coptic"),
    ("Coptic", "Coptic"),
    ("Cpmn", "Cypro_Minoan"),
    ("Cprt", "Cypriot"),
    ("Cuneiform", "Cuneiform"),
    ("Cypriot", "Cypriot"),
    ("Cypro_Minoan", "Cypro_Minoan"),
    ("Cyrillic", "Cyrillic"),
    ("Cyrl", "Cyrillic"),
    ("Deseret", "Deseret"),
    ("Deva", "Devanagari"),
    ("Devanagari", "Devanagari"),
    ("Diak", "Dives_Akuru"),
    ("Dives_Akuru", "Dives_Akuru"),
    ("Dogr", "Dogra"),
    ("Dogra", "Dogra"),
    ("Dsrt", "Deseret"),
    ("Dupl", "Duployan"),
    ("Duployan", "Duployan"),
    ("Egyp", "Egyptian_Hieroglyphs"),
    ("Egyptian_Hieroglyphs", "Egyptian_Hieroglyphs"),
    ("Elba", "Elbasan"),
    ("Elbasan", "Elbasan"),
    ("Elym", "Elymaic"),
    ("Elymaic", "Elymaic"),
    ("Ethi", "Ethiopic"),
    ("Ethiopic", "Ethiopic"),
    ("Gara", "Garay"),
    ("Garay", "Garay"),
    ("Geor", "Georgian"),
    ("Georgian", "Georgian"),
    ("Glag", "Glagolitic"),
    ("Glagolitic", "Glagolitic"),
    ("Gong", "Gunjala_Gondi"),
    ("Gonm", "Masaram_Gondi"),
    ("Goth", "Gothic"),
    ("Gothic", "Gothic"),
    ("Gran", "Grantha"),
    ("Grantha", "Grantha"),
    ("Greek", "Greek"),
    ("Grek", "Greek"),
    ("Gujarati", "Gujarati"),
    ("Gujr", "Gujarati"),
    ("Gukh", "Gurung_Khema"),
    ("Gunjala_Gondi", "Gunjala_Gondi"),
    ("Gurmukhi", "Gurmukhi"),
    ("Guru", "Gurmukhi"),
    ("Gurung_Khema", "Gurung_Khema"),
    ("Han", "Han"),
    ("Hang", "Hangul"),
    ("Hangul", "Hangul"),
    ("Hani", "Han"),
    ("Hanifi_Rohingya", "Hanifi_Rohingya"),
    ("Hano", "Hanunoo"),
    ("Hanunoo", "Hanunoo"),
    ("Hatr", "Hatran"),
    ("Hatran", "Hatran"),
    ("Hebr", "Hebrew"),
    ("Hebrew", "Hebrew"),
    ("Hira", "Hiragana"),
    ("Hiragana", "Hiragana"),
    ("Hluw", "Anatolian_Hieroglyphs"),
    ("Hmng", "Pahawh_Hmong"),
    ("Hmnp", "Nyiakeng_Puachue_Hmong"),
    ("Hung", "Old_Hungarian"),
    ("Imperial_Aramaic", "Imperial_Aramaic"),
    ("Inherited", "Inherited"),
    ("Inscriptional_Pahlavi", "Inscriptional_Pahlavi"),
    ("Inscriptional_Parthian", "Inscriptional_Parthian"),
    ("Ital", "Old_Italic"),
    ("Java", "Javanese"),
    ("Javanese", "Javanese"),
    ("Kaithi", "Kaithi"),
    ("Kali", "Kayah_Li"),
    ("Kana", "Katakana"),
    ("Kannada", "Kannada"),
    ("Katakana", "Katakana"),
    ("Kawi", "Kawi"),
    ("Kayah_Li", "Kayah_Li"),
    ("Khar", "Kharoshthi"),
    ("Kharoshthi", "Kharoshthi"),
    ("Khitan_Small_Script", "Khitan_Small_Script"),
    ("Khmer", "Khmer"),
    ("Khmr", "Khmer"),
    ("Khoj", "Khojki"),
    ("Khojki", "Khojki"),
    ("Khudawadi", "Khudawadi"),
    ("Kirat_Rai", "Kirat_Rai"),
    ("Kits", "Khitan_Small_Script"),
    ("Knda", "Kannada"),
    ("Krai", "Kirat_Rai"),
    ("Kthi", "Kaithi"),
    ("Lana", "Tai_Tham"),
    ("Lao", "Lao"),
    ("Laoo", "Lao"),
    ("Latin", "Latin"),
    ("Latn", "Latin"),
    ("Lepc", "Lepcha"),
    ("Lepcha", "Lepcha"),
    ("Limb", "Limbu"),
    ("Limbu", "Limbu"),
    ("Lina", "Linear_A"),
    ("Linb", "Linear_B"),
    ("Linear_A", "Linear_A"),
    ("Linear_B", "Linear_B"),
    ("Lisu", "Lisu"),
    ("Lyci", "Lycian"),
    ("Lycian", "Lycian"),
    ("Lydi", "Lydian"),
    ("Lydian", "Lydian"),
    ("Mahajani", "Mahajani"),
    ("Mahj", "Mahajani"),
    ("Maka", "Makasar"),
    ("Makasar", "Makasar"),
    ("Malayalam", "Malayalam"),
    ("Mand", "Mandaic"),
    ("Mandaic", "Mandaic"),
    ("Mani", "Manichaean"),
    ("Manichaean", "Manichaean"),
    ("Marc", "Marchen"),
    ("Marchen", "Marchen"),
    ("Masaram_Gondi", "Masaram_Gondi"),
    ("Medefaidrin", "Medefaidrin"),
    ("Medf", "Medefaidrin"),
    ("Meetei_Mayek", "Meetei_Mayek"),
    ("Mend", "Mende_Kikakui"),
    ("Mende_Kikakui", "Mende_Kikakui"),
    ("Merc", "Meroitic_Cursive"),
    ("Mero", "Meroitic_Hieroglyphs"),
    ("Meroitic_Cursive", "Meroitic_Cursive"),
    ("Meroitic_Hieroglyphs", "Meroitic_Hieroglyphs"),
    ("Miao", "Miao"),
    ("Mlym", "Malayalam"),
    ("Modi", "Modi"),
    ("Mong", "Mongolian"),
    ("Mongolian", "Mongolian"),
    ("Mro", "Mro"),
    ("Mroo", "Mro"),
    ("Mtei", "Meetei_Mayek"),
    ("Mult", "Multani"),
    ("Multani", "Multani"),
    ("Myanmar", "Myanmar"),
    ("Mymr", "Myanmar"),
    ("Nabataean", "Nabataean"),
    ("Nag_Mundari", "Nag_Mundari"),
    ("Nagm", "Nag_Mundari"),
    ("Nand", "Nandinagari"),
    ("Nandinagari", "Nandinagari"),
    ("Narb", "Old_North_Arabian"),
    ("Nbat", "Nabataean"),
    ("New_Tai_Lue", "New_Tai_Lue"),
    ("Newa", "Newa"),
    ("Nko", "Nko"),
    ("Nkoo", "Nko"),
    ("Nshu", "Nushu"),
    ("Nushu", "Nushu"),
    ("Nyiakeng_Puachue_Hmong", "Nyiakeng_Puachue_Hmong"),
    ("Ogam", "Ogham"),
    ("Ogham", "Ogham"),
    ("Ol_Chiki", "Ol_Chiki"),
    ("Ol_Onal", "Ol_Onal"),
    ("Olck", "Ol_Chiki"),
    ("Old_Hungarian", "Old_Hungarian"),
    ("Old_Italic", "Old_Italic"),
    ("Old_North_Arabian", "Old_North_Arabian"),
    ("Old_Permic", "Old_Permic"),
    ("Old_Persian", "Old_Persian"),
    ("Old_Sogdian", "Old_Sogdian"),
    ("Old_South_Arabian", "Old_South_Arabian"),
    ("Old_Turkic", "Old_Turkic"),
    ("Old_Uyghur", "Old_Uyghur"),
    ("Onao", "Ol_Onal"),
    ("Oriya", "Oriya"),
    ("Orkh", "Old_Turkic"),
    ("Orya", "Oriya"),
    ("Osage", "Osage"),
    ("Osge", "Osage"),
    ("Osma", "Osmanya"),
    ("Osmanya", "Osmanya"),
    ("Ougr", "Old_Uyghur"),
    ("Pahawh_Hmong", "Pahawh_Hmong"),
    ("Palm", "Palmyrene"),
    ("Palmyrene", "Palmyrene"),
    ("Pau_Cin_Hau", "Pau_Cin_Hau"),
    ("Pauc", "Pau_Cin_Hau"),
    ("Perm", "Old_Permic"),
    ("Phag", "Phags_Pa"),
    ("Phags_Pa", "Phags_Pa"),
    ("Phli", "Inscriptional_Pahlavi"),
    ("Phlp", "Psalter_Pahlavi"),
    ("Phnx", "Phoenician"),
    ("Phoenician", "Phoenician"),
    ("Plrd", "Miao"),
    ("Prti", "Inscriptional_Parthian"),
    ("Psalter_Pahlavi", "Psalter_Pahlavi"),
    ("Qaac", "Coptic"),
    ("Qaai", "Inherited"),
    ("Rejang", "Rejang"),
    ("Rjng", "Rejang"),
    ("Rohg", "Hanifi_Rohingya"),
    ("Runic", "Runic"),
    ("Runr", "Runic"),
    ("Samaritan", "Samaritan"),
    ("Samr", "Samaritan"),
    ("Sarb", "Old_South_Arabian"),
    ("Saur", "Saurashtra"),
    ("Saurashtra", "Saurashtra"),
    ("Sgnw", "SignWriting"),
    ("Sharada", "Sharada"),
    ("Shavian", "Shavian"),
    ("Shaw", "Shavian"),
    ("Shrd", "Sharada"),
    ("Sidd", "Siddham"),
    ("Siddham", "Siddham"),
    ("SignWriting", "SignWriting"),
    ("Sind", "Khudawadi"),
    ("Sinh", "Sinhala"),
    ("Sinhala", "Sinhala"),
    ("Sogd", "Sogdian"),
    ("Sogdian", "Sogdian"),
    ("Sogo", "Old_Sogdian"),
    ("Sora", "Sora_Sompeng"),
    ("Sora_Sompeng", "Sora_Sompeng"),
    ("Soyo", "Soyombo"),
    ("Soyombo", "Soyombo"),
    ("Sund", "Sundanese"),
    ("Sundanese", "Sundanese"),
    ("Sunu", "Sunuwar"),
    ("Sunuwar", "Sunuwar"),
    ("Sylo", "Syloti_Nagri"),
    ("Syloti_Nagri", "Syloti_Nagri"),
    ("Syrc", "Syriac"),
    ("Syriac", "Syriac"),
    ("Tagalog", "Tagalog"),
    ("Tagb", "Tagbanwa"),
    ("Tagbanwa", "Tagbanwa"),
    ("Tai_Le", "Tai_Le"),
    ("Tai_Tham", "Tai_Tham"),
    ("Tai_Viet", "Tai_Viet"),
    ("Takr", "Takri"),
    ("Takri", "Takri"),
    ("Tale", "Tai_Le"),
    ("Talu", "New_Tai_Lue"),
    ("Tamil", "Tamil"),
    ("Taml", "Tamil"),
    ("Tang", "Tangut"),
    ("Tangsa", "Tangsa"),
    ("Tangut", "Tangut"),
    ("Tavt", "Tai_Viet"),
    ("Telu", "Telugu"),
    ("Telugu", "Telugu"),
    ("Tfng", "Tifinagh"),
    ("Tglg", "Tagalog"),
    ("Thaa", "Thaana"),
    ("Thaana", "Thaana"),
    ("Thai", "Thai"),
    ("Tibetan", "Tibetan"),
    ("Tibt", "Tibetan"),
    ("Tifinagh", "Tifinagh"),
    ("Tirh", "Tirhuta"),
    ("Tirhuta", "Tirhuta"),
    ("Tnsa", "Tangsa"),
    ("Todhri", "Todhri"),
    ("Todr", "Todhri"),
    ("Toto", "Toto"),
    ("Tulu_Tigalari", "Tulu_Tigalari"),
    ("Tutg", "Tulu_Tigalari"),
    ("Ugar", "Ugaritic"),
    ("Ugaritic", "Ugaritic"),
    ("Vai", "Vai"),
    ("Vaii", "Vai"),
    ("Vith", "Vithkuqi"),
    ("Vithkuqi", "Vithkuqi"),
    ("Wancho", "Wancho"),
    ("Wara", "Warang_Citi"),
    ("Warang_Citi", "Warang_Citi"),
    ("Wcho", "Wancho"),
    ("Xpeo", "Old_Persian"),
    ("Xsux", "Cuneiform"),
    ("Yezi", "Yezidi"),
    ("Yezidi", "Yezidi"),
    ("Yi", "Yi"),
    ("Yiii", "Yi"),
    ("Zanabazar_Square", "Zanabazar_Square"),
    ("Zanb", "Zanabazar_Square"),
    ("Zinh", "Inherited"),
    ("Zyyy", "Common"),
];
