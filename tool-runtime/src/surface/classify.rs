//! What a change of the surface is, and whether it breaks the callers of the tool (C2).
//!
//! A caller of a tool sends arguments that fit its input schema and reads results that fit
//! its output schema. A change is breaking when something a caller did before may now fail:
//! arguments that were accepted may be refused (an input narrowed), or a result may lack what
//! a caller read (an output widened or a field dropped). The same keyword change reads the
//! other way round in an output schema: a field newly required of a result is a promise
//! added, not a demand.

use std::fmt;

/// Whether a change can break a caller of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compatibility {
    /// What a caller did before may now fail: refuse it unless the callers are updated.
    Breaking,
    /// What a caller did before still works.
    Compatible,
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Compatibility::Breaking => "breaking",
            Compatibility::Compatible => "compatible",
        })
    }
}

/// The part of a tool's entry a change is in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Part {
    /// The tool as a whole, or what it declares beside its schemas (approval, policy, hints,
    /// title, description).
    Tool,
    /// Its input schema, as the parser enforces it.
    Input,
    /// Its output schema.
    Output,
    /// What one publisher sends of it (its key in `published`: `openai.chat.strict`,
    /// `anthropic`, `mcp`, …). These follow from the declaration: they are listed so that
    /// what each model or client sees is in the diff, and classified by what they change for
    /// a caller, which is nothing beside the declaration save a name.
    Published(String),
}

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A tool was added.
    ToolAdded,
    /// A tool was removed.
    ToolRemoved,
    /// A tool was renamed: removed, and a tool of another name with the same description and
    /// input schema added.
    ToolRenamed {
        /// Its new name.
        to: String,
    },
    /// A field is newly required.
    FieldNewlyRequired,
    /// A field is no longer required.
    FieldNoLongerRequired,
    /// A field was added (whether it is required is a change of its own).
    FieldAdded,
    /// A field was removed.
    FieldRemoved,
    /// A type takes fewer kinds of values (`["string", "null"]` to `"string"`, `number` to
    /// `integer`).
    TypeNarrowed,
    /// A type takes more kinds of values.
    TypeWidened,
    /// A type was replaced by one that is neither narrower nor wider, or a reference by
    /// another.
    TypeChanged,
    /// A bound or constraint takes fewer values: a maximum lowered, a minimum raised, a
    /// pattern or format added or changed, items made unique.
    BoundNarrowed {
        /// The schema keyword (`maxLength`, `minimum`, `pattern`, …).
        keyword: String,
    },
    /// A bound or constraint takes more values: a maximum raised, a minimum lowered, a
    /// pattern or format removed.
    BoundWidened {
        /// The schema keyword.
        keyword: String,
    },
    /// A value of an `enum` was removed.
    EnumValueRemoved,
    /// A value was added to an `enum`.
    EnumValueAdded,
    /// `additionalProperties` is newly `false`.
    AdditionalPropertiesClosed,
    /// `additionalProperties` is no longer `false`.
    AdditionalPropertiesOpened,
    /// An alternative of `anyOf` or `oneOf` was removed.
    AlternativeRemoved,
    /// An alternative was added to `anyOf` or `oneOf`.
    AlternativeAdded,
    /// Calls newly wait for approval (always, or when a predicate says so).
    ApprovalNewlyRequired,
    /// Calls no longer wait for approval.
    ApprovalNoLongerRequired,
    /// The tool newly has an availability policy: some callers may no longer see it.
    PolicyAdded,
    /// The tool no longer has an availability policy.
    PolicyRemoved,
    /// The tool newly declares an output schema.
    OutputSchemaAdded,
    /// The tool no longer declares an output schema.
    OutputSchemaRemoved,
    /// A title, description, example or comment changed.
    Documentation,
    /// A default value changed.
    DefaultChanged,
    /// A schema definition (`$defs`) was added or removed; what refers to it changes too.
    Definitions,
    /// A hint changed (read-only, destructive, idempotent, open-world).
    HintChanged,
    /// How calls run changed: sequential, the retry budget, or whether the tool is deferred.
    ExecutionChanged,
    /// The tool is newly offered only once a search loads it (Q1): a caller that listed it
    /// no longer sees it until it searches.
    LoadingDeferred,
    /// The tool is no longer deferred: offered from the start.
    LoadingNoLongerDeferred,
    /// The name a publisher sends the tool under changed (an `McpServer`'s naming, M2).
    PublishedNameChanged,
    /// What a publisher sends changed, with the declaration or on its own (a driver's
    /// rendering).
    Published,
    /// A change no rule above describes; held breaking, to be looked at.
    Other,
}

impl ChangeKind {
    /// Whether this change, in `part`, can break a caller.
    pub fn compatibility(&self, part: &Part) -> Compatibility {
        use ChangeKind as K;
        use Compatibility::{Breaking, Compatible};
        // Read for an input schema: a change that refuses arguments accepted before breaks.
        let for_input = match self {
            K::ToolAdded | K::FieldNoLongerRequired | K::FieldAdded => Compatible,
            K::TypeWidened | K::BoundWidened { .. } | K::EnumValueAdded => Compatible,
            K::AdditionalPropertiesOpened | K::AlternativeAdded => Compatible,
            K::ApprovalNoLongerRequired | K::PolicyRemoved | K::OutputSchemaAdded => Compatible,
            K::Documentation | K::DefaultChanged | K::Definitions | K::HintChanged => Compatible,
            K::ExecutionChanged | K::Published | K::LoadingNoLongerDeferred => Compatible,
            K::ToolRemoved | K::ToolRenamed { .. } | K::FieldNewlyRequired | K::FieldRemoved => {
                Breaking
            }
            K::TypeNarrowed | K::TypeChanged | K::BoundNarrowed { .. } | K::EnumValueRemoved => {
                Breaking
            }
            K::AdditionalPropertiesClosed | K::AlternativeRemoved => Breaking,
            K::ApprovalNewlyRequired | K::PolicyAdded | K::OutputSchemaRemoved => Breaking,
            K::PublishedNameChanged | K::LoadingDeferred | K::Other => Breaking,
        };
        if *part == Part::Output && self.reads_both_ways() {
            return match for_input {
                Breaking => Compatible,
                Compatible => Breaking,
            };
        }
        for_input
    }

    /// Whether the change narrows or widens what a schema takes, so that it breaks an input
    /// where it keeps an output and the other way round.
    fn reads_both_ways(&self) -> bool {
        use ChangeKind as K;
        matches!(
            self,
            K::FieldNewlyRequired
                | K::FieldNoLongerRequired
                | K::TypeNarrowed
                | K::TypeWidened
                | K::BoundNarrowed { .. }
                | K::BoundWidened { .. }
                | K::EnumValueRemoved
                | K::EnumValueAdded
                | K::AdditionalPropertiesClosed
                | K::AdditionalPropertiesOpened
                | K::AlternativeRemoved
                | K::AlternativeAdded
        )
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ChangeKind as K;
        match self {
            K::ToolAdded => f.write_str("tool added"),
            K::ToolRemoved => f.write_str("tool removed"),
            K::ToolRenamed { to } => write!(f, "tool renamed to `{to}`"),
            K::FieldNewlyRequired => f.write_str("field newly required"),
            K::FieldNoLongerRequired => f.write_str("field no longer required"),
            K::FieldAdded => f.write_str("field added"),
            K::FieldRemoved => f.write_str("field removed"),
            K::TypeNarrowed => f.write_str("type narrowed"),
            K::TypeWidened => f.write_str("type widened"),
            K::TypeChanged => f.write_str("type changed"),
            K::BoundNarrowed { keyword } => write!(f, "`{keyword}` narrowed"),
            K::BoundWidened { keyword } => write!(f, "`{keyword}` widened"),
            K::EnumValueRemoved => f.write_str("enum value removed"),
            K::EnumValueAdded => f.write_str("enum value added"),
            K::AdditionalPropertiesClosed => f.write_str("additionalProperties newly false"),
            K::AdditionalPropertiesOpened => f.write_str("additionalProperties no longer false"),
            K::AlternativeRemoved => f.write_str("alternative removed"),
            K::AlternativeAdded => f.write_str("alternative added"),
            K::ApprovalNewlyRequired => f.write_str("approval newly required"),
            K::ApprovalNoLongerRequired => f.write_str("approval no longer required"),
            K::PolicyAdded => f.write_str("availability policy added"),
            K::PolicyRemoved => f.write_str("availability policy removed"),
            K::OutputSchemaAdded => f.write_str("output schema added"),
            K::OutputSchemaRemoved => f.write_str("output schema removed"),
            K::Documentation => f.write_str("documentation changed"),
            K::DefaultChanged => f.write_str("default changed"),
            K::Definitions => f.write_str("definitions changed"),
            K::HintChanged => f.write_str("hint changed"),
            K::ExecutionChanged => f.write_str("execution changed"),
            K::LoadingDeferred => f.write_str("loading deferred to a search"),
            K::LoadingNoLongerDeferred => f.write_str("loading no longer deferred"),
            K::PublishedNameChanged => f.write_str("published name changed"),
            K::Published => f.write_str("published form changed"),
            K::Other => f.write_str("changed"),
        }
    }
}

/// Keywords whose number is an upper bound: lowering it, or adding it, narrows.
const UPPER_BOUNDS: &[&str] = &[
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
    "maxContains",
];
/// Keywords whose number is a lower bound: raising it, or adding it, narrows.
const LOWER_BOUNDS: &[&str] = &[
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
    "minContains",
];
/// Keywords that constrain values with no order between their settings: adding or changing
/// one narrows, removing it widens.
const CONSTRAINTS: &[&str] = &[
    "pattern",
    "format",
    "multipleOf",
    "const",
    "contentEncoding",
    "contentMediaType",
    "propertyNames",
    "dependentRequired",
];
/// Keywords that only document.
const DOCUMENTATION: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// How a change of a bound or constraint `keyword` from `was` to `is` (either absent) reads
/// for an input schema, if `keyword` is one.
pub(super) fn bound(
    keyword: &str,
    was: Option<&serde_json::Value>,
    is: Option<&serde_json::Value>,
) -> Option<ChangeKind> {
    let keyword_owned = || keyword.to_owned();
    let narrowed = || ChangeKind::BoundNarrowed {
        keyword: keyword_owned(),
    };
    let widened = || ChangeKind::BoundWidened {
        keyword: keyword_owned(),
    };
    let upper = UPPER_BOUNDS.contains(&keyword);
    if upper || LOWER_BOUNDS.contains(&keyword) {
        return Some(
            match (was.and_then(|v| v.as_f64()), is.and_then(|v| v.as_f64())) {
                (None, Some(_)) => narrowed(),
                (Some(_), None) => widened(),
                // The same number written otherwise (`1` and `1.0`) takes the same values.
                (Some(was), Some(is)) if is == was => widened(),
                (Some(was), Some(is)) if (is < was) == upper => narrowed(),
                _ => widened(),
            },
        );
    }
    if CONSTRAINTS.contains(&keyword) {
        return Some(if is.is_some() { narrowed() } else { widened() });
    }
    if keyword == "uniqueItems" {
        let on = |value: Option<&serde_json::Value>| value == Some(&serde_json::Value::Bool(true));
        return Some(if on(is) { narrowed() } else { widened() });
    }
    None
}

/// Whether `keyword` only documents a schema.
pub(super) fn documents(keyword: &str) -> bool {
    DOCUMENTATION.contains(&keyword)
}

/// The kinds of JSON value a `type` keyword takes (all of them when it is absent); `integer`
/// is a kind of `number`.
fn kinds(ty: Option<&serde_json::Value>) -> Option<Vec<&str>> {
    const ALL: &[&str] = &[
        "array", "boolean", "integer", "null", "number", "object", "string",
    ];
    let mut out: Vec<&str> = match ty {
        None => ALL.to_vec(),
        Some(serde_json::Value::String(one)) => vec![one.as_str()],
        Some(serde_json::Value::Array(many)) => {
            many.iter().map(|v| v.as_str()).collect::<Option<_>>()?
        }
        Some(_) => return None,
    };
    if out.contains(&"number") && !out.contains(&"integer") {
        out.push("integer");
    }
    Some(out)
}

/// How a change of `type` from `was` to `is` (either absent) reads for an input schema.
pub(super) fn retyped(
    was: Option<&serde_json::Value>,
    is: Option<&serde_json::Value>,
) -> ChangeKind {
    let (Some(was), Some(is)) = (kinds(was), kinds(is)) else {
        return ChangeKind::TypeChanged;
    };
    let within = |inner: &[&str], outer: &[&str]| inner.iter().all(|k| outer.contains(k));
    if within(&is, &was) {
        ChangeKind::TypeNarrowed
    } else if within(&was, &is) {
        ChangeKind::TypeWidened
    } else {
        ChangeKind::TypeChanged
    }
}
