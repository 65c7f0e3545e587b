//! S2, S4: the JSON reader that call arguments are parsed from accepts exactly what serde_json
//! accepts, reads the same values (numbers included, in this build of serde_json), refuses the
//! same text with the same message and finds the same duplicate keys, on arbitrary and damaged
//! text.

use proptest::prelude::*;
use serde_json::Value;
use tool_runtime::__private::{Json, Reader};
use tool_runtime::json::{DecodeError, decode};

/// The reader's answer for `text`, as a call reports it (blank arguments stand for `{}`, as
/// they do for `decode`).
fn read(text: &str) -> Result<Json, DecodeError> {
    let text = if text.bytes().all(|b| b.is_ascii_whitespace()) {
        "{}"
    } else {
        text
    };
    let mut reader = Reader::new(text);
    let value = reader
        .value()
        .and_then(|value| reader.end().map(|()| value));
    value.map_err(|error| error.into_decode(text))
}

/// Checks that the reader and serde_json agree on `text`: the same tree (member order and the
/// text of each number included) or the same error.
fn agree(text: &str) -> Result<(), TestCaseError> {
    let ours = read(text);
    let theirs = decode(text.as_bytes());
    prop_assert_eq!(&ours, &theirs, "{:?}", text);
    if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
        let written = |json: &Json| serde_json::to_string(json).map_err(|e| e.to_string());
        prop_assert_eq!(written(ours), written(theirs), "{:?}", text);
    }
    Ok(())
}

fn arb_number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| f.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,4})?",
        "-?[0-9]{0,4}\\.?[0-9]{0,3}[eE]?[+-]?[0-9]{0,3}",
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z é\u{1F600}]{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
        // Escapes, surrogates (paired, lone, reversed) and raw control characters.
        proptest::collection::vec(
            prop_oneof![
                Just("a".to_owned()),
                Just("\\n".to_owned()),
                Just("\\\"".to_owned()),
                Just("\\/".to_owned()),
                Just("\\x".to_owned()),
                Just("\\ud83d\\ude00".to_owned()),
                Just("\\ud83d".to_owned()),
                Just("\\ude00".to_owned()),
                Just("\\ud83d\\u0041".to_owned()),
                Just("\\u00e9".to_owned()),
                Just("\\u12".to_owned()),
                Just("\u{1}".to_owned()),
                Just("\u{7f}".to_owned()),
                Just("\t".to_owned()),
            ],
            0..6,
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat())),
    ]
}

/// JSON text, valid or nearly: values nested a few levels, whitespace between tokens, keys
/// that may repeat.
fn arb_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        arb_number(),
        arb_string(),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6)
                .prop_map(|items| format!("[{}]", items.join(" , "))),
            proptest::collection::vec(("[abc]", inner), 0..6).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("\"{key}\":{value}"))
                    .collect();
                format!("{{ {} }}", members.join(","))
            }),
        ]
    })
}

/// `text` damaged: a char removed, replaced or inserted at `at`.
fn damage(text: &str, at: usize, how: u8, with: char) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    match how % 3 {
        0 if at < chars.len() => {
            chars.remove(at);
        }
        1 if at < chars.len() => chars[at] = with,
        _ => chars.insert(at, with),
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn s2_s4_the_reader_agrees_with_serde_json_on_arbitrary_text(text in arb_text()) {
        agree(&text)?;
    }

    #[test]
    fn s2_s4_the_reader_agrees_with_serde_json_on_damaged_text(
        text in arb_text(),
        at in any::<usize>(),
        how in any::<u8>(),
        with in prop::sample::select(vec![
            '{', '}', '[', ']', ',', ':', '"', '\\', '-', '0', '1', '.', 'e', 'n', 't', ' ',
            '\u{0}', '\u{1f}', 'é',
        ]),
    ) {
        agree(&damage(&text, at, how, with))?;
    }

    #[test]
    fn s2_the_reader_agrees_with_serde_json_on_json_like_noise(
        text in "[\\[\\]{}:,\"\\\\ 0-9.eE+\\-ntrufalsu]{0,40}",
    ) {
        agree(&text)?;
    }

    #[test]
    fn s2_numbers_are_the_values_serde_json_reads(number in arb_number()) {
        agree(&number)?;
        agree(&format!("[{number}]"))?;
        agree(&format!("{{\"n\":{number}}}"))?;
    }
}

#[test]
fn s2_a_value_written_by_serde_json_reads_back_as_itself() {
    let value = serde_json::json!({
        "z": [1, -2, 2.5, "x\n\"\u{1F600}", null, true, 1e300, u64::MAX, i64::MIN],
        "a": {"c": {}, "b": []},
    });
    let text = serde_json::to_string(&value).unwrap_or_default();
    let read = read(&text).map(Json::into_value);
    assert_eq!(read, Ok::<Value, DecodeError>(value));
}
