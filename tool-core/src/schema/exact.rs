//! Exact comparisons behind two constraints: `multipleOf` (decided on decimals, not on a
//! float quotient) and `uniqueItems` (JSON equality, not equal text).

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::Value;

use super::num::Num;

/// Whether `n` is an integer multiple of `step`, decided exactly on the shortest decimals that
/// the two numbers print as: what the model wrote and what the schema declared (`0.3` is a
/// multiple of `0.1`; `1e-10` is not a multiple of `0.5`). A step of zero
/// (which the macros reject) constrains nothing; a non-finite number is never a multiple.
pub(crate) fn is_multiple(n: Num, step: Num) -> bool {
    if let (Num::Int(a), Num::Int(b)) = (n, step) {
        return b == 0 || a % b == 0;
    }
    let (Some(a), Some(b)) = (Decimal::of(n), Decimal::of(step)) else {
        return false;
    };
    if b.mantissa == 0 || a.mantissa == 0 {
        return true;
    }
    // a / b = (ma / mb) * 10^(ea - eb): an integer exactly when mb divides ma * 10^(ea - eb).
    let shift = i64::from(a.exponent) - i64::from(b.exponent);
    if shift >= 0 {
        // (ma mod mb) * (10^shift mod mb) mod mb, by squaring: no overflow, log(shift) steps.
        let m = b.mantissa;
        mul_mod(a.mantissa % m, pow_mod(10, shift.unsigned_abs(), m), m) == 0
    } else {
        // mb * 10^-shift must divide ma; it cannot once it is larger than ma.
        let scale = u32::try_from(shift.unsigned_abs())
            .ok()
            .and_then(|s| 10u128.checked_pow(s));
        match scale.and_then(|s| s.checked_mul(b.mantissa)) {
            Some(divisor) => a.mantissa % divisor == 0,
            None => false,
        }
    }
}

/// `mantissa * 10^exponent`, the magnitude of a number, with the mantissa's trailing zeros
/// moved into the exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    exponent: i32,
}

impl Decimal {
    /// The shortest decimal `n` prints as (for a float, the one that reads back to it), or
    /// `None` for a non-finite float.
    fn of(n: Num) -> Option<Decimal> {
        match n {
            Num::Int(i) => Some(Decimal::normalized(i.unsigned_abs(), 0)),
            Num::Float(f) if f.is_finite() => {
                // `{:e}` prints the shortest round-trip digits: `1.2345e-7`, `5e-1`.
                let mut text = String::with_capacity(32);
                write!(text, "{:e}", f.abs()).ok()?;
                let (digits, exponent) = text.split_once('e')?;
                let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
                let mut mantissa: u128 = 0;
                for b in int.bytes().chain(frac.bytes()) {
                    mantissa = mantissa * 10 + u128::from(b - b'0');
                }
                let exponent: i32 = exponent.parse().ok()?;
                let frac_len = i32::try_from(frac.len()).ok()?;
                Some(Decimal::normalized(mantissa, exponent - frac_len))
            }
            Num::Float(_) => None,
        }
    }

    fn normalized(mut mantissa: u128, mut exponent: i32) -> Decimal {
        if mantissa == 0 {
            return Decimal {
                mantissa,
                exponent: 0,
            };
        }
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exponent += 1;
        }
        Decimal { mantissa, exponent }
    }
}

/// `a * b mod m` without overflow, for `a, b < m`.
fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    match a.checked_mul(b) {
        Some(product) => product % m,
        None => {
            // Double and add: only for moduli past 2^64, which no decimal mantissa of a float
            // reaches, but an integer step can.
            let (mut result, mut a, mut b) = (0u128, a, b);
            while b > 0 {
                if b & 1 == 1 {
                    result = add_mod(result, a, m);
                }
                a = add_mod(a, a, m);
                b >>= 1;
            }
            result
        }
    }
}

fn add_mod(a: u128, b: u128, m: u128) -> u128 {
    // a, b < m: a + b may overflow u128 only when m is past 2^127.
    match a.checked_add(b) {
        Some(sum) => sum % m,
        None => a.wrapping_add(b).wrapping_sub(m),
    }
}

/// `base^exp mod m`, by squaring.
fn pow_mod(base: u128, mut exp: u64, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut base = base % m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    result
}

/// Whether two of `items` are equal as JSON Schema defines equality: numbers by value (`1`,
/// `1.0` and `1e0` are one number, so are `0.0` and `-0.0`), objects whatever their key
/// order, arrays item by item. Linear in the items' size, by hashing a
/// canonical text of each.
pub(crate) fn has_duplicate_items(items: impl ExactSizeIterator<Item = Value>) -> bool {
    let mut seen = HashSet::with_capacity(items.len());
    let mut text = String::new();
    for item in items {
        text.clear();
        canonical(&item, &mut text);
        if seen.contains(text.as_str()) {
            return true;
        }
        seen.insert(text.clone());
    }
    false
}

/// Writes a text of `value` that two values share exactly when they are equal JSON values.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            out.push('#');
            canonical_number(n, out);
        }
        Value::String(s) => {
            // The JSON encoding of a string is unambiguous and ends at its closing quote.
            push_json_string(out, s);
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (key, member) in sorted {
                push_json_string(out, key);
                out.push(':');
                canonical(member, out);
                out.push(',');
            }
            out.push('}');
        }
    }
}

/// Appends `s` as a JSON string literal: unambiguous, and ends at its closing quote.
fn push_json_string(out: &mut String, s: &str) {
    // Writing a string into a `String` cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// An integral number as its exact integer, any other as the shortest decimal of its float.
fn canonical_number(n: &serde_json::Number, out: &mut String) {
    let exact = if let Some(i) = n.as_i64() {
        Some(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Some(i128::from(u))
    } else {
        n.as_f64().and_then(integral)
    };
    let _ = match (exact, n.as_f64()) {
        (Some(i), _) => write!(out, "{i}"),
        (None, Some(f)) => write!(out, "{f:e}"),
        (None, None) => write!(out, "{n}"),
    };
}

/// `f` as an exact integer, when it is one that fits an `i128` (every integral float below
/// 2^127 converts exactly).
fn integral(f: f64) -> Option<i128> {
    const LIMIT: f64 = 1.7e38;
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() < LIMIT).then_some(f as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(x: f64) -> Num {
        Num::Float(x)
    }

    /// A float `multipleOf` is decided exactly, not within an absolute
    /// tolerance on the quotient.
    #[test]
    fn multiple_of_floats_is_exact_on_decimals() {
        for (n, step, ok) in [
            (f(1e-10), f(0.5), false),
            (f(3e-12), f(0.5), false),
            (f(1.0000000001), f(0.5), false),
            (f(2.5), f(0.5), true),
            (f(-2.5), f(0.5), true),
            (f(0.0), f(0.5), true),
            (f(0.3), f(0.1), true),
            (f(0.7), f(0.1), true),
            (f(0.75), f(0.1), false),
            (f(1e300), f(1e-300), true),
            (f(1e-300), f(1e300), false),
            (f(1.5e10), f(3.0), true),
            (Num::Int(10), f(2.5), true),
            (Num::Int(10), f(0.3), false),
            (f(7.5), Num::Int(3), false),
            (f(9.0), Num::Int(3), true),
            (Num::Int(i128::MAX), Num::Int(7), i128::MAX % 7 == 0),
            (f(f64::NAN), f(0.5), false),
            (f(f64::INFINITY), f(0.5), false),
            (f(1e308), Num::Int(u64::MAX.into()), false),
        ] {
            assert_eq!(is_multiple(n, step), ok, "{n:?} multiple of {step:?}");
        }
    }

    /// Equality of items is JSON equality, not equal text.
    #[test]
    fn unique_items_uses_json_equality() {
        let dup = |v: Value| match v {
            Value::Array(items) => has_duplicate_items(items.into_iter()),
            _ => unreachable!("arrays only"),
        };
        assert!(dup(json!([0.0, -0.0])));
        assert!(dup(json!([1, 1.0])));
        assert!(dup(json!([{"a": 1, "b": [2.0]}, {"b": [2], "a": 1.0}])));
        assert!(dup(json!(["x", "x"])));
        assert!(!dup(json!([1, 1.5, "1", [1], {"1": 1}, null, true, false])));
        assert!(!dup(json!([9007199254740993u64, 9007199254740992.0])));
        assert!(!dup(json!(["a,", "a"])));
        assert!(!dup(json!([["a", "b"], ["a,b"]])));
    }
}
