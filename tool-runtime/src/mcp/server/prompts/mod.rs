//! Prompts an [`McpServer`](super::McpServer) serves (M7): [`McpPrompt`], built with
//! [`McpPrompt::builder`] (or the handle `#[prompt]` generates), whose arguments are a type
//! deriving `Schema`, validated like a tool's input before the handler runs (S2), and whose
//! answer is a list of [`Message`]s.
//!
//! - `message`: [`Message`].
//! - `serve`: `prompts/list` and `prompts/get`.

mod message;
pub(crate) mod serve;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::policy::{AsyncPolicy, AsyncPolicyFn, SyncPolicy};
use tool_core::{BoxError, Context, Policy, Schema};
use tool_rules::mcp_name::invalid_mcp_name;

use super::catalog::handler::Prepare;
use super::catalog::problem::CatalogProblem;
use super::catalog::typed_args::{self, Params};
use super::completer::{Completer, Completers};
use super::icon::Icon;

pub use message::Message;

/// Answers `prompts/get`: its arguments validated, the handler readied on the request's
/// context.
pub(crate) type GetFn = Prepare<Vec<Message>>;

/// A prompt an [`McpServer`](super::McpServer) serves.
///
/// ```
/// use tool_runtime::mcp::{McpPrompt, Message};
/// use tool_runtime::{Context, Schema};
///
/// /// What to plan.
/// #[derive(Schema)]
/// struct Plan {
///     /// The service identifier.
///     service: String,
///     /// How many days ahead.
///     #[schema(default = 7, range = 1..=30)]
///     days: u32,
/// }
///
/// let plan = McpPrompt::builder("plan-maintenance", "Plan a service's maintenance.")
///     .get_typed(|_ctx: Context, p: Plan| async move {
///         Ok::<_, std::io::Error>(vec![Message::user(format!(
///             "Plan maintenance of {} in the next {} days.",
///             p.service, p.days
///         ))])
///     })
///     .build();
/// assert_eq!(plan.name(), "plan-maintenance");
/// ```
#[derive(Clone)]
pub struct McpPrompt {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    title: Option<String>,
    description: String,
    icons: Vec<Icon>,
    policy: Option<Arc<dyn Policy>>,
    /// The OAuth scopes a token must grant for it to be offered (Z3).
    scopes: Vec<String>,
    getter: Option<GetFn>,
    params: Option<Result<Params, String>>,
    completers: Completers,
}

/// Anything that can be served as a prompt: an [`McpPrompt`], or the handle `#[prompt]`
/// generates.
pub trait IntoPrompt {
    /// The prompt.
    fn into_prompt(self) -> McpPrompt;
}

impl IntoPrompt for McpPrompt {
    fn into_prompt(self) -> McpPrompt {
        self
    }
}

impl McpPrompt {
    /// Starts the prompt `name` (the MCP name rule: 1–128 of `A–Z a–z 0–9 _ - .`).
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder(name: impl Into<String>, description: impl Into<String>) -> McpPromptBuilder {
        McpPromptBuilder {
            inner: Inner {
                name: name.into(),
                title: None,
                description: description.into(),
                icons: Vec::new(),
                policy: None,
                scopes: Vec::new(),
                getter: None,
                params: None,
                completers: Completers::default(),
            },
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its description.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// What is wrong with its declaration, if anything.
    pub(crate) fn problem(&self) -> Option<CatalogProblem> {
        let inner = &self.inner;
        let reason = if let Some(reason) = invalid_mcp_name(&inner.name) {
            format!("its name is not an MCP name: {reason}")
        } else if inner.getter.is_none() && !matches!(inner.params, Some(Err(_))) {
            "it has no handler: give one with `get` or `get_typed`".to_owned()
        } else if let Some(Err(reason)) = &inner.params {
            format!("its arguments' schema: {reason}")
        } else {
            return None;
        };
        Some(CatalogProblem::Prompt {
            name: inner.name.clone(),
            reason,
        })
    }

    pub(crate) fn policy(&self) -> Option<&Arc<dyn Policy>> {
        self.inner.policy.as_ref()
    }

    /// The OAuth scopes it needs.
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }

    pub(crate) fn getter(&self) -> Option<&GetFn> {
        self.inner.getter.as_ref()
    }

    pub(crate) fn params(&self) -> Option<&Params> {
        self.inner.params.as_ref().and_then(|p| p.as_ref().ok())
    }

    pub(crate) fn completers(&self) -> &Completers {
        &self.inner.completers
    }

    /// Its `prompts/list` entry: each argument from its type's fields (name, description,
    /// whether required), in the order of its rendered schema (the declaration order when
    /// serde_json keeps the order of object keys, else by name).
    pub(crate) fn listed(&self) -> rmcp::model::Prompt {
        let inner = &self.inner;
        let arguments = self.params().map(|params| {
            (params.properties().into_iter())
                .map(|(name, description, required)| {
                    let mut argument = rmcp::model::PromptArgument::new(name);
                    argument.description = description;
                    argument.with_required(required)
                })
                .collect::<Vec<_>>()
        });
        let arguments = arguments.filter(|arguments| !arguments.is_empty());
        let mut entry = rmcp::model::Prompt::new(
            inner.name.clone(),
            Some(inner.description.clone()),
            arguments,
        );
        entry.title.clone_from(&inner.title);
        entry.icons = super::icon::to_mcp(&inner.icons);
        entry
    }
}

impl fmt::Debug for McpPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpPrompt")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpPrompt`]; start with [`McpPrompt::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct McpPromptBuilder {
    inner: Inner,
}

impl McpPromptBuilder {
    /// Sets a title to show people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.title = Some(title.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.inner.icons.push(icon);
        self
    }

    /// Sets the availability policy (A1): a prompt it denies is not listed, and getting it is
    /// answered as getting a prompt the server does not hold (A5).
    pub fn available(mut self, policy: impl Policy) -> Self {
        self.inner.policy = Some(Arc::new(policy));
        self
    }

    /// Sets the OAuth scopes a caller's token must grant (Z3, on a server that authorizes its
    /// callers): a token without them is not offered the prompt, and is answered as if it did
    /// not exist (A5). Without authorization nothing is checked.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.inner.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets a plain function as the availability policy.
    pub fn available_fn<F, E>(self, f: F) -> Self
    where
        F: Fn(&Context) -> Result<bool, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        self.available(SyncPolicy(f))
    }

    /// Sets an async function as the availability policy.
    pub fn available_async<F>(self, f: F) -> Self
    where
        F: for<'a> AsyncPolicyFn<'a>,
    {
        self.available(AsyncPolicy(f))
    }

    /// Sets the handler of a prompt without arguments (arguments sent are refused). Its error
    /// is redacted for the client as a tool's is (E2).
    pub fn get<F, Fut, E>(self, f: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Message>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.get_typed(move |ctx: Context, _: NoArguments| f(ctx))
    }

    /// Sets the handler of a prompt whose arguments are the fields of `A`: validated like a
    /// tool's input (S2; a string holding a number is read as one where `A` wants a number),
    /// their violations answered as invalid params, and the handler not run.
    pub fn get_typed<A, F, Fut, E>(mut self, f: F) -> Self
    where
        A: Schema + Send + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Message>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let params = Params::of::<A>();
        let f = Arc::new(f);
        if let Ok(checked) = &params {
            let checked = checked.clone();
            self.inner.getter = Some(Arc::new(
                move |ctx: Context, arguments: &Map<String, Value>| {
                    let parsed = typed_args::parse::<A>(&checked, arguments)?;
                    let f = Arc::clone(&f);
                    Ok(Box::pin(
                        async move { f(ctx, parsed).await.map_err(Into::into) },
                    ))
                },
            ));
        }
        self.inner.params = Some(params);
        self
    }

    /// Completes the values of the argument `argument` (`completion/complete`): `f` gets the
    /// request's context and what the client typed so far. An argument whose field is an enum
    /// is completed from its values without this.
    pub fn complete<F, Fut, E>(mut self, argument: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.inner
            .completers
            .push(argument.into(), Completer::new(f));
        self
    }

    /// The prompt.
    pub fn build(self) -> McpPrompt {
        McpPrompt {
            inner: Arc::new(self.inner),
        }
    }
}

/// The arguments of a prompt that takes none: an empty object, nothing else.
#[derive(Debug, Clone, Copy)]
struct NoArguments;

impl Schema for NoArguments {
    fn schema(_generator: &mut tool_core::schema::SchemaGen) -> Value {
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn parse(value: tool_core::json::Json, cx: &mut tool_core::violation::ParseCx) -> Option<Self> {
        use tool_core::json::Json;
        match value {
            Json::Object(fields) if fields.is_empty() => Some(Self),
            _ => {
                cx.violate(
                    tool_core::Rule::AdditionalProperties,
                    "this prompt takes no arguments",
                );
                None
            }
        }
    }

    fn to_json(&self) -> Value {
        serde_json::json!({})
    }
}
