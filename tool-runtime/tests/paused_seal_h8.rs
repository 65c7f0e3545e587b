//! H8: a paused run's seal covers a canonical form (RFC 8785), so that a JSON-equivalent
//! rewrite of its file (keys in another order at every level, other whitespace, `\u00e9` and
//! `\/` escapes, numbers spelled otherwise, what `jq -S` writes) still resumes, keyed and
//! unkeyed, and a change of meaning is refused as altered.
//!
//! The rewrites are written by a small JSON writer of this file, so that each is exactly the
//! spelling it names (serde_json writes one spelling only).
mod support {
    pub mod agent;
}

use std::sync::{Arc, Mutex};

use serde_json::{Map, Number, Value, json};
use support::agent::Args;
use tool_runtime::{
    Agent, Context, Decisions, ErrorKind, PausedRun, ResumeError, ScriptedModel, ScriptedTurn, Tool,
};

/// The application's key, for the keyed half of each test.
const KEY: &[u8] = b"an application secret of 32 byte";

/// The arguments the model gives the call that waits for approval: non-ASCII text (an astral
/// character too), escapes, a nested object whose keys sort differently by UTF-16 and by
/// UTF-8, and numbers of each kind (an integer beyond 2^53 among them).
const PAY: &str = r#"{"payee":"Zo\u00eb \u00c5ngstr\u00f6m \ud83d\ude00","memo":"a/b \"q\"\ttab\u007f end","amount":100,"ratio":0.5,"count":1,"neg":-3,"big":12345678901234567890,"split":{"zeta":[1,2.5,{"b":"\u00e9","a":null}],"alpha":true,"\u20ac":"euro","\ufb33":"dalet","\ud83d\ude00":"grin"}}"#;

/// The tools: `pay` needs approval and records the arguments it ran with; `echo` runs at
/// once (its result, with non-ASCII text, is part of the paused run).
struct Fixture {
    tools: Vec<Tool>,
    paid: Arc<Mutex<Vec<Args>>>,
}

impl Fixture {
    fn new() -> Self {
        let paid = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&paid);
        let pay = Tool::builder("pay", "Pays someone.")
            .handler(move |_ctx: Context, args: Args| {
                seen.lock().expect("not poisoned").push(args);
                async move { Ok::<_, std::io::Error>("paid") }
            })
            .require_approval()
            .build();
        let echo = Tool::builder("echo", "Repeats its arguments.")
            .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
            .build();
        Self {
            tools: vec![echo, pay],
            paid,
        }
    }

    /// An agent of these tools whose model answers `turns`.
    fn agent(&self, turns: Vec<ScriptedTurn>, key: Option<&[u8]>) -> Agent {
        let model = ScriptedModel::new(turns);
        let mut builder = Agent::builder(model)
            .instructions("Pay as asked.")
            .tools(self.tools.clone());
        if let Some(key) = key {
            builder = builder.state_key(key);
        }
        builder.build().expect("the tools are declared right")
    }

    fn paid(&self) -> Vec<Args> {
        self.paid.lock().expect("not poisoned").clone()
    }
}

/// The turn that pauses: `echo` runs, `pay` waits for approval.
fn calls() -> ScriptedTurn {
    ScriptedTurn::new()
        .text("Paying.")
        .call("c1", "echo", "{\"word\":\"caf\u{e9} \u{2615} a/b\"}")
        .call("c2", "pay", PAY)
        .usage(12, 7)
}

/// The paused run's JSON text (as `PausedRun::to_json` writes it), sealed with `key`.
async fn paused_text(key: Option<&[u8]>) -> String {
    let fixture = Fixture::new();
    let error = fixture
        .agent(vec![calls()], key)
        .run(&Context::new(), "Pay Zoë.")
        .await
        .expect_err("the run pauses");
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    error
        .into_paused()
        .expect("a paused run")
        .to_json()
        .expect("a paused run is JSON")
}

/// Resumes the paused run of `text` with `c2` approved, in a fresh agent (`key`): the answer
/// and what `pay` ran with, or why the run was refused.
async fn resume(text: &str, key: Option<&[u8]>) -> Result<(String, Vec<Args>), ResumeError> {
    let paused = PausedRun::from_json(text)?;
    let fixture = Fixture::new();
    let agent = fixture.agent(vec![ScriptedTurn::reply("Paid Zoë.")], key);
    let verified = agent.verify(&paused);
    let resumed = agent
        .resume(&Context::new(), paused, Decisions::new().approve("c2"))
        .await;
    match resumed {
        Ok(out) => {
            assert_eq!(verified, Ok(()));
            Ok((out.text, fixture.paid()))
        }
        Err(error) => {
            assert_eq!(error.kind(), ErrorKind::Resume, "{error:#}");
            let refused = error.resume_error().cloned().expect("a ResumeError");
            assert_eq!(verified, Err(refused.clone()));
            assert!(fixture.paid().is_empty(), "nothing ran");
            Err(refused)
        }
    }
}

// ─── A JSON writer of many spellings ─────────────────────────────────────────────────────────

/// In which order an object's members are written.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// The reverse of the value's own order, at every level.
    Reversed,
    /// An order of its own (by a hash of each key), at every level.
    Shuffled,
    /// By the keys' UTF-8 bytes, as `jq -S` sorts.
    Bytes,
}

/// Which characters of strings are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// Only what must be, with the short escapes.
    Minimal,
    /// Non-ASCII as `\u00e9` (astral characters as surrogate pairs), `/` as `\/`, controls
    /// and DEL as `\u000A` (uppercase hex).
    NonAscii,
    /// Every character as `\uXXXX`.
    Everything,
    /// As jq writes: the short escapes, other controls and DEL as `\u007f`.
    Jq,
}

/// A spelling of JSON.
#[derive(Debug, Clone, Copy)]
struct Style {
    order: Order,
    /// One level of indentation (and a line per member), or none.
    indent: Option<&'static str>,
    /// Whitespace around every `:`, `,` and bracket.
    gap: &'static str,
    escape: Escape,
    /// Whether the numbers of a call's arguments (the values of an `arguments` key that are
    /// not strings) are spelled otherwise: `1e2` for 100, `10E-1` for 1, `5E-1` for 0.5.
    respell: bool,
}

fn write(value: &Value, style: Style) -> String {
    let mut out = String::new();
    write_value(&mut out, value, style, 0, false);
    out
}

fn write_value(out: &mut String, value: &Value, style: Style, depth: usize, respell: bool) {
    match value {
        Value::Null | Value::Bool(_) => out.push_str(&value.to_string()),
        Value::Number(n) if respell => out.push_str(&respelled(n)),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s, style.escape),
        Value::Array(items) => {
            let items: Vec<_> = items.iter().map(|item| (None, item)).collect();
            write_members(out, ('[', ']'), items, style, depth, respell);
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            match style.order {
                Order::Reversed => members.reverse(),
                Order::Shuffled => members.sort_by_key(|(key, _)| fnv(key)),
                Order::Bytes => members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes())),
            }
            let members = members
                .into_iter()
                .map(|(key, item)| (Some(key.as_str()), item))
                .collect();
            write_members(out, ('{', '}'), members, style, depth, respell);
        }
    }
}

fn write_members(
    out: &mut String,
    (open, close): (char, char),
    members: Vec<(Option<&str>, &Value)>,
    style: Style,
    depth: usize,
    respell: bool,
) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(indent) = style.indent {
            out.push('\n');
            out.push_str(&indent.repeat(depth));
        }
    };
    out.push(open);
    let empty = members.is_empty();
    for (i, (key, item)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push_str(style.gap);
            out.push(',');
        }
        out.push_str(style.gap);
        newline(out, depth + 1);
        let respell = respell || (style.respell && key == Some("arguments") && !item.is_string());
        if let Some(key) = key {
            write_string(out, key, style.escape);
            out.push_str(style.gap);
            out.push(':');
            out.push_str(if style.indent.is_some() {
                " "
            } else {
                style.gap
            });
        }
        write_value(out, item, style, depth + 1, respell);
    }
    if !empty {
        newline(out, depth);
    }
    out.push_str(style.gap);
    out.push(close);
}

fn write_string(out: &mut String, text: &str, escape: Escape) {
    out.push('"');
    for c in text.chars() {
        let code = u32::from(c);
        match (escape, c) {
            (Escape::Everything, _) => push_utf16(out, c, true),
            (_, '"') => out.push_str("\\\""),
            (_, '\\') => out.push_str("\\\\"),
            (Escape::NonAscii, '/') => out.push_str("\\/"),
            (Escape::NonAscii, _) if !(0x20..0x7f).contains(&code) => push_utf16(out, c, true),
            (_, '\n') => out.push_str("\\n"),
            (_, '\t') => out.push_str("\\t"),
            (_, '\r') => out.push_str("\\r"),
            (_, '\u{8}') => out.push_str("\\b"),
            (_, '\u{c}') => out.push_str("\\f"),
            (Escape::Jq, '\u{7f}') => push_utf16(out, c, false),
            _ if code < 0x20 => push_utf16(out, c, false),
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// `c` as `\uXXXX` escapes of its UTF-16 code units (two for an astral character).
fn push_utf16(out: &mut String, c: char, upper: bool) {
    let mut units = [0_u16; 2];
    for unit in c.encode_utf16(&mut units) {
        if upper && *unit > 0x7f {
            out.push_str(&format!("\\u{unit:04X}"));
        } else {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    }
}

/// Another spelling of the same number: `1e2` for 100, `10E-1` for 1, `-3.0` for -3, `5E-1`
/// for 0.5. An integer beyond 2^53 keeps its digits: any other spelling reads as a double,
/// another number.
fn respelled(n: &Number) -> String {
    const EXACT: u64 = 1 << 53;
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) if i.unsigned_abs() <= EXACT => match i {
            1 => "10E-1".to_owned(),
            i if i != 0 && i % 100 == 0 => format!("{}e2", i / 100),
            i => format!("{i}.0"),
        },
        (None, Some(x)) if !n.is_u64() => format!("{x:E}"),
        _ => n.to_string(),
    }
}

/// FNV-1a of `key`: an order of keys unlike their own.
fn fnv(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether `a` and `b` are the same JSON value, numbers compared by value.
fn equivalent(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            // An integer held exactly equals a double only where doubles are exact.
            let exact = |n: &Number| n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
            match (exact(x), exact(y)) {
                (Some(i), Some(j)) => i == j,
                (Some(i), None) | (None, Some(i)) => {
                    i.unsigned_abs() <= 1 << 53 && x.as_f64() == y.as_f64()
                }
                (None, None) => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equivalent(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, a)| y.get(key).is_some_and(|b| equivalent(a, b)))
        }
        _ => a == b,
    }
}

/// The rewrites, each named.
fn styles() -> Vec<(&'static str, Style)> {
    let plain = Style {
        order: Order::Reversed,
        indent: None,
        gap: "",
        escape: Escape::Minimal,
        respell: false,
    };
    vec![
        ("keys reversed at every level, compact", plain),
        (
            "keys shuffled, indented with tabs, \\u00e9 and \\/ escapes",
            Style {
                order: Order::Shuffled,
                indent: Some("\t"),
                gap: " ",
                escape: Escape::NonAscii,
                ..plain
            },
        ),
        (
            "numbers respelled (1e2, 10E-1, -3.0, 5E-1)",
            Style {
                order: Order::Shuffled,
                respell: true,
                ..plain
            },
        ),
        (
            "every character escaped, CRLF and spaces everywhere, numbers respelled",
            Style {
                order: Order::Reversed,
                indent: Some("    "),
                gap: " \r\n ",
                escape: Escape::Everything,
                respell: true,
            },
        ),
        (
            "as jq -S writes: keys sorted by bytes, indented by 2",
            Style {
                order: Order::Bytes,
                indent: Some("  "),
                gap: "",
                escape: Escape::Jq,
                respell: false,
            },
        ),
    ]
}

// ─── H8 ──────────────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn h8_json_equivalent_rewrites_of_a_paused_run_resume_keyed_and_unkeyed() {
    let expected: Args = serde_json::from_str(PAY).unwrap();
    for key in [None, Some(KEY)] {
        let text = paused_text(key).await;
        let value: Value = serde_json::from_str(&text).unwrap();
        // The arguments that wait are in the file as values, with their numbers.
        assert_eq!(
            value["run"]["pending"][0]["arguments"]["big"],
            json!(12345678901234567890_u64)
        );
        let (answer, paid) = resume(&text, key).await.unwrap();
        assert_eq!(
            (answer.as_str(), paid.len()),
            ("Paid Zoë.", 1),
            "as written"
        );
        for (name, style) in styles() {
            let rewritten = write(&value, style);
            assert_ne!(rewritten, text, "{name}");
            let reread: Value = serde_json::from_str(&rewritten).unwrap();
            assert!(equivalent(&reread, &value), "{name}: not equivalent");
            if style.respell {
                assert_ne!(reread, value, "{name}: no number respelled");
                assert!(
                    rewritten.contains("1e2") && rewritten.contains("10E-1"),
                    "{name}"
                );
            }
            let resumed = resume(&rewritten, key).await;
            let (answer, paid) = resumed.unwrap_or_else(|e| panic!("{name} (key {key:?}): {e}"));
            assert_eq!(answer, "Paid Zoë.", "{name}");
            // `pay` runs with the model's arguments, as they were.
            assert_eq!(paid, std::slice::from_ref(&expected), "{name}");
        }
    }
}

#[tokio::test]
async fn h8_the_jq_rewrite_is_what_jq_writes() {
    // The `jq -S` rewrite of this file is checked against jq's own conventions: keys sorted
    // by bytes at every level, two spaces, `": "`, DEL escaped, `/` and non-ASCII literal.
    let text = paused_text(None).await;
    let value: Value = serde_json::from_str(&text).unwrap();
    let (_, jq) = styles().pop().unwrap();
    let rewritten = write(&value, jq);
    assert!(rewritten.starts_with(
        "{\n  \"format\": \"tool-runtime/paused-run\",\n  \"run\": {\n    \"pause_id\": \"pause_"
    ));
    assert!(rewritten.contains("\\u007f end"), "DEL escaped");
    assert!(
        rewritten.contains("Zo\u{eb} \u{c5}ngstr\u{f6}m \u{1f600}") && rewritten.contains("a/b")
    );
    let pretty_sorted = serde_json::to_string_pretty(&value).unwrap();
    let sorted_keys = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| line.trim_start().strip_prefix('"'))
            .filter_map(|line| line.split_once("\": ").map(|(key, _)| key.to_owned()))
            .collect()
    };
    // serde_json's default map is sorted by bytes too: the same keys in the same order.
    assert_eq!(sorted_keys(&rewritten), sorted_keys(&pretty_sorted));
}

#[tokio::test]
async fn h8_a_change_of_meaning_is_refused_as_altered_keyed_and_unkeyed() {
    type Edit = Box<dyn Fn(&mut Value)>;
    type ArgumentsEdit = Box<dyn Fn(&mut Map<String, Value>)>;
    let arguments = |run: &mut Value| -> Map<String, Value> {
        run["pending"][0]["arguments"].as_object().unwrap().clone()
    };
    let set = move |edit: ArgumentsEdit| -> Edit {
        Box::new(move |run: &mut Value| {
            let mut args = arguments(run);
            edit(&mut args);
            run["pending"][0]["arguments"] = Value::Object(args);
        })
    };
    // 12345678901234567891 reads as the same double as ...890: JCS (which writes integers
    // through a double) would let it pass; the exact digits do not.
    assert_eq!(
        12345678901234567890_u64 as f64,
        12345678901234567891_u64 as f64
    );
    let edits: Vec<(&str, Edit)> = vec![
        (
            "a string of the arguments",
            set(Box::new(|a| {
                a["payee"] = json!("Zoe Angstrom \u{1f600}");
            })),
        ),
        (
            "a key added to the arguments",
            set(Box::new(|a| {
                a.insert("tip".to_owned(), json!(5));
            })),
        ),
        (
            "a key removed from the arguments",
            set(Box::new(|a| {
                a.remove("ratio");
            })),
        ),
        (
            "an argument's number",
            set(Box::new(|a| a["amount"] = json!(101))),
        ),
        (
            "an argument's fraction",
            set(Box::new(|a| a["ratio"] = json!(0.25))),
        ),
        (
            "an integer beyond 2^53, to one of the same double",
            set(Box::new(|a| a["big"] = json!(12345678901234567891_u64))),
        ),
        (
            "an integer to a string of its digits",
            set(Box::new(|a| a["count"] = json!("1"))),
        ),
        (
            "a nested null to false",
            set(Box::new(|a| a["split"]["zeta"][2]["a"] = json!(false))),
        ),
        (
            "the order of an array",
            set(Box::new(|a| {
                a["split"]["zeta"].as_array_mut().unwrap().reverse();
            })),
        ),
        (
            "the model's argument text, respelled inside the string",
            Box::new(|run: &mut Value| {
                let call = &mut run["state"]["transcript"][1]["tool_calls"][1]["arguments"];
                let respelled = call
                    .as_str()
                    .unwrap()
                    .replace("\"amount\":100", "\"amount\":1e2");
                assert_ne!(call, &json!(respelled));
                *call = json!(respelled);
            }),
        ),
        (
            "a result's text",
            Box::new(|run: &mut Value| {
                let text = &mut run["results"][0]["result"]["text"];
                *text = json!(text.as_str().unwrap().replace("caf\u{e9}", "cafe"));
            }),
        ),
    ];
    for key in [None, Some(KEY)] {
        let text = paused_text(key).await;
        let value: Value = serde_json::from_str(&text).unwrap();
        for (what, edit) in &edits {
            let mut changed = value.clone();
            edit(&mut changed["run"]);
            assert_ne!(changed, value, "{what}: nothing changed");
            for (name, style) in styles() {
                let rewritten = write(&changed, style);
                assert_eq!(
                    resume(&rewritten, key).await.map(|(answer, _)| answer),
                    Err(ResumeError::Altered),
                    "{what}, {name} (key {key:?})"
                );
            }
        }
    }
}
