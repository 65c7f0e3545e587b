//! `#[tool(...)]`: the keys it takes and how each value is read, with the nearest valid word
//! proposed for a misspelt keyword (`approval = allways`, `read_only = ture`).

use darling::FromMeta;
use syn::{Expr, Ident, Lit, LitStr, Meta, Path};

use super::{ExamplesArg, Keyed, ungroup};

/// `#[tool(...)]`.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct ToolArgs {
    /// The tool's name; else the fn's name with `_` → `-`.
    pub(crate) name: Option<LitStr>,
    /// The tool's description; else the fn's doc comment.
    pub(crate) description: Option<LitStr>,
    /// The availability policy: a fn of `&Context`.
    pub(crate) available: Option<Path>,
    /// Whether calls need approval (H1): `always`, or a predicate of `&Context` and the input.
    pub(crate) approval: Option<ApprovalArg>,
    /// The path of the facade crate, `::tool_runtime` by default.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<Path>,
    /// A human-readable title (O4).
    pub(crate) title: Option<LitStr>,
    /// The tool does not change its environment (O4).
    pub(crate) read_only: Option<Keyed<Hint>>,
    /// A change it makes may destroy something (O4).
    pub(crate) destructive: Option<Keyed<Hint>>,
    /// Calling it again with the same arguments changes nothing more (O4).
    pub(crate) idempotent: Option<Keyed<Hint>>,
    /// It reaches entities outside a closed set (O4).
    pub(crate) open_world: Option<Keyed<Hint>>,
    /// Its retry budget (L1): failed calls in a row a run allows.
    pub(crate) retries: Option<Keyed<Retries>>,
    /// Its calls run with no other call of the run in flight (L4).
    pub(crate) sequential: Option<Keyed<Hint>>,
    /// The name of the generated handle; else the tool's name in `PascalCase`.
    pub(crate) handle: Option<HandleArg>,
    /// The OAuth scopes a call needs (Z3), separated by spaces.
    pub(crate) scopes: Option<ScopesArg>,
    /// Offered only once a search in the run returned it (Q1).
    pub(crate) deferred_loading: Option<Keyed<Hint>>,
    /// Example inputs, published beside the schema (Q3).
    pub(crate) examples: Option<ExamplesArg>,
}

/// `scopes = "tickets:read tickets:write"` (Z3): OAuth scope tokens separated by spaces.
#[derive(Debug, Clone)]
pub(crate) struct ScopesArg(pub(crate) Vec<String>);

const SCOPES_HELP: &str = "write `scopes = \"tickets:read tickets:write\"`: the OAuth scopes a \
                           call of this tool needs, separated by spaces";

impl FromMeta for ScopesArg {
    fn from_value(value: &Lit) -> darling::Result<Self> {
        let Lit::Str(text) = value else {
            return Err(darling::Error::custom(SCOPES_HELP).with_span(value));
        };
        let text = text.value();
        let scopes: Vec<String> = text
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if scopes.is_empty() {
            return Err(
                darling::Error::custom(format!("no scope is named: {SCOPES_HELP}"))
                    .with_span(value),
            );
        }
        if let Some(bad) = scopes.iter().find(|scope| !is_scope_token(scope)) {
            return Err(darling::Error::custom(format!(
                "`{bad}` is not an OAuth scope token (printable ASCII without a space, `\"` or \
                 `\\`): {SCOPES_HELP}"
            ))
            .with_span(value));
        }
        Ok(ScopesArg(scopes))
    }

    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(SCOPES_HELP))
    }
}

/// Whether `scope` is an OAuth scope token (RFC 6749 §3.3), as `tool_core` checks it.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// `retries = n` of `#[tool]` (L1): a whole number of failed calls in a row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retries(pub(crate) u32);

const RETRIES_HELP: &str = "write `retries = 3`: how many failed calls of this tool in a row a \
                            run allows (a whole number, 0 to end the run at the first)";

impl FromMeta for Retries {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match ungroup(expr) {
            Expr::Lit(lit) => Self::from_value(&lit.lit),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => {
                Err(darling::Error::custom(format!(
                    "a retry budget cannot be negative: {RETRIES_HELP}"
                ))
                .with_span(expr))
            }
            other => Err(darling::Error::custom(RETRIES_HELP).with_span(other)),
        }
    }

    fn from_value(value: &Lit) -> darling::Result<Self> {
        let wrong = || darling::Error::custom(RETRIES_HELP).with_span(value);
        match value {
            Lit::Int(n) if n.base10_digits().starts_with('-') => Err(darling::Error::custom(
                format!("a retry budget cannot be negative: {RETRIES_HELP}"),
            )
            .with_span(value)),
            Lit::Int(n) => n.base10_parse::<u32>().map(Retries).map_err(|_| wrong()),
            Lit::Str(text) if text.value().trim().parse::<u32>().is_ok() => {
                Err(darling::Error::custom(format!(
                    "write the number without quotes: `retries = {}`",
                    text.value().trim()
                ))
                .with_span(value))
            }
            _ => Err(wrong()),
        }
    }

    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(RETRIES_HELP))
    }
}

/// A hint of `#[tool]` (O4): written bare (`read_only`, true) or with a boolean
/// (`read_only = false`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hint(pub(crate) bool);

const HINT_HELP: &str = "a hint is written bare (`read_only`) or with `true` or `false` \
                         (`open_world = false`)";

impl FromMeta for Hint {
    fn from_word() -> darling::Result<Self> {
        Ok(Hint(true))
    }

    fn from_bool(value: bool) -> darling::Result<Self> {
        Ok(Hint(value))
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match ungroup(expr) {
            Expr::Lit(lit) => Self::from_value(&lit.lit),
            Expr::Path(path) if path.path.get_ident().is_some() => {
                let word = path.path.segments[0].ident.to_string();
                let message = match nearest(&word, &["true", "false"]) {
                    Some(fixed) => format!("unknown hint value `{word}`: did you mean `{fixed}`?"),
                    None => format!("unknown hint value `{word}`: {HINT_HELP}"),
                };
                Err(darling::Error::custom(message).with_span(expr))
            }
            other => Err(darling::Error::custom(HINT_HELP).with_span(other)),
        }
    }

    fn from_value(value: &Lit) -> darling::Result<Self> {
        match value {
            Lit::Bool(flag) => Ok(Hint(flag.value)),
            Lit::Str(text) if matches!(text.value().as_str(), "true" | "false") => {
                Err(darling::Error::custom(format!(
                    "write the boolean without quotes: `{}`",
                    text.value()
                ))
                .with_span(value))
            }
            other => Err(darling::Error::custom(format!(
                "{HINT_HELP}, not with a string or a number"
            ))
            .with_span(other)),
        }
    }
}

/// `handle = Name`: the name of the handle struct `#[tool]` generates.
#[derive(Debug, Clone)]
pub(crate) struct HandleArg(pub(crate) Ident);

impl FromMeta for HandleArg {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        let help = "write `handle = LookupWindowTool`: the name of the unit struct `#[tool]` \
                    generates for the tool, an identifier without quotes";
        let Meta::NameValue(nv) = item else {
            return Err(darling::Error::custom(help).with_span(item));
        };
        match ungroup(&nv.value) {
            Expr::Path(path) if path.qself.is_none() => match path.path.get_ident() {
                Some(ident) if ident != "Self" => Ok(HandleArg(ident.clone())),
                _ => Err(darling::Error::custom(format!(
                    "the handle is a struct declared next to the fn, so its name is one \
                     identifier: {help}"
                ))
                .with_span(&nv.value)),
            },
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(text),
                ..
            }) if syn::parse_str::<Ident>(&text.value()).is_ok() => Err(darling::Error::custom(
                format!("write the name without quotes: `handle = {}`", text.value()),
            )
            .with_span(&nv.value)),
            other => Err(darling::Error::custom(help).with_span(other)),
        }
    }
}

/// The keys [`ToolArgs`] accepts, for diagnostics.
pub(crate) const TOOL_KEYS: &[&str] = &[
    "approval",
    "available",
    "crate",
    "deferred_loading",
    "description",
    "destructive",
    "examples",
    "handle",
    "idempotent",
    "name",
    "open_world",
    "read_only",
    "retries",
    "scopes",
    "sequential",
    "title",
];

/// `approval = always` or `approval = path` (H1).
#[derive(Debug, Clone)]
pub(crate) enum ApprovalArg {
    /// Every call waits for approval.
    Always,
    /// The predicate, a fn of `&Context` and `&Input`, decides.
    Predicate(Path),
}

impl FromMeta for ApprovalArg {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        let wrong = || {
            darling::Error::custom(
                "write `approval = always` (every call waits for approval) or \
                 `approval = path::to::predicate` (an `async fn(&Context, &Input) -> \
                 Result<Approval, E>` that decides call by call)",
            )
            .with_span(item)
        };
        let Meta::NameValue(nv) = item else {
            return Err(wrong());
        };
        match ungroup(&nv.value) {
            Expr::Path(path) if path.qself.is_none() && path.path.is_ident("always") => {
                Ok(ApprovalArg::Always)
            }
            // A single word a typo away from `always` is taken for one: a predicate of that
            // name can still be named by its path (`self::allways`).
            Expr::Path(path)
                if path.qself.is_none()
                    && path.path.get_ident().is_some_and(|ident| {
                        nearest(&ident.to_string(), &["always"]).is_some()
                    }) =>
            {
                let word = path.path.segments[0].ident.to_string();
                Err(darling::Error::custom(format!(
                    "unknown approval `{word}`: did you mean `always`? (to name a predicate fn \
                     called `{word}`, write its path: `approval = self::{word}`)"
                ))
                .with_span(&nv.value))
            }
            Expr::Path(path) if path.qself.is_none() => {
                Ok(ApprovalArg::Predicate(path.path.clone()))
            }
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(text),
                ..
            }) if text.value() == "always" => Err(darling::Error::custom(
                "write `approval = always`, without quotes",
            )
            .with_span(&nv.value)),
            _ => Err(wrong()),
        }
    }
}

/// The word of `candidates` nearest to `word`, when it is close enough to be a typo of it (at
/// most one edit for short words, two for longer ones, case aside) and not `word` itself.
pub(crate) fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|candidate| (edit_distance(&lower, candidate), *candidate))
        .filter(|(distance, candidate)| {
            *distance <= if candidate.len() > 4 { 2 } else { 1 } && word != *candidate
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The Levenshtein distance between two words, counting an adjacent swap as one edit.
fn edit_distance(left: &str, right: &str) -> usize {
    let left: Vec<char> = left.chars().collect();
    let right: Vec<char> = right.chars().collect();
    let mut rows = vec![(0..=right.len()).collect::<Vec<usize>>()];
    for (i, &a) in left.iter().enumerate() {
        let mut row = vec![i + 1];
        for (j, &b) in right.iter().enumerate() {
            let mut best = (rows[i][j] + usize::from(a != b))
                .min(rows[i][j + 1] + 1)
                .min(row[j] + 1);
            if i > 0 && j > 0 && a == right[j - 1] && left[i - 1] == b {
                best = best.min(rows[i - 1][j - 1] + 1);
            }
            row.push(best);
        }
        rows.push(row);
    }
    rows[left.len()][right.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_of_keywords_find_the_keyword() {
        assert_eq!(nearest("allways", &["always"]), Some("always"));
        assert_eq!(nearest("alwyas", &["always"]), Some("always"));
        assert_eq!(nearest("Always", &["always"]), Some("always"));
        assert_eq!(nearest("ture", &["true", "false"]), Some("true"));
        assert_eq!(nearest("flase", &["true", "false"]), Some("false"));
        assert_eq!(nearest("needs_ok", &["always"]), None);
        assert_eq!(nearest("always", &["always"]), None);
        assert_eq!(nearest("yes", &["true", "false"]), None);
    }
}
