//! Short previews of text that came from outside: what a violation quotes of the model's input
//! (S3), and what an error or a log line shows of a model-supplied id or name. One helper, so
//! every preview is cut the same way: at a character boundary, marked with `…`.

/// The longest piece of the model's own input a violation may quote, in characters (S3).
pub const PREVIEW_CHARS: usize = 24;

/// `text` cut to at most `max_chars` characters, with `…` after a cut.
pub fn preview(text: &str, max_chars: usize) -> String {
    let (head, cut) = preview_parts(text, max_chars);
    if cut {
        format!("{head}…")
    } else {
        head.to_owned()
    }
}

/// A short, truncated quote of a string from the model's input: [`PREVIEW_CHARS`] characters
/// at most (S3).
pub fn preview_str(text: &str) -> String {
    preview(text, PREVIEW_CHARS)
}

/// The first `max_chars` characters of `text`, and whether anything was cut.
pub(crate) fn preview_parts(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_previews_cut_at_a_character_boundary() {
        assert_eq!(preview("héllo", 2), "hé…");
        assert_eq!(preview("hé", 2), "hé");
        assert_eq!(
            preview_str(&"é".repeat(30)).chars().count(),
            PREVIEW_CHARS + 1
        );
    }
}
