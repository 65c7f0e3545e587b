//! S2–S5: how the parser `#[derive(Schema)]` generates treats the model's arguments.

use tool_runtime::{Context, Invalid, OutcomeKind, Rule, Schema, tool};
use tool_tests::{parse_args, paths_and_rules};

/// An order.
#[derive(Schema, Debug, PartialEq)]
struct Order {
    #[schema(min_len = 3)]
    id: String,
    #[schema(range = 1..=10)]
    qty: u32,
    #[schema(default = 5)]
    priority: u8,
    note: Option<String>,
    items: Vec<Item>,
    #[schema(default = "standard")]
    shipping: String,
    #[schema(default)]
    gift: bool,
}

/// A line of an order.
#[derive(Schema, Debug, PartialEq)]
struct Item {
    #[schema(min = 0.0)]
    price: f64,
    sku: String,
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
        .collect()
}

// S2: every violation is collected, each with its JSON pointer and the rule it broke, in one
// order whatever order the model sent the members in (T1: by pointer, indices by number, then
// by rule); the handler would not run.
#[test]
fn s2_collects_every_violation_with_its_path_and_rule() {
    let err = parse_args::<Order>(
        r#"{"id": "ab", "qty": 11, "items": [{"price": -1, "sku": 5}, {"price": 2}], "bogus": 1, "gift": "yes"}"#,
    )
    .expect_err("violations");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/bogus", "additionalProperties"),
            ("/gift", "type"),
            ("/id", "minLength"),
            ("/items/0/price", "minimum"),
            ("/items/0/sku", "type"),
            ("/items/1/sku", "required"),
            ("/qty", "maximum"),
        ])
    );
    let err = parse_args::<Order>("{}").expect_err("violations");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/id", "required"),
            ("/items", "required"),
            ("/qty", "required")
        ])
    );
    let err = parse_args::<Order>("[]").expect_err("not an object");
    assert_eq!(paths_and_rules(&err), pairs(&[("", "type")]));
}

// S2: defaults are applied to absent fields, and to `null` where the field is not an
// `Option`; `null` for an `Option` is `None`.
#[test]
fn s2_applies_defaults_to_absent_and_null_fields() {
    let order = parse_args::<Order>(
        r#"{"id": "abc", "qty": 1, "items": [], "priority": null, "note": null}"#,
    )
    .expect("a valid order");
    assert_eq!(
        order,
        Order {
            id: "abc".to_owned(),
            qty: 1,
            priority: 5,
            note: None,
            items: vec![],
            shipping: "standard".to_owned(),
            gift: false,
        }
    );
    let order = parse_args::<Order>(
        r#"{"id": "abc", "qty": 1, "items": [], "priority": 9, "shipping": "express", "gift": true, "note": "hi"}"#,
    )
    .expect("a valid order");
    assert_eq!(
        (order.priority, order.shipping.as_str(), order.gift),
        (9, "express", true)
    );
    assert_eq!(order.note.as_deref(), Some("hi"));
    // A required field sent as null is missing.
    let err = parse_args::<Order>(r#"{"id": null, "qty": 1, "items": []}"#).expect_err("required");
    assert_eq!(paths_and_rules(&err), pairs(&[("/id", "required")]));
}

/// Patterned input.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Code {
    #[schema(pattern = "^[A-Z]{3}$")]
    code: String,
}

/// Patterns in the ECMA-262 dialect the schema advertises.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct EcmaPatterns {
    #[schema(pattern = r"^\d{3}$")]
    digits: String,
    #[schema(pattern = r"^\w+$")]
    word: String,
    #[schema(pattern = r"^\u{1F600}\/(?<rest>.)$")]
    escapes: String,
}

// S2: a pattern means what it means in ECMA-262 (ASCII `\d` and `\w`), so
// a handler never receives a string its schema forbids.
#[test]
fn s2_patterns_are_ecma_262() {
    let ok = r#"{"digits": "123", "word": "hello_1", "escapes": "😀/é"}"#;
    assert!(parse_args::<EcmaPatterns>(ok).is_ok());
    for (field, value) in [
        ("digits", "١٢٣"),
        ("digits", "１２３"),
        ("word", "héllo"),
        ("escapes", "😀/\u{2028}"),
    ] {
        let mut args = serde_json::json!({"digits": "123", "word": "w", "escapes": "😀/x"});
        args[field] = value.into();
        let err = parse_args::<EcmaPatterns>(&args.to_string()).expect_err(value);
        assert_eq!(
            paths_and_rules(&err),
            vec![(format!("/{field}"), "pattern".to_owned())],
            "{value}"
        );
    }
}

// S3: a violation quotes at most a short, truncated piece of the offending value.
#[test]
fn s3_violations_truncate_the_value() {
    let long = "x".repeat(5000);
    let err = parse_args::<Code>(&format!(r#"{{"code": "{long}"}}"#)).expect_err("pattern");
    assert_eq!(err[0].rule, Rule::Pattern);
    assert!(err[0].message.contains('…'), "{}", err[0].message);
    assert!(err[0].message.len() < 120, "{}", err[0].message);
    let err =
        parse_args::<Code>(&format!(r#"{{"code": "ABC", "{long}": 1}}"#)).expect_err("unknown");
    assert_eq!(err[0].rule, Rule::AdditionalProperties);
    assert!(err[0].path.len() < 40, "{}", err[0].path);
    assert!(err[0].message.len() < 200, "{}", err[0].message);
}

/// Every integer type.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Ints {
    a: Option<i8>,
    b: Option<i16>,
    c: Option<i32>,
    d: Option<i64>,
    e: Option<u8>,
    f: Option<u16>,
    g: Option<u32>,
    h: Option<u64>,
    i: Option<isize>,
    j: Option<usize>,
    k: Option<i128>,
    l: Option<u128>,
}

// S4: each integer field enforces its Rust type's range, at both ends.
#[test]
fn s4_integers_enforce_their_type_range() {
    let cases: [(&str, i128, i128); 10] = [
        ("a", i8::MIN.into(), i8::MAX.into()),
        ("b", i16::MIN.into(), i16::MAX.into()),
        ("c", i32::MIN.into(), i32::MAX.into()),
        ("d", i64::MIN.into(), i64::MAX.into()),
        ("e", 0, u8::MAX.into()),
        ("f", 0, u16::MAX.into()),
        ("g", 0, u32::MAX.into()),
        ("h", 0, u64::MAX.into()),
        ("i", isize::MIN as i128, isize::MAX as i128),
        ("j", 0, usize::MAX as i128),
    ];
    for (key, min, max) in cases {
        assert!(
            parse_args::<Ints>(&format!(r#"{{"{key}": {min}}}"#)).is_ok(),
            "{key} {min}"
        );
        assert!(
            parse_args::<Ints>(&format!(r#"{{"{key}": {max}}}"#)).is_ok(),
            "{key} {max}"
        );
        if min > i128::from(i64::MIN) {
            let err =
                parse_args::<Ints>(&format!(r#"{{"{key}": {}}}"#, min - 1)).expect_err("below");
            assert_eq!(
                paths_and_rules(&err),
                pairs(&[(&format!("/{key}"), "minimum")]),
                "{key}"
            );
        }
        if max < i128::from(u64::MAX) {
            let err =
                parse_args::<Ints>(&format!(r#"{{"{key}": {}}}"#, max + 1)).expect_err("above");
            assert_eq!(
                paths_and_rules(&err),
                pairs(&[(&format!("/{key}"), "maximum")]),
                "{key}"
            );
        }
    }
    assert!(parse_args::<Ints>(r#"{"k": -5, "l": 5}"#).is_ok());
    let err = parse_args::<Ints>(r#"{"l": -1}"#).expect_err("u128 is unsigned");
    assert_eq!(paths_and_rules(&err), pairs(&[("/l", "minimum")]));
    // Fractions are not integers; integral floats are.
    let err = parse_args::<Ints>(r#"{"c": 1.5}"#).expect_err("a fraction");
    assert_eq!(paths_and_rules(&err), pairs(&[("/c", "type")]));
    assert!(parse_args::<Ints>(r#"{"c": 3.0}"#).is_ok());
}

// S4: an integer type's own bound that lies past 2^53 - 1 (beyond what every JSON reader holds
// exactly) is left out of the schema rather than rounded (docs/contract.md §3), and the parser
// still enforces it; a bound within that range is published as it is.
#[test]
fn s4_type_bounds_past_exact_json_integers_are_left_out_and_enforced() {
    let schema = tool_tests::schema_of::<Ints>().expect("a schema");
    let node = |key: &str| {
        schema["properties"][key]
            .as_object()
            .expect("a property")
            .clone()
    };
    let bound = |key: &str, side: &str| node(key).get(side).cloned();
    assert_eq!(bound("c", "minimum"), Some(i32::MIN.into()));
    assert_eq!(bound("c", "maximum"), Some(i32::MAX.into()));
    assert_eq!(bound("g", "maximum"), Some(u32::MAX.into()));
    for key in ["d", "i", "k"] {
        assert_eq!(bound(key, "minimum"), None, "{key}");
        assert_eq!(bound(key, "maximum"), None, "{key}");
    }
    for key in ["h", "j", "l"] {
        assert_eq!(bound(key, "minimum"), Some(0.into()), "{key}");
        assert_eq!(bound(key, "maximum"), None, "{key}");
    }
    assert!(parse_args::<Ints>(r#"{"h": 18446744073709551615}"#).is_ok());
    let err = parse_args::<Ints>(r#"{"h": 18446744073709551616}"#).expect_err("past u64");
    assert_eq!(paths_and_rules(&err), pairs(&[("/h", "maximum")]));
    assert!(err[0].message.contains("18446744073709551615"), "{err:?}");
    let err = parse_args::<Ints>(r#"{"d": -9223372036854775809}"#).expect_err("past i64");
    assert_eq!(paths_and_rules(&err), pairs(&[("/d", "minimum")]));
}

/// Floats.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Floats {
    small: Option<f32>,
    big: Option<f64>,
}

// S4: floats reject values that are not finite in their type; a number too large for JSON
// decoding is a syntax violation.
#[test]
fn s4_floats_reject_non_finite_values() {
    assert!(parse_args::<Floats>(r#"{"small": 1e38, "big": 1e308}"#).is_ok());
    let err = parse_args::<Floats>(r#"{"small": 1e39}"#).expect_err("not an f32");
    assert_eq!(paths_and_rules(&err), pairs(&[("/small", "type")]));
    let err = parse_args::<Floats>(r#"{"big": 1e400}"#).expect_err("not a number");
    assert_eq!(err[0].rule, Rule::Syntax);
}

// S4: unknown fields are violations, and duplicate keys are rejected.
#[test]
fn s4_unknown_fields_and_duplicate_keys_are_rejected() {
    let err = parse_args::<Code>(r#"{"code": "ABC", "cod": 1, "x": 2}"#).expect_err("unknown");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/cod", "additionalProperties"),
            ("/x", "additionalProperties")
        ])
    );
    assert!(err[0].message.contains("\"code\""), "{}", err[0].message);
    let err = parse_args::<Code>(r#"{"code": "ABC", "code": "DEF"}"#).expect_err("duplicate");
    assert_eq!(paths_and_rules(&err), pairs(&[("", "syntax")]));
    assert!(err[0].message.contains("twice"), "{}", err[0].message);
}

/// Strings in every enforced format.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Formats {
    #[schema(format = "email")]
    email: Option<String>,
    #[schema(format = "uri")]
    uri: Option<String>,
    #[schema(format = "uuid")]
    uuid: Option<String>,
    #[schema(format = "date")]
    date: Option<String>,
    #[schema(format = "date-time")]
    at: Option<String>,
}

// Formats are enforced, not only advertised.
#[test]
fn formats_are_enforced() {
    assert!(
        parse_args::<Formats>(
            r#"{"email": "ops@example.com", "uri": "https://example.com/x", "uuid": "67e55044-10b1-426f-9247-bb680e5fe0c8", "date": "2024-02-29", "at": "2024-05-01T10:00:00Z"}"#
        )
        .is_ok()
    );
    let err = parse_args::<Formats>(
        r#"{"email": "ops", "uri": "/x", "uuid": "67e55044", "date": "2023-02-29", "at": "2024-05-01 10:00"}"#,
    )
    .expect_err("bad formats");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/at", "format"),
            ("/date", "format"),
            ("/email", "format"),
            ("/uri", "format"),
            ("/uuid", "format"),
        ])
    );
}

/// Every string, number and list constraint.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Constrained {
    #[schema(max_len = 3, one_of = ["ab", "abc", "abcd"])]
    word: Option<String>,
    #[schema(exclusive_min = 0, exclusive_max = 10, multiple_of = 2)]
    even: Option<i32>,
    #[schema(range = 0.0..1.0)]
    unit: Option<f64>,
    #[schema(min_items = 1, max_items = 2, unique_items)]
    list: Option<Vec<u8>>,
}

#[test]
fn constraints_are_enforced() {
    assert!(
        parse_args::<Constrained>(r#"{"word": "abc", "even": 4, "unit": 0.5, "list": [1, 2]}"#)
            .is_ok()
    );
    let err = parse_args::<Constrained>(
        r#"{"word": "abcd", "even": 10, "unit": 1.0, "list": [1, 1, 1]}"#,
    )
    .expect_err("violations");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/even", "exclusiveMaximum"),
            ("/list", "maxItems"),
            ("/list", "uniqueItems"),
            ("/unit", "exclusiveMaximum"),
            ("/word", "maxLength"),
        ])
    );
    let err = parse_args::<Constrained>(r#"{"word": "x", "even": 3, "list": []}"#)
        .expect_err("violations");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[
            ("/even", "multipleOf"),
            ("/list", "minItems"),
            ("/word", "enum")
        ])
    );
}

fn check_sku(sku: &str) -> Result<(), Invalid> {
    if sku == "db-down" {
        return Err(Invalid::error(std::io::Error::other(
            "inventory database unreachable",
        )));
    }
    if !sku.starts_with("SKU-") {
        return Err(Invalid::violation("must start with `SKU-`"));
    }
    Ok(())
}

fn check_qty(qty: &u32) -> Result<(), Invalid> {
    if qty % 2 == 1 {
        return Err(Invalid::violation("must be even"));
    }
    Ok(())
}

/// A restock request.
#[derive(Schema, Debug)]
struct RestockInput {
    #[schema(validate = check_sku)]
    sku: String,
    #[schema(validate = check_qty, max = 100)]
    qty: u32,
}

/// Restocks an item.
#[tool]
fn restock(input: RestockInput) -> String {
    format!("{} x{}", input.sku, input.qty)
}

// S5: a validator's violation goes to the model as a violation at the field's path; its
// operational error is redacted like any handler failure (the model reads only `the tool
// failed`), and kept for the application.
#[tokio::test]
async fn s5_validator_violation_and_operational_error() {
    let tool = tool_runtime::IntoTool::into_tool(Restock);
    let ctx = Context::new();

    let ok = tool.invoke(&ctx, br#"{"sku": "SKU-1", "qty": 4}"#).await;
    assert_eq!((ok.kind(), ok.text()), (OutcomeKind::Success, "SKU-1 x4"));

    let bad = tool.invoke(&ctx, br#"{"sku": "nope", "qty": 3}"#).await;
    assert_eq!(bad.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(
        paths_and_rules(bad.violations()),
        pairs(&[("/qty", "custom"), ("/sku", "custom")])
    );
    assert!(
        bad.text().contains("must start with `SKU-`"),
        "{}",
        bad.text()
    );

    let failed = tool.invoke(&ctx, br#"{"sku": "db-down", "qty": 2}"#).await;
    assert_eq!(failed.kind(), OutcomeKind::Failed);
    assert_eq!(failed.text(), "the tool failed");
    assert!(failed.violations().is_empty());
    let error = failed.error().expect("the error is kept");
    assert_eq!(error.kind(), tool_runtime::ErrorKind::Validation);
    assert!(
        format!("{error:#}").contains("inventory database unreachable"),
        "{error:#}"
    );
}

/// A command.
#[derive(Schema, Debug, PartialEq)]
#[schema(tag = "op")]
enum Command {
    Move {
        #[schema(range = 0..=10)]
        steps: u8,
    },
    Stop,
}

/// A colour.
#[derive(Schema, Debug, PartialEq)]
#[schema(rename_all = "kebab-case")]
enum Colour {
    DeepRed,
    Green,
}

/// What to do, in which colour.
#[derive(Schema, Debug, PartialEq)]
struct Plan {
    command: Command,
    colour: Option<Colour>,
}

// S2 for enums: a missing, unknown or mistyped tag is a violation at the tag; a variant's
// fields are checked like a struct's; a string enum takes only its names.
#[test]
fn s2_enums_report_bad_tags_and_values() {
    let plan: Plan = parse_args(r#"{"command": {"op": "Move", "steps": 3}, "colour": "deep-red"}"#)
        .expect("a valid plan");
    assert_eq!(
        plan,
        Plan {
            command: Command::Move { steps: 3 },
            colour: Some(Colour::DeepRed)
        }
    );
    assert_eq!(
        parse_args::<Plan>(r#"{"command": {"op": "Stop"}}"#).map(|p| p.command),
        Ok(Command::Stop)
    );
    let cases = [
        (r#"{"command": {"steps": 3}}"#, ("/command/op", "required")),
        (r#"{"command": {"op": "Jump"}}"#, ("/command/op", "enum")),
        (r#"{"command": {"op": 1}}"#, ("/command/op", "type")),
        (
            r#"{"command": {"op": "Move", "steps": 11}}"#,
            ("/command/steps", "maximum"),
        ),
        (
            r#"{"command": {"op": "Stop", "steps": 1}}"#,
            ("/command/steps", "additionalProperties"),
        ),
        (
            r#"{"command": {"op": "Stop"}, "colour": "DeepRed"}"#,
            ("/colour", "enum"),
        ),
        (
            r#"{"command": {"op": "Stop"}, "colour": 1}"#,
            ("/colour", "type"),
        ),
    ];
    for (args, (path, rule)) in cases {
        let err = parse_args::<Plan>(args).expect_err(args);
        assert_eq!(paths_and_rules(&err), pairs(&[(path, rule)]), "{args}");
    }
    let err = parse_args::<Plan>(r#"{"command": {"op": "Jump"}}"#).expect_err("unknown tag");
    assert!(
        err[0].message.contains(r#""Move", "Stop""#),
        "{}",
        err[0].message
    );
}

/// Keys that a JSON pointer must escape.
#[derive(Schema, Debug)]
struct Escaped {
    #[schema(rename = "a/b~c", range = 1..=3)]
    slashed: u8,
}

// S2: a violation's path escapes `~` and `/` in a declared key, as JSON pointers do.
#[test]
fn s2_paths_escape_declared_keys() {
    let err = parse_args::<Escaped>(r#"{"a/b~c": 9}"#).expect_err("out of range");
    assert_eq!(paths_and_rules(&err), pairs(&[("/a~1b~0c", "maximum")]));
    let err = parse_args::<Escaped>("{}").expect_err("missing");
    assert_eq!(paths_and_rules(&err), pairs(&[("/a~1b~0c", "required")]));
}

/// A tree of unbounded depth.
#[derive(Schema, Debug)]
struct Node {
    children: Vec<Node>,
    next: Option<Box<Node>>,
}

fn nested(depth: usize) -> String {
    let mut text = String::from(r#"{"children": []}"#);
    for i in 0..depth {
        text = if i % 2 == 0 {
            format!(r#"{{"children": [{text}]}}"#)
        } else {
            format!(r#"{{"children": [], "next": {text}}}"#)
        };
    }
    text
}

// S2: a recursive input parses as deep as the decoder allows (128 levels), on a thread with
// the default 2 MiB stack, and deeper input is a syntax error, not a stack overflow.
#[test]
fn s2_recursive_input_is_bounded_without_overflowing_the_stack() {
    let parsed = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let shallow = parse_args::<Node>(&nested(80)).map(|_| ());
            let deep = r#"{"children": ["#.repeat(50_000) + &"]}".repeat(50_000);
            let deep = parse_args::<Node>(&deep).map(|_| ());
            (shallow, deep)
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
    assert_eq!(parsed.0, Ok(()));
    let deep = parsed.1.expect_err("too deep");
    assert_eq!(paths_and_rules(&deep), pairs(&[("", "syntax")]));
}

#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Bounded {
    #[schema(range = 1..=30)]
    days: u32,
    hosts: u16,
    #[schema(exclusive_min = 0)]
    step: u8,
}

// T1: a number past its Rust type's range breaks the bound the schema shows: the field's own
// where it declares one on that side, else the type's (now shown in the schema too); a whole
// number too large for any integer (`1e300`) is out of range, not of the wrong type.
#[test]
fn t1_a_number_past_its_type_breaks_the_bound_the_schema_shows() {
    let messages = |args: &str| -> Vec<(String, String, String)> {
        parse_args::<Bounded>(args)
            .expect_err("violations")
            .iter()
            .map(|v| {
                (
                    v.path.clone(),
                    v.rule.keyword().to_owned(),
                    v.message.clone(),
                )
            })
            .collect()
    };
    let triple = |p: &str, r: &str, m: &str| (p.to_owned(), r.to_owned(), m.to_owned());
    assert_eq!(
        messages(r#"{"days": 5000000000, "hosts": 70000, "step": -1}"#),
        vec![
            triple("/days", "maximum", "must be at most 30, found 5000000000"),
            triple("/hosts", "maximum", "must be at most 65535, found 70000"),
            triple(
                "/step",
                "exclusiveMinimum",
                "must be greater than 0, found -1"
            ),
        ]
    );
    assert_eq!(
        messages(r#"{"days": -4, "hosts": 1e300, "step": 2.5}"#),
        vec![
            triple("/days", "minimum", "must be at least 1, found -4"),
            triple("/hosts", "maximum", "must be at most 65535, found 1e300"),
            triple("/step", "type", "expected an integer, found 2.5"),
        ]
    );
    let schema = tool_runtime::schema::render_root::<Bounded>().expect("an object schema");
    assert_eq!(schema["properties"]["hosts"]["maximum"], 65535);
    assert_eq!(schema["properties"]["days"]["maximum"], 30);
    assert_eq!(schema["properties"]["step"].get("minimum"), None);
    assert_eq!(schema["properties"]["step"]["exclusiveMinimum"], 0);
}
