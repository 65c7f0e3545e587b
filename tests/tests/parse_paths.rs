//! S2: a call's arguments are parsed as they are decoded; a value decoded first is parsed by
//! the same rules. Both paths must give the same value or the same violations, in the same
//! order, for anything the model sends.

use proptest::prelude::*;
use serde_json::{Value, json};
use tool_runtime::Schema;
use tool_tests::{parse_args, parse_decoded, paths_and_rules};

/// A shipment: every kind of field the parser treats differently.
#[derive(Schema, Debug, PartialEq)]
struct Shipment {
    #[schema(min_len = 2, max_len = 8)]
    id: String,
    #[schema(range = 1..=10)]
    qty: u8,
    #[schema(default = 3)]
    priority: u8,
    note: Option<String>,
    parcels: Vec<Parcel>,
    mode: Mode,
    #[schema(default)]
    fragile: bool,
    extra: Option<Box<Parcel>>,
    meta: Option<serde_json::Value>,
    route: Option<Route>,
}

/// One parcel.
#[derive(Schema, Debug, PartialEq)]
struct Parcel {
    #[schema(min = 0.0)]
    weight: f64,
    tags: Vec<Option<i16>>,
}

/// How it travels.
#[derive(Schema, Debug, PartialEq)]
#[schema(rename_all = "lowercase")]
enum Mode {
    Air,
    Sea,
}

/// A route, tagged by its kind.
#[derive(Schema, Debug, PartialEq)]
#[schema(tag = "kind", rename_all = "lowercase")]
enum Route {
    Direct { hub: Option<String> },
    Stops { stops: Vec<String> },
}

fn arb_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-20i64..300).prop_map(Value::from),
        (-5.0f64..5.0).prop_map(Value::from),
        "[a-z~/]{0,10}".prop_map(Value::String),
        Just(json!("air")),
        Just(json!("direct")),
        Just(json!("stops")),
    ]
}

/// Values near the shape of a `Shipment`: its keys (and a few others) with values of any type.
fn arb_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("id"),
        Just("qty"),
        Just("priority"),
        Just("note"),
        Just("parcels"),
        Just("mode"),
        Just("fragile"),
        Just("extra"),
        Just("meta"),
        Just("route"),
        Just("weight"),
        Just("tags"),
        Just("kind"),
        Just("hub"),
        Just("stops"),
        Just("bogus"),
        Just("a/b~c"),
    ]
    .prop_map(str::to_owned);
    arb_leaf().prop_recursive(5, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..10)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn assert_same(text: &str) -> Result<(), TestCaseError> {
    let streamed = parse_args::<Shipment>(text);
    let decoded = parse_decoded::<Shipment>(text);
    match (&streamed, &decoded) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(a), Err(b)) => {
            prop_assert_eq!(paths_and_rules(a), paths_and_rules(b));
            prop_assert_eq!(a, b);
        }
        _ => prop_assert!(false, "{text}: {streamed:?} vs {decoded:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    // S2: the streamed parse and the parse of a decoded tree agree on every value.
    #[test]
    fn s2_streamed_and_decoded_parses_agree(value in arb_value()) {
        assert_same(&value.to_string())?;
    }

    // S2, S4: and on every byte string, duplicate keys and broken JSON included (the syntax
    // error's text may differ; its rule may not).
    #[test]
    fn s2_streamed_and_decoded_parses_agree_on_damaged_text(
        value in arb_value(),
        cut in 0usize..200,
        dup in any::<bool>(),
    ) {
        let mut text = value.to_string();
        if dup && text.starts_with('{') && text.len() > 2 {
            text.insert_str(1, "\"qty\":1,\"qty\":2,");
        }
        let text = &text[..text.len().min(cut.max(1))];
        let streamed = parse_args::<Shipment>(text).map_err(|v| paths_and_rules(&v));
        let decoded = parse_decoded::<Shipment>(text).map_err(|v| paths_and_rules(&v));
        prop_assert_eq!(streamed, decoded);
    }
}

// S2: a complete, valid shipment reads the same both ways (the properties above mostly meet
// invalid ones).
#[test]
fn s2_a_valid_shipment_reads_the_same_both_ways() {
    let text = r#"{"id": "s-1", "qty": 2, "parcels": [{"weight": 1.5, "tags": [1, null]}],
        "mode": "sea", "extra": {"weight": 0, "tags": []}, "meta": null,
        "route": {"kind": "stops", "stops": ["a", "b"]}}"#;
    let streamed = parse_args::<Shipment>(text).expect("valid");
    assert_eq!(Ok(&streamed), parse_decoded::<Shipment>(text).as_ref());
    assert_eq!(streamed.priority, 3);
    assert_eq!(streamed.parcels[0].tags, vec![Some(1), None]);
    assert_eq!(
        streamed.route,
        Some(Route::Stops {
            stops: vec!["a".into(), "b".into()]
        })
    );
    assert_eq!(streamed.meta, None);
}

// S4: a key sent twice is an error on both paths, wherever it is.
#[test]
fn s4_duplicate_keys_are_rejected_on_both_paths() {
    for text in [
        r#"{"id": "abc", "id": "abc"}"#,
        r#"{"bogus": 1, "bogus": 2}"#,
        r#"{"parcels": [{"weight": 1, "weight": 2}]}"#,
        r#"{"meta": {"a": 1, "a": 1}}"#,
        r#"{"qty": {"a": 1, "a": 1}}"#,
    ] {
        for parsed in [
            parse_args::<Shipment>(text),
            parse_decoded::<Shipment>(text),
        ] {
            let violations = parsed.expect_err("duplicate key");
            assert_eq!(violations.len(), 1, "{text}");
            assert!(
                violations[0].message.contains("twice"),
                "{text}: {violations:?}"
            );
        }
    }
}
