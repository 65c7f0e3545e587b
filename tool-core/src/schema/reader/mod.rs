//! A strict JSON reader over a call's argument text (S2, S4), driven value by value by the
//! parse of each type, so that the code a derived struct compiles to is one function over this
//! concrete reader rather than code generic over a decoder.
//!
//! It accepts exactly the text `serde_json` accepts from a `&str`: the same grammar, the same
//! escapes (a `\u` surrogate must be paired), no control character in a string, nesting of at
//! most 127 arrays and objects (serde_json's recursion limit of 128). Numbers other than short
//! integers are handed to serde_json's own number parsing, so that a value is the same
//! `serde_json::Number` in every build of that crate (`arbitrary_precision`, `float_roundtrip`).
//! Its cost is linear in the input: keys sent twice are found by a hash set past 16 members.

use std::borrow::Cow;

use crate::json::{DecodeError, Json};

/// How many arrays and objects may be open at once, plus one: serde_json's recursion limit.
const DEPTH: u16 = 128;

/// Why the reader stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The text is not JSON at this point.
    Syntax(Syntax),
    /// An object holds this key twice.
    DuplicateKey(String),
}

/// Where and how the text stops being JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax {
    /// The byte offset at which the reader stopped.
    pub at: usize,
    /// What it found wrong there.
    pub kind: SyntaxKind,
}

/// What is wrong with the text, named as serde_json names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyntaxKind {
    /// The text ends inside a value.
    EofWhileParsingValue,
    /// The text ends inside a string.
    EofWhileParsingString,
    /// The text ends inside an array.
    EofWhileParsingList,
    /// The text ends inside an object.
    EofWhileParsingObject,
    /// No value starts here.
    ExpectedSomeValue,
    /// A literal (`null`, `true`, `false`) is misspelt.
    ExpectedSomeIdent,
    /// A key is not followed by `:`.
    ExpectedColon,
    /// An item is not followed by `,` or `]`.
    ExpectedListCommaOrEnd,
    /// A member is not followed by `,` or `}`.
    ExpectedObjectCommaOrEnd,
    /// A key is not a string.
    KeyMustBeAString,
    /// A `,` before `]` or `}`.
    TrailingComma,
    /// Something follows the value.
    TrailingCharacters,
    /// A number is malformed.
    InvalidNumber,
    /// A number is too large for a double.
    NumberOutOfRange,
    /// An escape is not one of JSON's.
    InvalidEscape,
    /// A control character inside a string.
    ControlCharacterWhileParsingString,
    /// A `\u` surrogate without its pair.
    LoneSurrogate,
    /// Arrays and objects nested too deep.
    RecursionLimitExceeded,
}

impl SyntaxKind {
    /// The text serde_json gives this error.
    fn message(self) -> &'static str {
        match self {
            SyntaxKind::EofWhileParsingValue => "EOF while parsing a value",
            SyntaxKind::EofWhileParsingString => "EOF while parsing a string",
            SyntaxKind::EofWhileParsingList => "EOF while parsing a list",
            SyntaxKind::EofWhileParsingObject => "EOF while parsing an object",
            SyntaxKind::ExpectedSomeValue => "expected value",
            SyntaxKind::ExpectedSomeIdent => "expected ident",
            SyntaxKind::ExpectedColon => "expected `:`",
            SyntaxKind::ExpectedListCommaOrEnd => "expected `,` or `]`",
            SyntaxKind::ExpectedObjectCommaOrEnd => "expected `,` or `}`",
            SyntaxKind::KeyMustBeAString => "key must be a string",
            SyntaxKind::TrailingComma => "trailing comma",
            SyntaxKind::TrailingCharacters => "trailing characters",
            SyntaxKind::InvalidNumber => "invalid number",
            SyntaxKind::NumberOutOfRange => "number out of range",
            SyntaxKind::InvalidEscape => "invalid escape",
            SyntaxKind::ControlCharacterWhileParsingString => {
                "control character (\\u0000-\\u001F) found while parsing a string"
            }
            SyntaxKind::LoneSurrogate => "lone leading surrogate in hex escape",
            SyntaxKind::RecursionLimitExceeded => "recursion limit exceeded",
        }
    }
}

impl ReadError {
    /// The decode error a call reports for this error in `text`. A syntax error is described
    /// as serde_json describes it, position included: the text is decoded by it once more (a
    /// cold path, linear as the first).
    #[cold]
    #[inline(never)]
    pub fn into_decode(self, text: &str) -> DecodeError {
        match self {
            ReadError::DuplicateKey(key) => {
                DecodeError::DuplicateKey(crate::preview::preview_str(&key))
            }
            ReadError::Syntax(syntax) => match crate::json::decode_text(text) {
                Err(DecodeError::Syntax(message)) => DecodeError::Syntax(message),
                _ => DecodeError::Syntax(syntax.describe(text)),
            },
        }
    }
}

impl Syntax {
    /// "expected value at line 1 column 7", as serde_json writes it.
    fn describe(self, text: &str) -> String {
        let before = text.get(..self.at).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
        format!("{} at line {line} column {column}", self.kind.message())
    }
}

/// The reader: the text and how far it has been read.
#[derive(Debug)]
pub struct Reader<'t> {
    text: &'t str,
    pos: usize,
    /// How many more arrays and objects may open, plus one.
    depth: u16,
}

/// What a reader method returns.
pub(crate) type Read<T> = Result<T, ReadError>;

impl<'t> Reader<'t> {
    /// A reader at the start of `text`.
    pub fn new(text: &'t str) -> Self {
        Self {
            text,
            pos: 0,
            depth: DEPTH,
        }
    }

    fn bytes(&self) -> &'t [u8] {
        self.text.as_bytes()
    }

    /// The error `kind` at the current position.
    #[cold]
    fn fail<T>(&self, kind: SyntaxKind) -> Read<T> {
        Err(ReadError::Syntax(Syntax { at: self.pos, kind }))
    }

    /// Skips whitespace and returns the next byte, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Checks that nothing but whitespace follows the value read.
    ///
    /// # Errors
    ///
    /// Trailing characters.
    pub fn end(&mut self) -> Read<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => self.fail(SyntaxKind::TrailingCharacters),
        }
    }

    /// Reads `null` if it comes next; returns whether it did.
    ///
    /// # Errors
    ///
    /// A misspelt literal that starts with `n`.
    #[inline]
    pub fn null(&mut self) -> Read<bool> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Reads the literal `word` (its first byte has been seen).
    fn literal(&mut self, word: &[u8]) -> Read<()> {
        self.pos += 1;
        for &expected in &word[1..] {
            match self.bytes().get(self.pos) {
                None => return self.fail(SyntaxKind::EofWhileParsingValue),
                Some(&b) if b == expected => self.pos += 1,
                Some(_) => {
                    self.pos += 1;
                    return self.fail(SyntaxKind::ExpectedSomeIdent);
                }
            }
        }
        Ok(())
    }

    /// Opens a container whose first byte comes next.
    fn enter(&mut self) -> Read<()> {
        self.depth -= 1;
        if self.depth == 0 {
            return self.fail(SyntaxKind::RecursionLimitExceeded);
        }
        self.pos += 1;
        Ok(())
    }

    /// Opens an object if one comes next; returns whether it did. Read its members with
    /// [`next_key`](Self::next_key) and [`colon`](Self::colon).
    ///
    /// # Errors
    ///
    /// Nesting too deep.
    #[inline]
    pub fn open_object(&mut self) -> Read<bool> {
        if self.peek() == Some(b'{') {
            self.enter()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Opens an array if one comes next; returns whether it did. Read its items with
    /// [`next_item`](Self::next_item).
    ///
    /// # Errors
    ///
    /// Nesting too deep.
    #[inline]
    pub fn open_array(&mut self) -> Read<bool> {
        if self.peek() == Some(b'[') {
            self.enter()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// The next key of the open object, or `None` once its `}` is read. `first` is true until
    /// the first key is read.
    ///
    /// # Errors
    ///
    /// Syntax: a missing comma, a trailing comma, a key that is not a string, the end.
    #[inline]
    pub fn next_key(&mut self, first: &mut bool) -> Read<Option<Cow<'t, str>>> {
        let Some(next) = self.separated(
            b'}',
            first,
            SyntaxKind::ExpectedObjectCommaOrEnd,
            SyntaxKind::EofWhileParsingObject,
        )?
        else {
            return Ok(None);
        };
        match next {
            Some(b'"') => {
                self.pos += 1;
                self.string().map(Some)
            }
            Some(b'}') => self.fail(SyntaxKind::TrailingComma),
            Some(_) => self.fail(SyntaxKind::KeyMustBeAString),
            None => self.fail(SyntaxKind::EofWhileParsingValue),
        }
    }

    /// Past the separator before an object's next member or an array's next item: `None`
    /// once `close` is read (the container ends), else the byte that follows (`None` inside
    /// at the end of the text). `first` is true until the first one is found; anything but
    /// `close` or a comma after it is `unexpected`, the end of the text `eof`.
    #[inline]
    fn separated(
        &mut self,
        close: u8,
        first: &mut bool,
        unexpected: SyntaxKind,
        eof: SyntaxKind,
    ) -> Read<Option<Option<u8>>> {
        match self.peek() {
            Some(b) if b == close => {
                self.pos += 1;
                self.depth += 1;
                Ok(None)
            }
            Some(b',') if !*first => {
                self.pos += 1;
                Ok(Some(self.peek()))
            }
            Some(b) if *first => {
                *first = false;
                Ok(Some(Some(b)))
            }
            Some(_) => self.fail(unexpected),
            None => self.fail(eof),
        }
    }

    /// Reads the `:` between a key and its value.
    ///
    /// # Errors
    ///
    /// Anything else there.
    #[inline]
    pub fn colon(&mut self) -> Read<()> {
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => self.fail(SyntaxKind::ExpectedColon),
            None => self.fail(SyntaxKind::EofWhileParsingObject),
        }
    }

    /// Whether the open array has another item (then read it), else reads its `]`. `first` is
    /// true until the first item is found.
    ///
    /// # Errors
    ///
    /// Syntax: a missing comma, a trailing comma, the end.
    #[inline]
    pub fn next_item(&mut self, first: &mut bool) -> Read<bool> {
        let Some(next) = self.separated(
            b']',
            first,
            SyntaxKind::ExpectedListCommaOrEnd,
            SyntaxKind::EofWhileParsingList,
        )?
        else {
            return Ok(false);
        };
        match next {
            Some(b']') => self.fail(SyntaxKind::TrailingComma),
            Some(_) => Ok(true),
            None => self.fail(SyntaxKind::EofWhileParsingValue),
        }
    }

    /// Reads a string if one comes next.
    ///
    /// # Errors
    ///
    /// A malformed string.
    #[inline]
    pub fn string_if_next(&mut self) -> Read<Option<Cow<'t, str>>> {
        if self.peek() == Some(b'"') {
            self.pos += 1;
            return self.string().map(Some);
        }
        Ok(None)
    }

    /// Reads a number if one comes next.
    ///
    /// # Errors
    ///
    /// A malformed number, or one too large for a double.
    pub fn number_if_next(&mut self) -> Read<Option<serde_json::Number>> {
        if matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            return self.number().map(Some);
        }
        Ok(None)
    }

    /// Reads any value into a [`Json`]; an object's keys are checked for duplicates once the
    /// object is read.
    ///
    /// # Errors
    ///
    /// Syntax, or a key sent twice.
    pub fn value(&mut self) -> Read<Json> {
        match self.peek() {
            None => self.fail(SyntaxKind::EofWhileParsingValue),
            Some(b'n') => self.literal(b"null").map(|()| Json::Null),
            Some(b't') => self.literal(b"true").map(|()| Json::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|()| Json::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Json::Number),
            Some(b'"') => {
                self.pos += 1;
                self.string().map(|s| Json::String(s.into_owned()))
            }
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(_) => self.fail(SyntaxKind::ExpectedSomeValue),
        }
    }

    fn array(&mut self) -> Read<Json> {
        self.enter()?;
        let mut items = Vec::new();
        let mut first = true;
        while self.next_item(&mut first)? {
            items.push(self.value()?);
        }
        Ok(Json::Array(items))
    }

    fn object(&mut self) -> Read<Json> {
        self.enter()?;
        let mut members: Vec<(String, Json)> = Vec::new();
        let mut first = true;
        while let Some(key) = self.next_key(&mut first)? {
            let key = key.into_owned();
            self.colon()?;
            members.push((key, self.value()?));
        }
        if let Some(key) = crate::json::first_duplicate(&members) {
            return Err(ReadError::DuplicateKey(key.to_owned()));
        }
        Ok(Json::Object(members))
    }
}

mod scalars;
#[cfg(test)]
mod tests;
