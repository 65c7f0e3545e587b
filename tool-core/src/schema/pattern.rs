//! `pattern`: an ECMA-262 regular expression, as JSON Schema defines it, enforced with the
//! linear-time `regex` engine through a translation that keeps its ECMA meaning (S2).
//!
//! A schema advertises `pattern` to clients that check it like `new RegExp(pattern, "u")`:
//! `\d`, `\w` and `\b` are ASCII, `\s` is ECMA-262's white space, `.` stops at line
//! terminators only, `^` and `$` are the ends of the input, and the search is unanchored. The
//! parser enforces the same meaning, so a handler never receives a string the schema forbids.
//! Lookaround and backreferences have no linear-time translation: such a pattern is rejected
//! (by `#[derive(Schema)]` at compile time), never given another meaning.

// The translator lives in `tool-rules` (std only), so that the macros check a pattern in the
// same dialect at compile time.
use tool_rules::pattern as ecma;

use std::sync::OnceLock;

use regex::Regex;

/// Why a `pattern` cannot be enforced.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// Not an ECMA-262 pattern: `new RegExp(source, "u")` would throw.
    #[error("invalid pattern at character {}: {message}", at + 1)]
    Syntax {
        /// Where the problem starts, in characters from the start of the pattern (0-based).
        at: usize,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A valid ECMA-262 pattern that a linear-time engine cannot run: lookaround,
    /// backreferences, or a repetition count out of range.
    #[error("unsupported pattern at character {}: {message}", at + 1)]
    Unsupported {
        /// Where the problem starts, in characters from the start of the pattern (0-based).
        at: usize,
        /// What is not supported and what to write instead.
        message: String,
    },
    /// The translated pattern does not compile, being over the `regex` size limit, say.
    #[error("pattern cannot be compiled: {0}")]
    Compile(#[source] regex::Error),
}

impl From<ecma::Error> for PatternError {
    fn from(e: ecma::Error) -> Self {
        let ecma::Error {
            at,
            unsupported,
            message,
        } = e;
        if unsupported {
            PatternError::Unsupported { at, message }
        } else {
            PatternError::Syntax { at, message }
        }
    }
}

/// A `pattern` (ECMA-262 syntax, as JSON Schema says), compiled on first use. The macros check
/// it at compile time in the same dialect.
#[derive(Debug)]
pub struct Pattern {
    source: &'static str,
    compiled: OnceLock<Result<Regex, PatternError>>,
}

impl Pattern {
    /// A pattern from its ECMA-262 source.
    pub const fn new(source: &'static str) -> Self {
        Self {
            source,
            compiled: OnceLock::new(),
        }
    }

    /// The ECMA-262 source, as the schema shows it.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The compiled regex: the translation of the source, which matches exactly the strings
    /// the source matches as ECMA-262 (see [`Pattern::compile`]).
    ///
    /// # Errors
    ///
    /// Returns why the source cannot be enforced: not ECMA-262, lookaround or backreferences
    /// (which `#[derive(Schema)]` rejects at compile time), or over the regex size limit.
    pub fn regex(&self) -> Result<&Regex, &PatternError> {
        self.compiled
            .get_or_init(|| Self::compile(self.source))
            .as_ref()
    }

    /// Compiles an ECMA-262 pattern known only at run time, with the meaning the parser gives
    /// a declared `pattern`: `regex.is_match(s)` is `new RegExp(source, "u").test(s)`.
    ///
    /// ```
    /// use tool_core::schema::Pattern;
    ///
    /// let digits = Pattern::compile(r"^\d{3}$").expect("a valid pattern");
    /// assert!(digits.is_match("123"));
    /// assert!(!digits.is_match("١٢٣")); // Arabic-Indic digits are not `\d` in ECMA-262
    /// assert!(Pattern::compile(r"^(?=.*\d)").is_err()); // lookahead: no linear-time form
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`Pattern::regex`].
    pub fn compile(source: &str) -> Result<Regex, PatternError> {
        Regex::new(&Self::translate(source)?).map_err(PatternError::Compile)
    }

    /// The Rust `regex` syntax that [`Pattern::compile`] compiles for an ECMA-262 `source`:
    /// for tools that walk the pattern's syntax tree (the offline model makes matching strings
    /// from it). Its captures are not those of the source: every group becomes non-capturing.
    ///
    /// # Errors
    ///
    /// [`PatternError::Syntax`] or [`PatternError::Unsupported`], as for [`Pattern::regex`].
    pub fn translate(source: &str) -> Result<String, PatternError> {
        ecma::translate(source).map_err(PatternError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, s: &str) -> bool {
        match Pattern::compile(pattern) {
            Ok(re) => re.is_match(s),
            Err(e) => panic!("{pattern}: {e}"),
        }
    }

    /// S2: the parser enforces what the schema advertises, so ASCII `\d`
    /// and `\w`, whatever the Rust `regex` crate means by them.
    #[test]
    fn issue_examples_reject_what_the_schema_forbids() {
        assert!(matches(r"^\d{3}$", "123"));
        assert!(!matches(r"^\d{3}$", "١٢٣"), "Arabic-Indic digits");
        assert!(!matches(r"^\d{3}$", "１２３"), "fullwidth digits");
        assert!(matches(r"^\w+$", "hello"));
        assert!(!matches(r"^\w+$", "héllo"));
        assert!(!matches(r"\bé", "é"), "ASCII word boundaries");
    }

    #[test]
    fn translations() {
        let cases = [
            (r"^\d{3}$", r"\A[0-9]{3}\z"),
            (r"a.b", r"a[^\n\r\x{2028}\x{2029}]b"),
            (r"[\d-]", r"[0-9\x{2D}]"),
            (r"[^\w]", r"[^0-9A-Za-z_]"),
            (r"(?<year>\d{4})|x{2,}?", r"(?:[0-9]{4})|x{2,}?"),
            (r"\u{1F600}\uD83D\uDE00\/", r"\x{1F600}\x{1F600}\x{2F}"),
            (r"[]|[^]", r"[^\x{0}-\x{10FFFF}]|[\x{0}-\x{10FFFF}]"),
            (r"\p{Lu}[\P{Script=Greek}]", r"[\p{gc=Lu}][\P{sc=Greek}]"),
            ("", "(?:)"),
        ];
        for (ecma, rust) in cases {
            assert_eq!(
                Pattern::translate(ecma).expect(ecma),
                rust,
                "translation of {ecma}"
            );
        }
    }

    #[test]
    fn what_has_no_linear_time_meaning_is_unsupported() {
        for source in [
            r"(?=a)",
            r"(?!a)",
            r"(?<=a)b",
            r"(?<!a)b",
            r"(a)\1",
            r"(?<n>a)\k<n>",
            r"\k<n>(?<n>a)",
            r"\p{sc=Zzzz}",
        ] {
            assert!(
                matches!(
                    Pattern::translate(source),
                    Err(PatternError::Unsupported { .. })
                ),
                "{source}"
            );
        }
    }

    /// What `new RegExp(source, "u")` throws on is not a pattern (checked against Node).
    #[test]
    fn what_ecma_rejects_is_a_syntax_error() {
        for source in [
            r"\-",
            "a{,5}",
            "a{2,1}",
            r"[\d-z]",
            r"\1",
            r"(a)\2",
            r"\k<a>",
            r"(?=a",
            r"\k",
            r"[\B]",
            r"\c1",
            r"\u{110000}",
            r"\08",
            "a{1}{2}",
            "^*",
            "a**",
            "}",
            "]",
            "{",
            "x{2",
            r"\x4",
            "[z-a]",
            r"\p{lu}",
            r"\p{Greek}",
            r"\p{Script=greek}",
            "(?i:a)",
            "(?<a>x)(?<a>y)",
            "(",
            ")",
            "[a",
            r"\",
            r"\a",
            r"\p{L&}",
        ] {
            assert!(
                matches!(Pattern::translate(source), Err(PatternError::Syntax { .. })),
                "{source}: {:?}",
                Pattern::translate(source)
            );
        }
    }

    /// Every property name the translation accepts compiles (the tables agree with the
    /// `regex` crate's).
    #[test]
    fn every_property_compiles() {
        let names = ecma::GENERAL_CATEGORIES
            .iter()
            .chain(ecma::BINARY_PROPERTIES)
            .map(|(alias, _)| format!(r"\p{{{alias}}}\P{{{alias}}}[\p{{{alias}}}x]"))
            .chain(ecma::SCRIPTS.iter().flat_map(|(alias, _)| {
                [
                    format!(r"\p{{Script={alias}}}"),
                    format!(r"[^\P{{scx={alias}}}]"),
                ]
            }));
        for source in names {
            if let Err(e) = Pattern::compile(&source) {
                panic!("{source}: {e}");
            }
        }
    }
}
