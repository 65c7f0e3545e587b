//! Repair of malformed arguments (Q4): an opt-in step before validation, for models that
//! write almost-JSON. [`RepairArguments`] is the step; [`LenientJson`], its default, fixes
//! code fences, single-quoted strings, unquoted keys, trailing commas and a truncated end, in
//! one pass over the text. Repaired text is validated like any arguments, and the call's
//! record keeps what the model sent ([`CallRecord::repaired_from`](super::CallRecord)).

use crate::model::ToolCall;

use super::output::CallRecord;

/// Repairs, with `repair`, the arguments of each of `calls` that are not JSON, in place;
/// returns each repaired call's position and what the model sent.
pub(crate) fn repair_calls(
    repair: &dyn RepairArguments,
    calls: &mut [ToolCall],
) -> Vec<(usize, String)> {
    let mut repaired = Vec::new();
    for (at, call) in calls.iter_mut().enumerate() {
        if serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_ok() {
            continue;
        }
        if let Some(fixed) = repair.repair(&call.arguments) {
            tracing::debug!(tool = %call.name, "the call's arguments were repaired");
            repaired.push((at, std::mem::replace(&mut call.arguments, fixed)));
        }
    }
    repaired
}

/// Marks the records of the repaired calls with what the model sent (Q4).
pub(crate) fn mark(records: &mut [CallRecord], repaired: &[(usize, String)]) {
    for (at, sent) in repaired {
        if let Some(record) = records.iter_mut().find(|r| r.index == *at) {
            record.repaired_from = Some(sent.clone());
        }
    }
}

/// A repair of a call's argument text, asked only of text that is not JSON.
pub trait RepairArguments: Send + Sync + 'static {
    /// The repaired text of `arguments`, or `None` when this step cannot make it JSON. It
    /// must cost time linear in the text and never panic: the text is the model's.
    fn repair(&self, arguments: &str) -> Option<String>;
}

/// The default repair: code fences around the text, single-quoted strings, unquoted keys,
/// trailing commas, and a truncated end (an open string, a dangling key, unclosed objects and
/// arrays). The result is returned only when it parses as JSON.
#[derive(Debug, Clone, Copy, Default)]
pub struct LenientJson;

impl RepairArguments for LenientJson {
    fn repair(&self, arguments: &str) -> Option<String> {
        let repaired = Repairer::default().run(unfenced(arguments));
        serde_json::from_str::<serde::de::IgnoredAny>(&repaired).ok()?;
        Some(repaired)
    }
}

/// `text` without a Markdown code fence around it (```` ```json ... ``` ````).
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    // The fence's first line names the language.
    let body = rest.find('\n').map_or("", |at| &rest[at + 1..]);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// Where the repairer is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum In {
    /// Between tokens.
    #[default]
    Between,
    /// In a string, quoted with this character.
    String(char),
    /// In a string, after a backslash.
    Escape(char),
}

/// One pass over the text, writing the repaired text.
#[derive(Debug, Default)]
struct Repairer {
    out: String,
    state: In,
    /// The open objects and arrays, innermost last.
    open: Vec<char>,
    /// A comma seen and not yet written: dropped when a closing bracket follows.
    comma: bool,
    /// The last significant character written outside strings.
    last: Option<char>,
    /// An unquoted word being read outside strings.
    word: String,
}

impl Repairer {
    fn run(mut self, text: &str) -> String {
        self.out.reserve(text.len() + 8);
        for c in text.chars() {
            match self.state {
                In::String(quote) => self.in_string(quote, c),
                In::Escape(quote) => self.escaped(quote, c),
                In::Between => self.between(c),
            }
        }
        self.finish()
    }

    /// A character inside a string quoted with `quote`: a single-quoted string is written
    /// double-quoted, its double quotes escaped.
    fn in_string(&mut self, quote: char, c: char) {
        match c {
            '\\' => self.state = In::Escape(quote),
            c if c == quote => {
                self.out.push('"');
                self.state = In::Between;
                self.last = Some('"');
            }
            '"' => self.out.push_str("\\\""),
            '\n' => self.out.push_str("\\n"),
            c => self.out.push(c),
        }
    }

    /// The character after a backslash: `\'` in a single-quoted string is a plain quote.
    fn escaped(&mut self, quote: char, c: char) {
        self.state = In::String(quote);
        if c == '\'' {
            self.out.push('\'');
        } else {
            self.out.push('\\');
            self.out.push(c);
        }
    }

    /// A character between tokens.
    fn between(&mut self, c: char) {
        if c.is_alphanumeric() || c == '_' || c == '$' || (c == '-' && !self.word.is_empty()) {
            self.word.push(c);
            return;
        }
        self.end_word(c);
        if c.is_whitespace() {
            self.out.push(c);
            return;
        }
        match c {
            ',' => {
                self.comma = true;
                return;
            }
            '}' | ']' => {
                self.comma = false;
                if self.open.last() == Some(&c) {
                    self.open.pop();
                }
            }
            _ => self.flush_comma(),
        }
        match c {
            '{' => self.open.push('}'),
            '[' => self.open.push(']'),
            '"' | '\'' => {
                self.out.push('"');
                self.state = In::String(c);
                self.last = Some('"');
                return;
            }
            _ => {}
        }
        self.out.push(c);
        self.last = Some(c);
    }

    /// Ends an unquoted word before `next`: a key (the word before a colon, in an object) is
    /// quoted; a value (`true`, a number) stays as written.
    fn end_word(&mut self, next: char) {
        if self.word.is_empty() {
            return;
        }
        self.flush_comma();
        let word = std::mem::take(&mut self.word);
        let is_key = self.open.last() == Some(&'}') && matches!(self.last, Some('{' | ','));
        if is_key && (next == ':' || next.is_whitespace()) && !is_literal(&word) {
            self.out.push('"');
            self.out.push_str(&word);
            self.out.push('"');
        } else {
            self.out.push_str(&word);
        }
        self.last = Some('w');
    }

    /// Writes a pending comma: something other than a closing bracket followed it.
    fn flush_comma(&mut self) {
        if std::mem::take(&mut self.comma) {
            self.out.push(',');
            self.last = Some(',');
        }
    }

    /// Closes what the text left open: a string, a key without a value, the brackets.
    fn finish(mut self) -> String {
        match self.state {
            In::String(_) => self.out.push('"'),
            In::Escape(_) => self.out.push_str("\\\\\""),
            In::Between => self.end_word(' '),
        }
        self.comma = false;
        if self.last == Some(':') {
            self.out.push_str("null");
        }
        while let Some(close) = self.open.pop() {
            self.out.push(close);
        }
        self.out
    }
}

/// Whether `word` is a JSON literal or number (never quoted as a key).
fn is_literal(word: &str) -> bool {
    matches!(word, "true" | "false" | "null") || word.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> Option<serde_json::Value> {
        LenientJson
            .repair(text)
            .map(|t| serde_json::from_str(&t).unwrap())
    }

    #[test]
    fn q4_the_default_repair_fixes_what_models_get_wrong() {
        use serde_json::json;
        assert_eq!(fixed(r#"{"a": 1,}"#), Some(json!({"a": 1})));
        assert_eq!(fixed(r#"{"a": [1, 2,],}"#), Some(json!({"a": [1, 2]})));
        assert_eq!(fixed("{'city': 'Paris'}"), Some(json!({"city": "Paris"})));
        assert_eq!(
            fixed(r#"{'q': 'it\'s "x"'}"#),
            Some(json!({"q": "it's \"x\""}))
        );
        assert_eq!(
            fixed("{city: \"Oslo\", days: 3}"),
            Some(json!({"city": "Oslo", "days": 3}))
        );
        assert_eq!(
            fixed("```json\n{\"a\": true}\n```"),
            Some(json!({"a": true}))
        );
        assert_eq!(
            fixed(r#"{"a": {"b": [1, 2"#),
            Some(json!({"a": {"b": [1, 2]}}))
        );
        assert_eq!(fixed(r#"{"a": "trunc"#), Some(json!({"a": "trunc"})));
        assert_eq!(fixed(r#"{"a":"#), Some(json!({"a": null})));
        assert_eq!(
            fixed("{ok: true, n: null}"),
            Some(json!({"ok": true, "n": null}))
        );
        assert_eq!(fixed("not json at all"), None);
    }
}
