//! Generated arguments: random bytes, mutated valid JSON, deep nesting, huge numbers, invalid
//! UTF-8, lone surrogates, duplicate keys and keys by the thousand.

use serde_json::Value;

use super::rng::Rng;

/// The families of generated input, one picked per input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Random bytes, mostly JSON punctuation.
    Bytes,
    /// A valid seed, mutated byte by byte.
    ByteMutation,
    /// A valid seed with values replaced by hostile ones.
    ValueMutation,
    /// Arrays and objects nested thousands deep.
    DeepNesting,
    /// A seed with bytes that are not UTF-8 inside a string.
    InvalidUtf8,
    /// A seed with a member sent twice, at the top or nested.
    DuplicateKeys,
    /// A seed with thousands of undeclared keys.
    ManyKeys,
    /// A valid seed as it is, or with one declared member given a hostile value.
    Seed,
}

impl Family {
    /// Every family, each as often as it is to be picked.
    pub const WEIGHTED: [Family; 12] = [
        Family::Bytes,
        Family::ByteMutation,
        Family::ByteMutation,
        Family::ValueMutation,
        Family::ValueMutation,
        Family::ValueMutation,
        Family::DeepNesting,
        Family::InvalidUtf8,
        Family::DuplicateKeys,
        Family::ManyKeys,
        Family::Seed,
        Family::Seed,
    ];
}

/// Tokens spliced into text: hostile numbers, strings and punctuation.
const TOKENS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "-0.0",
    "0.5",
    "1e-10",
    "3e-12",
    "1e308",
    "1e999",
    "-1e999",
    "1.7976931348623157e308",
    "4.9e-324",
    "18446744073709551616",
    "-9223372036854775809",
    "340282366920938463463374607431768211456",
    "1.0000000001",
    "123456789012345678901234567890e-20",
    "NaN",
    "Infinity",
    "\"\\ud800\"",
    "\"\\udc00\"",
    "\"\\ud83d\\ude00\"",
    "\"\\u0000\"",
    "\"١٢٣\"",
    "\"１２３\"",
    "\"héllo\"",
    "\"𝟘𝟙𝟚\"",
    "\"2024-05-01T10:00:0é0Z\"",
    "\"2024-02-30\"",
    "\"a@b.c\"",
    "\"\"",
    "\"\\\"\"",
    "[0.0,-0.0]",
    "[1,1.0]",
    "{}",
    "[]",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\"a\":1",
    "\"k\":{}",
    "\u{feff}",
    "\u{2028}",
    " ",
    "\t\n",
];

/// Hostile JSON values, for value mutations.
fn hostile_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => hostile_number(rng),
        3..=5 => Value::String(hostile_string(rng)),
        6 => Value::Array(
            (0..rng.below(8))
                .map(|_| hostile_value(rng, depth + 1))
                .collect(),
        ),
        7 => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                map.insert(hostile_string(rng), hostile_value(rng, depth + 1));
            }
            Value::Object(map)
        }
        _ => Value::Array(vec![hostile_number(rng); rng.between(2, 4)]),
    }
}

fn hostile_number(rng: &mut Rng) -> Value {
    let numbers: &[Value] = &[
        Value::from(0),
        Value::from(-1),
        Value::from(1),
        Value::from(7),
        Value::from(30),
        Value::from(31),
        Value::from(255),
        Value::from(256),
        Value::from(i64::MAX),
        Value::from(i64::MIN),
        Value::from(u64::MAX),
        Value::from(0.5),
        Value::from(-0.0),
        Value::from(2.5),
        Value::from(1e-10),
        Value::from(3e-12),
        Value::from(100.5),
        Value::from(1.000_000_000_1),
        Value::from(f64::MAX),
        Value::from(f64::MIN_POSITIVE),
        Value::from(30.000_000_000_1),
    ];
    if rng.one_in(4) {
        let int = (rng.next_u64() >> rng.below(64)) as i64;
        return Value::from(int);
    }
    if rng.one_in(4) {
        return Value::from(f64::from_bits(rng.next_u64())).clone();
    }
    rng.pick(numbers).clone()
}

fn hostile_string(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "svc-42",
        "a",
        "-",
        "é",
        "€",
        "𝟘",
        "١",
        "１",
        "\u{0}",
        "\u{7f}",
        "\u{85}",
        "\u{a0}",
        "\u{2028}",
        "\u{feff}",
        "\u{fffd}",
        "~",
        "/",
        "~1",
        "\"",
        "\\",
        "2024-05-01",
        "T10:00:00Z",
        "+02:00",
        "@",
        ".",
        "ops@example.com",
        "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "low",
        "high",
        "LOW",
        "title",
        "service_id",
        "days",
        "123",
        "١٢٣",
        "１２３",
        "héllo",
    ];
    let mut s = String::new();
    for _ in 0..rng.below(6) {
        let piece = PIECES[rng.below(PIECES.len())];
        s.push_str(piece);
    }
    if rng.one_in(16) {
        s.push_str(&"x".repeat(rng.between(60, 300)));
    }
    s
}

/// One generated input for a target with these `seeds` and declared `keys`.
pub(super) fn generate(rng: &mut Rng, family: Family, seeds: &[&str], keys: &[&str]) -> Vec<u8> {
    let seed = *rng.pick(seeds);
    match family {
        Family::Bytes => random_bytes(rng),
        Family::ByteMutation => byte_mutation(rng, seed.as_bytes().to_vec()),
        Family::ValueMutation => value_mutation(rng, seed, keys),
        Family::DeepNesting => {
            // Mostly around the decoder's depth limit; now and then far past it.
            let depth = if rng.one_in(64) {
                rng.between(10_000, 200_000)
            } else {
                rng.between(1, 400)
            };
            deep_nesting(rng, depth)
        }
        Family::InvalidUtf8 => invalid_utf8(rng, seed),
        Family::DuplicateKeys => duplicate_key(rng, seed),
        Family::ManyKeys => {
            let n = if rng.one_in(64) {
                rng.between(10_000, 40_000)
            } else {
                rng.between(100, 2_000)
            };
            many_keys(seed, n)
        }
        Family::Seed => {
            if rng.one_in(2) {
                seed.as_bytes().to_vec()
            } else {
                one_value(rng, seed, keys)
            }
        }
    }
}

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    const ALPHABET: &[u8] = b"{}[]\":,0123456789-+.eEtrufalsn \\\t\n";
    (0..rng.below(64))
        .map(|_| {
            if rng.one_in(8) {
                (rng.next_u64() & 0xff) as u8
            } else {
                *rng.pick(ALPHABET)
            }
        })
        .collect()
}

/// Applies one to four byte-level edits: flips, deletions, duplications, spliced tokens.
pub(super) fn byte_mutation(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..rng.between(1, 4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
            1 if at < bytes.len() => {
                let end = (at + rng.between(1, 8)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 if at < bytes.len() => {
                let end = (at + rng.between(1, 16)).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => {
                let token = rng.pick(TOKENS).as_bytes();
                bytes.splice(at..at, token.iter().copied());
            }
        }
    }
    bytes
}

/// Replaces, adds or removes members anywhere in a seed, with hostile values and keys.
fn value_mutation(rng: &mut Rng, seed: &str, keys: &[&str]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_str::<Value>(seed) else {
        return seed.as_bytes().to_vec();
    };
    for _ in 0..rng.between(1, 3) {
        mutate_somewhere(rng, &mut value, keys, 0);
    }
    let text = value.to_string().into_bytes();
    if rng.one_in(8) {
        byte_mutation(rng, text)
    } else {
        text
    }
}

fn mutate_somewhere(rng: &mut Rng, value: &mut Value, keys: &[&str], depth: usize) {
    match value {
        Value::Object(map) if !map.is_empty() && rng.one_in(2) && depth < 4 => {
            let index = rng.below(map.len());
            if let Some(child) = map.values_mut().nth(index) {
                mutate_somewhere(rng, child, keys, depth + 1);
            }
        }
        Value::Array(items) if !items.is_empty() && rng.one_in(2) && depth < 4 => {
            let index = rng.below(items.len());
            mutate_somewhere(rng, &mut items[index], keys, depth + 1);
        }
        Value::Object(map) => match rng.below(3) {
            0 => {
                let key = if rng.one_in(3) {
                    hostile_string(rng)
                } else {
                    (*rng.pick(keys)).to_owned()
                };
                map.insert(key, hostile_value(rng, depth));
            }
            1 if !map.is_empty() => {
                let index = rng.below(map.len());
                if let Some(key) = map.keys().nth(index).cloned() {
                    map.remove(&key);
                }
            }
            _ => *value = hostile_value(rng, depth),
        },
        Value::String(text) if rng.one_in(2) => mutate_chars(rng, text),
        _ => *value = hostile_value(rng, depth),
    }
}

/// Puts a hostile character into a string, or in place of one of its characters, at any
/// position: multibyte characters where a check may slice by bytes, digits of other scripts,
/// separators, controls.
fn mutate_chars(rng: &mut Rng, text: &mut String) {
    const CHARS: &[char] = &[
        'é', '€', '𝟘', '١', '１', '\u{0}', '\u{85}', '\u{a0}', '\u{2028}', '\u{feff}', '-', ':',
        'T', 'Z', '0', '9', 'a', '@', '.', ' ',
    ];
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.between(1, 2) {
        let at = rng.below(chars.len() + 1);
        let c = *rng.pick(CHARS);
        if at < chars.len() && rng.one_in(2) {
            chars[at] = c;
        } else {
            chars.insert(at, c);
        }
    }
    *text = chars.into_iter().collect();
}

/// A seed with one declared member set to a hostile value: mostly a valid call that probes
/// one constraint.
fn one_value(rng: &mut Rng, seed: &str, keys: &[&str]) -> Vec<u8> {
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(seed) else {
        return seed.as_bytes().to_vec();
    };
    let key = (*rng.pick(keys)).to_owned();
    let value = if rng.one_in(2) {
        hostile_number(rng)
    } else {
        Value::String(hostile_string(rng))
    };
    map.insert(key, value);
    Value::Object(map).to_string().into_bytes()
}

/// `[[[…` or `{"a":{"a":…`, `depth` levels, closed or not.
pub(super) fn deep_nesting(rng: &mut Rng, depth: usize) -> Vec<u8> {
    let object = rng.one_in(2);
    let (open, close): (&[u8], &[u8]) = if object {
        (b"{\"a\":", b"}")
    } else {
        (b"[", b"]")
    };
    let mut bytes = Vec::with_capacity(depth * (open.len() + close.len()) + 8);
    if !object {
        bytes.extend_from_slice(b"{\"name\":\"n\",\"children\":");
    }
    for _ in 0..depth {
        bytes.extend_from_slice(open);
    }
    bytes.extend_from_slice(b"1");
    if rng.one_in(2) {
        for _ in 0..depth {
            bytes.extend_from_slice(close);
        }
        if !object {
            bytes.push(b'}');
        }
    }
    bytes
}

/// A seed with bytes that are not UTF-8 put inside its first string.
fn invalid_utf8(rng: &mut Rng, seed: &str) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    let at = bytes
        .iter()
        .position(|&b| b == b'"')
        .map_or(0, |quote| quote + 1);
    let bad: &[&[u8]] = &[
        b"\xff",
        b"\xc3",
        b"\xc3\x28",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xc0\xaf",
        b"\x80",
    ];
    bytes.splice(at..at, rng.pick(bad).iter().copied());
    bytes
}

/// A seed with one of its members sent twice, at the top or inside a nested object.
fn duplicate_key(rng: &mut Rng, seed: &str) -> Vec<u8> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(seed) else {
        return seed.as_bytes().to_vec();
    };
    let mut text = String::from("{");
    let members: Vec<_> = map.iter().collect();
    let twice = rng.below(members.len() + 1);
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("{}:{value}", Value::from(key.as_str())));
        if i == twice {
            text.push_str(&format!(",{}:{value}", Value::from(key.as_str())));
        }
    }
    if twice == members.len() {
        // Nested: inside an undeclared member's object value.
        if !members.is_empty() {
            text.push(',');
        }
        text.push_str(r#""extra":{"k":1,"k":2}"#);
    }
    text.push('}');
    text.into_bytes()
}

/// A seed with `n` undeclared keys before its own members: `{"k0":0,…,"k<n>":0, …}`.
pub(super) fn many_keys(seed: &str, n: usize) -> Vec<u8> {
    let mut text = String::with_capacity(n * 10 + seed.len());
    text.push('{');
    for i in 0..n {
        text.push_str(&format!("\"k{i}\":0,"));
    }
    match seed.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => {
            text.pop();
            text.push('}');
        }
        Some(rest) => text.push_str(rest),
        None => {
            text.pop();
            text.push('}');
        }
    }
    text.into_bytes()
}
