//! The reader against serde_json on chosen input (S2, S4); `tests/tests/json_reader.rs`
//! compares them on arbitrary and damaged text.

use super::*;

fn read(text: &str) -> Result<Json, ReadError> {
    let mut reader = Reader::new(text);
    let value = reader.value()?;
    reader.end()?;
    Ok(value)
}

fn agree(text: &str) {
    let ours = read(text).map_err(|e| e.into_decode(text));
    let theirs = crate::json::decode_text(text);
    assert_eq!(ours, theirs, "{text:?}");
}

#[test]
fn s2_values_are_read_as_serde_json_reads_them() {
    for text in [
        "null",
        "true",
        "false",
        "0",
        "-0",
        "-1",
        "123456789012345678",
        "1234567890123456789",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "1.5",
        "-0.0",
        "1e3",
        "1E+3",
        "1e-400",
        "2.5e-3",
        "0.1000000000000000055511151231257827",
        "\"\"",
        "\"a\\u00e9\\ud83d\\ude00\\n\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "[]",
        "[1, [2, {}]]",
        "{\"a\": {\"b\": [null]}}",
        " \t\r\n{ \"k\" : 1 } \n",
        "\"é\u{7f}\"",
    ] {
        agree(text);
    }
}

#[test]
fn s2_malformed_text_is_refused_with_serde_json_s_message() {
    for text in [
        "",
        " ",
        "nul",
        "nulx",
        "tru",
        "[1,]",
        "[1 2]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "{\"a\":1 \"b\":2}",
        "01",
        "-",
        "1.",
        "1.e3",
        "1e",
        "1e+",
        "--1",
        "1e400",
        "-1e400",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\ud800x\"",
        "\"a\u{1}\"",
        "\"abc",
        "[",
        "{",
        "{\"a\"",
        "{\"a\":",
        "1 2",
        "[1] x",
        "{\"a\":1}}",
        "'a'",
        "[1,,2]",
        "{,}",
        "[,]",
    ] {
        agree(text);
        assert!(matches!(read(text), Err(ReadError::Syntax(_))), "{text:?}");
    }
}

#[test]
fn s4_duplicate_keys_are_refused_once_the_object_is_read() {
    agree(r#"{"a":1,"a":2}"#);
    agree(r#"{"a":{"b":1,"b":1}}"#);
    // Found at the end of the object: a syntax error inside it comes first.
    assert!(matches!(
        read(r#"{"a":1,"a":2,"#),
        Err(ReadError::Syntax(_))
    ));
    let many: String = (0..40).map(|i| format!("\"k{i}\":1,")).collect();
    agree(&format!("{{{many}\"k7\":2}}"));
}

#[test]
fn s2_nesting_is_bounded_as_serde_json_bounds_it() {
    for depth in [126, 127, 128, 129, 10_000] {
        agree(&("[".repeat(depth) + &"]".repeat(depth)));
        agree(&(r#"{"a":"#.repeat(depth) + "1" + &"}".repeat(depth)));
    }
    let deep = "[".repeat(127) + &"]".repeat(127);
    assert!(read(&deep).is_ok());
    let deeper = "[".repeat(128) + &"]".repeat(128);
    assert!(matches!(
        read(&deeper),
        Err(ReadError::Syntax(Syntax {
            kind: SyntaxKind::RecursionLimitExceeded,
            ..
        }))
    ));
}

#[test]
fn s2_a_string_without_escapes_is_borrowed() {
    let mut reader = Reader::new("\"plain\"");
    assert!(matches!(
        reader.string_if_next(),
        Ok(Some(Cow::Borrowed("plain")))
    ));
    let mut reader = Reader::new("\"a\\tb\"");
    assert_eq!(
        reader.string_if_next(),
        Ok(Some(Cow::Owned("a\tb".to_owned())))
    );
}

#[test]
fn s2_own_description_names_line_and_column() {
    let syntax = Syntax {
        at: 5,
        kind: SyntaxKind::ExpectedSomeValue,
    };
    assert_eq!(
        syntax.describe("{\n\"a\":"),
        "expected value at line 2 column 3"
    );
}

#[test]
fn s2_strings_are_scanned_eight_bytes_at_a_time_without_missing_a_byte() {
    // Every byte at every place of a word, and after plain text of every length: the end of
    // the string is found where a byte-by-byte scan finds it.
    for b in 0..=255u8 {
        for place in 0..20 {
            let mut bytes = vec![b'a'; 24];
            bytes[place] = b;
            let naive = bytes
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(bytes.len());
            assert_eq!(scalars::skip_plain(&bytes, 0), naive, "{b} at {place}");
        }
    }
    agree("\"0123456789abcdef\\u0041\\\"0123456789\"");
    agree("\"0123456\u{1f}89\"");
    agree(&format!("\"{}é{}\"", "x".repeat(13), "y".repeat(9)));
}

proptest::proptest! {
    /// Several special bytes in one word, and bytes next to the special ones (whose marks a
    /// borrow can set): the first special byte is found where a byte-by-byte scan finds it.
    #[test]
    fn s2_the_first_special_byte_of_a_word_is_found_exactly(
        picks in proptest::collection::vec(0usize..16, 0..40),
        from in 0usize..40,
    ) {
        const BYTES: [u8; 16] = [
            b'"', b'#', b'!', b'\\', b']', b'[', 0, 1, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff, b'a', b'z',
        ];
        let bytes: Vec<u8> = picks.iter().map(|&i| BYTES[i]).collect();
        let from = from.min(bytes.len());
        let naive = bytes[from..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            .map_or(bytes.len(), |at| from + at);
        proptest::prop_assert_eq!(scalars::skip_plain(&bytes, from), naive);
    }
}

/// The number the reader reads from `text`, and serde_json's.
fn both_numbers(text: &str) -> (Option<serde_json::Number>, Option<serde_json::Number>) {
    let mut reader = Reader::new(text);
    let ours = reader.number().ok().filter(|_| reader.end().is_ok());
    let theirs = serde_json::from_str::<serde_json::Number>(text).ok();
    (ours, theirs)
}

proptest::proptest! {
    /// Decimals short enough to be read here, and longer ones, with and without an exponent:
    /// the same number as serde_json reads, sign of zero included.
    #[test]
    fn s2_decimals_are_the_numbers_serde_json_reads(
        negative in proptest::bool::ANY,
        integer in "(0|[1-9][0-9]{0,17})",
        fraction in "[0-9]{1,18}",
        exponent in proptest::option::of("[eE][+-]?[0-9]{1,3}"),
    ) {
        let text = format!(
            "{}{integer}.{fraction}{}",
            if negative { "-" } else { "" },
            exponent.unwrap_or_default(),
        );
        let (ours, theirs) = both_numbers(&text);
        proptest::prop_assert_eq!(&ours, &theirs, "{}", text);
        let bits = |n: &Option<serde_json::Number>| n.as_ref().and_then(|n| n.as_f64()).map(f64::to_bits);
        proptest::prop_assert_eq!(bits(&ours), bits(&theirs), "{}", text);
    }
}

#[test]
fn s2_edge_decimals_are_the_numbers_serde_json_reads() {
    for text in [
        "0.0",
        "-0.0",
        "2.5",
        "0.1",
        "0.3",
        "-0.000000000000001",
        "999999999999999.9",
        "99999999999999.9",
        "9007199254740.993",
        "1.7976931348623157",
        "123456789012345.6",
        "0.123456789012345",
        "0.1234567890123456",
    ] {
        let (ours, theirs) = both_numbers(text);
        assert_eq!(ours, theirs, "{text}");
        let bits =
            |n: &Option<serde_json::Number>| n.as_ref().and_then(|n| n.as_f64()).map(f64::to_bits);
        assert_eq!(bits(&ours), bits(&theirs), "{text}");
    }
}
