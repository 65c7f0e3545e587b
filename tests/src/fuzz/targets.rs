//! The tools the fuzzer calls: rich inputs that use every kind of constraint, each with an
//! oracle written apart from the parser that says whether a value keeps every declared
//! constraint. A handler that receives a value its oracle rejects is a breach of S2.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_runtime::{Context, Schema, Tool};

/// What the handlers saw: how many calls ran, and the breaches (a value that breaks a declared
/// constraint reached a handler).
#[derive(Debug, Default)]
pub struct Seen {
    /// Calls whose handler ran.
    pub handled: AtomicUsize,
    /// The first breaches, described (the count is in `breaches`).
    pub examples: Mutex<Vec<String>>,
    /// How many breaches there were.
    pub breaches: AtomicUsize,
}

impl Seen {
    fn handle(&self, tool: &str, verdict: Result<(), String>) {
        self.handled.fetch_add(1, Ordering::Relaxed);
        if let Err(what) = verdict {
            self.breaches.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut examples) = self.examples.lock()
                && examples.len() < 16
            {
                examples.push(format!("{tool}: {what}"));
            }
        }
    }
}

/// A tool to call, with valid arguments to start mutations from.
pub struct Target {
    /// The tool.
    pub tool: Tool,
    /// Valid arguments.
    pub seeds: &'static [&'static str],
    /// Property names the tool declares (the generator uses them as keys).
    pub keys: &'static [&'static str],
}

/// Input of `window`: strings with a length, a pattern and a format; a defaulted integer.
#[derive(Debug, Schema)]
struct Window {
    /// The service.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// Days ahead.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
    /// From when.
    #[schema(format = "date-time")]
    at: Option<String>,
    /// A date.
    #[schema(format = "date")]
    on: Option<String>,
    /// A three-digit code.
    #[schema(pattern = "^\\d{3}$")]
    code: Option<String>,
}

impl Window {
    fn check(&self) -> Result<(), String> {
        let id = &self.service_id;
        let chars = id.chars().count();
        if !(1..=64).contains(&chars) {
            return Err(format!("service_id of {chars} characters"));
        }
        if !id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(format!("service_id {id:?} breaks its pattern"));
        }
        if !(1..=30).contains(&self.days) {
            return Err(format!("days = {}", self.days));
        }
        if let Some(at) = &self.at
            && !oracle::date_time(at)
        {
            return Err(format!("at = {at:?} is not a date-time"));
        }
        if let Some(on) = &self.on
            && !oracle::date(on.as_bytes())
        {
            return Err(format!("on = {on:?} is not a date"));
        }
        if let Some(code) = &self.code
            && !(code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(format!(
                "code = {code:?} breaks ^\\d{{3}}$ (ECMA-262: ASCII digits)"
            ));
        }
        Ok(())
    }
}

/// How urgent a ticket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Schema)]
#[schema(rename_all = "kebab-case")]
enum Priority {
    /// Low.
    Low,
    /// High.
    High,
}

/// Nested input of `ticket`.
#[derive(Debug, Schema)]
struct Detail {
    /// A level.
    #[schema(range = 0..=9)]
    level: u8,
    /// A short note.
    #[schema(max_len = 10)]
    note: Option<String>,
}

/// Input of `ticket`: enums, lists with unique items, floats with a step, formats, maps,
/// nesting.
#[derive(Debug, Schema)]
struct Ticket {
    /// The title.
    #[schema(min_len = 1, max_len = 80)]
    title: String,
    /// The priority.
    priority: Priority,
    /// Tags.
    #[schema(unique_items, max_items = 5)]
    tags: Vec<String>,
    /// A ratio in halves.
    #[schema(multiple_of = 0.5, range = 0..=100)]
    ratio: f64,
    /// A positive count.
    #[schema(exclusive_min = 0)]
    count: i64,
    /// Scores, each once.
    #[schema(unique_items, default)]
    scores: Vec<f64>,
    /// Who to tell.
    #[schema(format = "email")]
    contact: Option<String>,
    /// An id.
    #[schema(format = "uuid")]
    id: Option<String>,
    /// Details.
    detail: Option<Box<Detail>>,
    /// Labels.
    #[schema(default)]
    labels: BTreeMap<String, i32>,
}

impl Ticket {
    fn check(&self) -> Result<(), String> {
        let chars = self.title.chars().count();
        if !(1..=80).contains(&chars) {
            return Err(format!("title of {chars} characters"));
        }
        if self.tags.len() > 5 {
            return Err(format!("{} tags", self.tags.len()));
        }
        for (i, a) in self.tags.iter().enumerate() {
            if self.tags[..i].contains(a) {
                return Err(format!("tag {a:?} twice"));
            }
        }
        let r = self.ratio;
        if !(r.is_finite() && (0.0..=100.0).contains(&r) && (r * 2.0).fract() == 0.0) {
            return Err(format!("ratio = {r:e}"));
        }
        if self.count <= 0 {
            return Err(format!("count = {}", self.count));
        }
        if let Some(a) = self.scores.iter().find(|a| !a.is_finite()) {
            return Err(format!("score {a}"));
        }
        // JSON equality of numbers: 0.0 and -0.0 are one value, and so are 1 and 1.0. Sorted,
        // so that the oracle stays linear-ish on long lists too.
        let mut scores: Vec<f64> = self.scores.iter().map(|a| a + 0.0).collect();
        scores.sort_by(f64::total_cmp);
        if let Some(pair) = scores.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(format!("score {:e} twice", pair[0]));
        }
        if let Some(contact) = &self.contact
            && !oracle::email(contact)
        {
            return Err(format!("contact = {contact:?} is not an email"));
        }
        if let Some(id) = &self.id
            && !oracle::uuid(id)
        {
            return Err(format!("id = {id:?} is not a uuid"));
        }
        if let Some(detail) = &self.detail {
            if detail.level > 9 {
                return Err(format!("level = {}", detail.level));
            }
            if let Some(note) = &detail.note
                && note.chars().count() > 10
            {
                return Err(format!("note {note:?} too long"));
            }
        }
        Ok(())
    }
}

/// Input of `tree`: a recursive type.
#[derive(Debug, Schema)]
struct Node {
    /// A name.
    #[schema(max_len = 16)]
    name: String,
    /// Children.
    #[schema(max_items = 4, default)]
    children: Vec<Node>,
}

impl Node {
    fn check(&self) -> Result<(), String> {
        // An explicit stack: a deep tree must not overflow the oracle either.
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            if node.name.chars().count() > 16 {
                return Err(format!("name {:?} too long", node.name));
            }
            if node.children.len() > 4 {
                return Err(format!("{} children", node.children.len()));
            }
            stack.extend(&node.children);
        }
        Ok(())
    }
}

/// The targets, whose handlers report to `seen`.
pub fn targets(seen: &'static Seen) -> Vec<Target> {
    vec![
        Target {
            tool: Tool::builder("window", "Finds a window.")
                .handler(move |_ctx: Context, input: Window| async move {
                    seen.handle("window", input.check());
                    Ok::<_, std::convert::Infallible>("ok")
                })
                .build(),
            seeds: &[
                r#"{"service_id":"svc-42","days":3}"#,
                r#"{"service_id":"a","at":"2024-05-01T10:00:00Z","on":"2024-02-29","code":"123"}"#,
                r#"{"service_id":"x-y-z","days":null,"at":"2024-05-01T10:00:00.5+02:00"}"#,
            ],
            keys: &["service_id", "days", "at", "on", "code"],
        },
        Target {
            tool: Tool::builder("ticket", "Files a ticket.")
                .handler(move |_ctx: Context, input: Ticket| async move {
                    seen.handle("ticket", input.check());
                    Ok::<_, std::convert::Infallible>("ok")
                })
                .build(),
            seeds: &[
                r#"{"title":"Disk","priority":"high","tags":["a","b"],"ratio":2.5,"count":1}"#,
                r#"{"title":"t","priority":"low","tags":[],"ratio":0,"count":9,"scores":[1,2.5,-0.0],"contact":"ops@example.com","id":"67e55044-10b1-426f-9247-bb680e5fe0c8","detail":{"level":3,"note":"hi"},"labels":{"a":1}}"#,
            ],
            keys: &[
                "title", "priority", "tags", "ratio", "count", "scores", "contact", "id", "detail",
                "labels", "level", "note",
            ],
        },
        Target {
            tool: Tool::builder("tree", "Walks a tree.")
                .handler(move |_ctx: Context, input: Node| async move {
                    seen.handle("tree", input.check());
                    Ok::<_, std::convert::Infallible>("ok")
                })
                .build(),
            seeds: &[
                r#"{"name":"root","children":[{"name":"a"},{"name":"b","children":[{"name":"c"}]}]}"#,
                r#"{"name":""}"#,
            ],
            keys: &["name", "children"],
        },
    ]
}

/// Format checks written apart from the parser's, for the oracles.
mod oracle {
    fn digits(b: &[u8]) -> Option<u32> {
        (!b.is_empty() && b.iter().all(u8::is_ascii_digit))
            .then(|| b.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    }

    pub(super) fn date(b: &[u8]) -> bool {
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return false;
        }
        let (Some(y), Some(m), Some(d)) = (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..]))
        else {
            return false;
        };
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let month_days = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        (1..=12).contains(&m) && (1..=month_days[m as usize - 1]).contains(&d)
    }

    pub(super) fn date_time(s: &str) -> bool {
        let b = s.as_bytes();
        if b.len() < 20 || !date(&b[..10]) || !matches!(b[10], b'T' | b't' | b' ') {
            return false;
        }
        let t = &b[11..];
        let (Some(h), Some(m), Some(sec)) = (digits(&t[0..2]), digits(&t[3..5]), digits(&t[6..8]))
        else {
            return false;
        };
        if t[2] != b':' || t[5] != b':' || h > 23 || m > 59 || sec > 60 {
            return false;
        }
        let mut rest = &t[8..];
        if rest.first() == Some(&b'.') {
            let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            rest = &rest[1 + n..];
        }
        match rest {
            b"Z" | b"z" => true,
            [sign, h1, h2, b':', m1, m2] => {
                matches!(sign, b'+' | b'-')
                    && digits(&[*h1, *h2]).is_some_and(|h| h <= 23)
                    && digits(&[*m1, *m2]).is_some_and(|m| m <= 59)
            }
            _ => false,
        }
    }

    pub(super) fn email(s: &str) -> bool {
        let Some((local, domain)) = s.rsplit_once('@') else {
            return false;
        };
        s.is_ascii()
            && !local.is_empty()
            && domain.contains('.')
            && !s.contains(char::is_whitespace)
            && domain
                .split('.')
                .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    }

    pub(super) fn uuid(s: &str) -> bool {
        s.len() == 36
            && s.bytes().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => b.is_ascii_hexdigit(),
            })
    }
}
