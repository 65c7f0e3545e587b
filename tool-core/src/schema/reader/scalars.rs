//! Strings and numbers: the reader's scalars, read as serde_json reads them from a `&str`.

use std::borrow::Cow;

use serde_json::Number;

use super::{Read, Reader, SyntaxKind};

/// The most digits an integer may have to be read here rather than by serde_json: any
/// integer of 18 digits fits an `i64`.
const SHORT_DIGITS: usize = 18;

impl<'t> Reader<'t> {
    /// Reads a string whose opening quote has been read: borrowed from the text when it holds
    /// no escape.
    #[inline]
    pub(super) fn string(&mut self) -> Read<Cow<'t, str>> {
        let start = self.pos;
        self.pos = skip_plain(self.bytes(), self.pos);
        if self.bytes().get(self.pos) == Some(&b'"') {
            let text = self.text.get(start..self.pos).unwrap_or_default();
            self.pos += 1;
            return Ok(Cow::Borrowed(text));
        }
        self.string_rest(start)
    }

    /// The rest of a string from `start` on, when its first run of plain bytes ends in
    /// something other than its closing quote: an escape, a control character, the end.
    #[cold]
    #[inline(never)]
    fn string_rest(&mut self, start: usize) -> Read<Cow<'t, str>> {
        match self.bytes().get(self.pos) {
            None => self.fail(SyntaxKind::EofWhileParsingString),
            Some(b'\\') => {
                let mut out = String::from(self.text.get(start..self.pos).unwrap_or_default());
                self.escaped(&mut out).map(|()| Cow::Owned(out))
            }
            Some(_) => self.fail(SyntaxKind::ControlCharacterWhileParsingString),
        }
    }

    /// Reads the rest of a string from its first escape on, into `out`.
    fn escaped(&mut self, out: &mut String) -> Read<()> {
        let bytes = self.bytes();
        loop {
            let run = self.pos;
            self.pos = skip_plain(bytes, self.pos);
            out.push_str(self.text.get(run..self.pos).unwrap_or_default());
            match bytes.get(self.pos) {
                None => return self.fail(SyntaxKind::EofWhileParsingString),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(out)?;
                }
                Some(_) => return self.fail(SyntaxKind::ControlCharacterWhileParsingString),
            }
        }
    }

    /// Reads one escape, its `\` read.
    fn escape(&mut self, out: &mut String) -> Read<()> {
        let Some(&b) = self.bytes().get(self.pos) else {
            return self.fail(SyntaxKind::EofWhileParsingString);
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return self.fail(SyntaxKind::InvalidEscape),
        };
        out.push(c);
        Ok(())
    }

    /// Reads a `\u` escape, its `\u` read: a surrogate must be followed by its pair.
    #[cold]
    fn unicode_escape(&mut self) -> Read<char> {
        let n = self.hex4()?;
        if (0xDC00..=0xDFFF).contains(&n) {
            return self.fail(SyntaxKind::LoneSurrogate);
        }
        if !(0xD800..=0xDBFF).contains(&n) {
            return char::from_u32(u32::from(n))
                .map_or_else(|| self.fail(SyntaxKind::InvalidEscape), Ok);
        }
        for expected in [b'\\', b'u'] {
            match self.bytes().get(self.pos) {
                None => return self.fail(SyntaxKind::EofWhileParsingString),
                Some(&b) if b == expected => self.pos += 1,
                Some(_) => {
                    self.pos += 1;
                    return self.fail(SyntaxKind::LoneSurrogate);
                }
            }
        }
        let low = self.hex4()?;
        if !(0xDC00..=0xDFFF).contains(&low) {
            return self.fail(SyntaxKind::LoneSurrogate);
        }
        let code = (((u32::from(n) - 0xD800) << 10) | (u32::from(low) - 0xDC00)) + 0x1_0000;
        char::from_u32(code).map_or_else(|| self.fail(SyntaxKind::InvalidEscape), Ok)
    }

    /// Reads four hex digits.
    fn hex4(&mut self) -> Read<u16> {
        let mut n: u16 = 0;
        for _ in 0..4 {
            let Some(&b) = self.bytes().get(self.pos) else {
                return self.fail(SyntaxKind::EofWhileParsingString);
            };
            self.pos += 1;
            let Some(digit) = char::from(b).to_digit(16) else {
                return self.fail(SyntaxKind::InvalidEscape);
            };
            // A hex digit is below 16.
            #[allow(clippy::cast_possible_truncation)]
            let digit = digit as u16;
            n = (n << 4) | digit;
        }
        Ok(n)
    }

    /// Reads a number (its first byte, `-` or a digit, comes next): an integer of at most 18
    /// digits here, anything else by serde_json from the number's text.
    pub(super) fn number(&mut self) -> Read<Number> {
        let bytes = self.bytes();
        let start = self.pos;
        let negative = bytes.get(start) == Some(&b'-');
        self.pos += usize::from(negative);
        let digits = self.pos;
        match bytes.get(self.pos) {
            Some(b'0') => {
                self.pos += 1;
                if bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    return self.fail(SyntaxKind::InvalidNumber);
                }
            }
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return self.fail(SyntaxKind::InvalidNumber),
        }
        let integer_end = self.pos;
        let mut fraction = integer_end..integer_end;
        if bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            fraction.start = self.pos;
            self.required_digits()?;
            fraction.end = self.pos;
        }
        if fraction.end == self.pos
            && !fraction.is_empty()
            && !matches!(bytes.get(self.pos), Some(b'e' | b'E'))
        {
            let short = bytes
                .get(digits..integer_end)
                .zip(bytes.get(fraction))
                .and_then(|(integer, fraction)| short_decimal(integer, fraction, negative));
            if let Some(n) = short {
                return Ok(n);
            }
        }
        if matches!(bytes.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(bytes.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.required_digits()?;
        }
        let short = (self.pos == integer_end && integer_end - digits <= SHORT_DIGITS)
            .then(|| bytes.get(digits..integer_end))
            .flatten()
            .and_then(|digits| short_integer(digits, negative));
        if let Some(n) = short {
            return Ok(n);
        }
        let token = self.text.get(start..self.pos).unwrap_or_default();
        serde_json::from_str::<Number>(token).or_else(|_| {
            self.pos = start;
            self.fail(SyntaxKind::NumberOutOfRange)
        })
    }

    fn skip_digits(&mut self) {
        while self.bytes().get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
    }

    /// Reads one digit or more (after `.` or an exponent's sign).
    fn required_digits(&mut self) -> Read<()> {
        match self.bytes().get(self.pos) {
            Some(b) if b.is_ascii_digit() => {
                self.skip_digits();
                Ok(())
            }
            Some(_) => {
                self.pos += 1;
                self.fail(SyntaxKind::InvalidNumber)
            }
            None => self.fail(SyntaxKind::EofWhileParsingValue),
        }
    }
}

/// Bytes with 1 in each, and with the high bit in each.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The position of the first `"`, `\` or control character in `bytes` from `at` on (or the
/// end), eight bytes at a time.
#[inline]
pub(super) fn skip_plain(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let marks = special(u64::from_le_bytes(word));
        if marks != 0 {
            // The lowest mark is the first such byte: the word was read little-endian.
            return at + (marks.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// The high bit of each byte of `word` that is `"`, `\` or below 0x20, and maybe of bytes above
/// one that is (the borrows of the subtractions carry only upwards): the lowest bit set, if
/// any, marks the first such byte exactly.
fn special(word: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & HIGHS
}

/// The most digits, both sides of the point, a decimal may have to be read here rather than
/// by serde_json: its digits then make an integer below 2^53, exact as an `f64`.
const SHORT_DECIMAL_DIGITS: usize = 15;

/// Powers of ten up to the most digits of a short decimal's fraction, each exact as an `f64`.
const POWERS_OF_TEN: [f64; SHORT_DECIMAL_DIGITS + 1] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The number a short decimal without exponent stands for (`integer.fraction`), as serde_json
/// makes it; `None` when it has too many digits, or when serde_json keeps a number's text
/// (`arbitrary_precision`).
///
/// Its digits make an integer `m` below 2^53 and its fraction has `k` ≤ 15 digits, so `m` and
/// 10^k are exact doubles and `m / 10^k` is the double nearest the decimal: what serde_json
/// computes without `float_roundtrip` (the same division) and with it (the nearest double).
fn short_decimal(integer: &[u8], fraction: &[u8], negative: bool) -> Option<Number> {
    if integer.len() + fraction.len() > SHORT_DECIMAL_DIGITS || keeps_text() {
        return None;
    }
    let digits = integer
        .iter()
        .chain(fraction)
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    // Below 2^53: exact.
    #[allow(clippy::cast_precision_loss)]
    let magnitude = digits as f64 / POWERS_OF_TEN.get(fraction.len())?;
    Number::from_f64(if negative { -magnitude } else { magnitude })
}

/// Whether this build of serde_json keeps the text of a number (`arbitrary_precision`): then
/// `1.50` is not the number `1.5` makes, and decimals are left to it.
fn keeps_text() -> bool {
    static KEEPS_TEXT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS_TEXT.get_or_init(|| {
        serde_json::from_str::<Number>("1.50").map_or(true, |n| n.to_string() != "1.5")
    })
}

/// The number the digits of a short integer stand for, as serde_json makes it; `None` for
/// `-0`, which serde_json reads as a float.
fn short_integer(digits: &[u8], negative: bool) -> Option<Number> {
    let value = digits
        .iter()
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    if !negative {
        return Some(Number::from(value));
    }
    let value = i64::try_from(value).ok()?;
    (value != 0).then(|| Number::from(-value))
}
