//! The canonical JSON a paused run's seal covers (H8): RFC 8785, the JSON Canonicalization
//! Scheme (JCS), written from a [`serde_json::Value`].
//!
//! Texts that mean the same value have the same canonical form, whatever their key order,
//! whitespace, escapes or number spelling, and whichever map serde_json was built with
//! (`preserve_order` or not: the writer sorts members itself):
//!
//! - object members sorted by their keys' UTF-16 code units (not their UTF-8 bytes), no
//!   whitespace anywhere;
//! - strings as ECMAScript's `JSON.stringify` writes them: `\b \t \n \f \r \" \\` escaped
//!   by two characters, the other controls below U+0020 as `\u00xx` (lowercase hex),
//!   everything else as literal UTF-8;
//! - numbers as ECMAScript's Number-to-String writes a double (JCS §3.2.2.3): the shortest
//!   digits that read back as the same double, `1e+21`, `1e-7`, `0.000001`, `-0` as `0`,
//!   integral values without `.0`.
//!
//! One deliberate deviation from JCS: an integer serde_json holds exactly (as a `u64` or an
//! `i64`) is written with its exact decimal digits. Up to 2^53 in magnitude that is what JCS
//! writes; beyond, JCS rounds it through a double, so that another integer (which a handler
//! would receive as such) would match the same seal.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// The canonical form of `value`, as UTF-8 bytes.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_value(&mut out, value);
    out.into_bytes()
}

/// Appends the canonical form of `value` to `out`.
fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Appends `text` as a JSON string: quoted, with only what must be escaped escaped. What
/// needs escaping is ASCII, never part of a longer UTF-8 sequence: the runs between are copied
/// whole.
fn write_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0x00..=0x1f => "\\u00",
            _ => continue,
        };
        out.push_str(&text[run..i]);
        out.push_str(escape);
        if escape == "\\u00" {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        run = i + 1;
    }
    out.push_str(&text[run..]);
    out.push('"');
}

/// Appends a number: an integer held exactly with its exact digits, any other as a double.
fn write_number(out: &mut String, number: &Number) {
    // Writing to a `String` cannot fail.
    let _ = if let Some(n) = number.as_u64() {
        write!(out, "{n}")
    } else if let Some(n) = number.as_i64() {
        write!(out, "{n}")
    } else if let Some(x) = number.as_f64() {
        write_double(out, x);
        Ok(())
    } else {
        // Only with serde_json's `arbitrary_precision`, for a number no double holds: its
        // own text, so that two such numbers stay apart.
        write!(out, "{number}")
    };
}

/// Appends `x` as ECMAScript's Number-to-String (radix 10) writes it, with `ryu-js`: the
/// shortest digits that read back as `x` (of two as short and as close, the even one), placed
/// by ECMAScript's rules. A value that is not finite (which a `Value` cannot hold) is written
/// `null`, as `JSON.stringify` does.
fn write_double(out: &mut String, x: f64) {
    if x.is_finite() {
        out.push_str(ryu_js::Buffer::new().format_finite(x));
    } else {
        out.push_str("null");
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn canonical(value: &Value) -> String {
        String::from_utf8(to_vec(value)).expect("canonical JSON is UTF-8")
    }

    fn double(x: f64) -> String {
        let mut out = String::new();
        write_double(&mut out, x);
        out
    }

    #[test]
    fn h8_numbers_match_rfc_8785_appendix_b() {
        // RFC 8785, Appendix B: IEEE 754 bit patterns and their canonical text.
        let table = [
            ("0000000000000000", "0"),
            ("8000000000000000", "0"),
            ("0000000000000001", "5e-324"),
            ("8000000000000001", "-5e-324"),
            ("7fefffffffffffff", "1.7976931348623157e+308"),
            ("ffefffffffffffff", "-1.7976931348623157e+308"),
            ("4340000000000000", "9007199254740992"),
            ("c340000000000000", "-9007199254740992"),
            ("4430000000000000", "295147905179352830000"),
            ("44b52d02c7e14af5", "9.999999999999997e+22"),
            ("44b52d02c7e14af6", "1e+23"),
            ("44b52d02c7e14af7", "1.0000000000000001e+23"),
            ("444b1ae4d6e2ef4e", "999999999999999700000"),
            ("444b1ae4d6e2ef4f", "999999999999999900000"),
            ("444b1ae4d6e2ef50", "1e+21"),
            ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
            ("3eb0c6f7a0b5ed8d", "0.000001"),
            ("41b3de4355555553", "333333333.3333332"),
            ("41b3de4355555554", "333333333.33333325"),
            ("41b3de4355555555", "333333333.3333333"),
            ("41b3de4355555556", "333333333.3333334"),
            ("41b3de4355555557", "333333333.33333343"),
            ("becbf647612f3696", "-0.0000033333333333333333"),
            ("43143ff3c1cb0959", "1424953923781206.2"),
        ];
        for (bits, expected) in table {
            let x = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            assert_eq!(double(x), expected, "0x{bits}");
            // Through a `Value` too (serde_json holds -0 and fractions as doubles).
            assert_eq!(canonical(&json!(x)), expected, "0x{bits}");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(double(x), "null");
        }
    }

    #[test]
    fn h8_number_placement_follows_ecmascript() {
        for (x, expected) in [
            (1.0, "1"),
            (100.0, "100"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456.789, "123456.789"),
            (1e-6, "0.000001"),
            (1.25e-6, "0.00000125"),
            (1e-7, "1e-7"),
            (-1.25e-7, "-1.25e-7"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(double(x), expected, "{x:e}");
        }
    }

    #[test]
    fn h8_integers_held_exactly_keep_their_digits() {
        // Up to 2^53 as JCS writes them; beyond, exact (the deliberate deviation).
        assert_eq!(canonical(&json!(0)), "0");
        assert_eq!(canonical(&json!(-7)), "-7");
        assert_eq!(
            canonical(&json!(9_007_199_254_740_992_u64)),
            "9007199254740992"
        );
        assert_eq!(
            canonical(&json!(9_007_199_254_740_993_u64)),
            "9007199254740993"
        );
        assert_eq!(canonical(&json!(u64::MAX)), "18446744073709551615");
        assert_eq!(canonical(&json!(i64::MIN)), "-9223372036854775808");
        // A spelling serde_json reads as a double is the double's.
        let read = |text: &str| canonical(&serde_json::from_str(text).unwrap());
        assert_eq!(read("1.0"), "1");
        assert_eq!(read("1e2"), "100");
        assert_eq!(read("10E-1"), "1");
        assert_eq!(read("-0"), "0");
        assert_eq!(read("-0.0"), "0");
        assert_eq!(read("18446744073709551616"), "18446744073709552000");
    }

    #[test]
    fn h8_strings_are_escaped_as_jcs_does() {
        let all_controls: String = (0_u8..0x20).map(char::from).collect();
        assert_eq!(
            canonical(&json!(all_controls)),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\
             \\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\
             \\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""
        );
        assert_eq!(
            canonical(&json!("\"\\/\u{7f}é€😀")),
            "\"\\\"\\\\/\u{7f}é€😀\""
        );
    }

    #[test]
    fn h8_the_rfc_8785_sample_is_canonicalized() {
        // RFC 8785 §3.2.2: the input and the canonical output it gives.
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn h8_keys_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3: U+1F600 (the surrogates D83D DE00) sorts before U+FB33, which its
        // UTF-8 bytes (F0… after EF…) would not.
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical(&value),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
             \"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\
             \"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
    }

    #[test]
    fn h8_nested_objects_are_sorted_and_compact() {
        let value: Value =
            serde_json::from_str(r#" { "b" : [ {"z":1, "a":{"y":null,"x":[]}} ], "a" : {} } "#)
                .unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"a":{},"b":[{"a":{"x":[],"y":null},"z":1}]}"#
        );
    }

    /// Checks that `text`, written for `x`, reads back as `x` and has ECMAScript's shape:
    /// an exponent exactly outside [1e-6, 1e21), no `.0`, no exponent with a leading zero.
    fn check_double(x: f64, text: &str) -> Result<(), TestCaseError> {
        let back: f64 = text.parse().unwrap();
        // The same double (both zeros are written `0`).
        prop_assert!(back == x, "{x:e} → {text}");
        prop_assert!(!text.ends_with(".0") && !text.contains("e+0") && !text.contains("e-0"));
        let plain = (1e-6..1e21).contains(&x.abs()) || x == 0.0;
        prop_assert_eq!(text.contains('e'), !plain, "{}", text);
        Ok(())
    }

    proptest! {
        #[test]
        fn h8_every_double_reads_back_in_ecmascript_shape(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            check_double(x, &double(x))?;
        }

        #[test]
        fn h8_decimal_doubles_read_back_in_ecmascript_shape(
            digits in 1_u64..100_000_000_000_000_000,
            exponent in -30_i32..30,
            negative in any::<bool>(),
        ) {
            let sign = if negative { "-" } else { "" };
            let x: f64 = format!("{sign}{digits}e{exponent}").parse().unwrap();
            check_double(x, &double(x))?;
        }
    }
}
