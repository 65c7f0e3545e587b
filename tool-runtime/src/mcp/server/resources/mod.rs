//! Resources and resource templates an [`McpServer`](super::McpServer) serves (M7):
//! [`McpResource`], built with [`McpResource::builder`] (or the handle `#[resource]`
//! generates), and what reading one returns ([`Contents`]).
//!
//! - `contents`: [`Contents`].
//! - `serve`: `resources/list`, `resources/templates/list` and `resources/read`.
//! - `subscriptions`: `resources/subscribe`, `resources/unsubscribe` and the notifications.

mod contents;
pub(crate) mod serve;
pub(crate) mod subscriptions;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::policy::{AsyncPolicy, AsyncPolicyFn, SyncPolicy};
use tool_core::{BoxError, Context, Policy, Schema};
use tool_rules::mcp_name::invalid_mcp_name;
use tool_rules::uri_template::UriTemplate;

use super::catalog::handler::Prepare;
use super::catalog::problem::CatalogProblem;
use super::catalog::typed_args::{self, Params};
use super::completer::{Completer, Completers};
use super::icon::Icon;

pub use contents::Contents;

/// Reads a resource: the template's variables validated, the reader readied on the
/// request's context.
pub(crate) type ReadFn = Prepare<Contents>;

/// A resource (a fixed URI) or a resource template (a URI template whose variables are typed
/// parameters) that an [`McpServer`](super::McpServer) serves.
///
/// Cheap to clone. Declared wrong (a URI that is not one, a name that breaks the MCP name
/// rule, no reader, a template variable its parameters lack), it is refused when the server
/// is built ([`CatalogProblem`]).
///
/// ```
/// use tool_runtime::mcp::{Contents, McpResource};
/// use tool_runtime::{Context, Schema};
///
/// let guide = McpResource::builder("docs://maintenance/guide", "maintenance-guide")
///     .description("How maintenance windows are planned.")
///     .mime_type("text/markdown")
///     .read(|_ctx: Context| async { Ok::<_, std::io::Error>(Contents::text("# Windows")) })
///     .build();
///
/// /// A service's maintenance history.
/// #[derive(Schema)]
/// struct History {
///     /// The service identifier.
///     service: String,
///     /// How many entries.
///     limit: u32,
/// }
/// let history = McpResource::builder("maint://{service}/history/{limit}", "history")
///     .read_typed(|_ctx: Context, p: History| async move {
///         Ok::<_, std::io::Error>(format!("{} entries of {}", p.limit, p.service))
///     })
///     .build();
/// # let _ = (guide, history);
/// ```
#[derive(Clone)]
pub struct McpResource {
    inner: Arc<Inner>,
}

struct Inner {
    uri: String,
    template: Result<UriTemplate, String>,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    icons: Vec<Icon>,
    policy: Option<Arc<dyn Policy>>,
    /// The OAuth scopes a token must grant for it to be offered (Z3).
    scopes: Vec<String>,
    reader: Option<ReadFn>,
    params: Option<Result<Params, String>>,
    completers: Completers,
}

/// Anything that can be served as a resource: an [`McpResource`], or the handle
/// `#[resource]` generates.
pub trait IntoResource {
    /// The resource.
    fn into_resource(self) -> McpResource;
}

impl IntoResource for McpResource {
    fn into_resource(self) -> McpResource {
        self
    }
}

impl McpResource {
    /// Starts the resource at `uri` (a URI, or a URI template with `{variables}`), named
    /// `name` (the MCP name rule: 1–128 of `A–Z a–z 0–9 _ - .`).
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder(uri: impl Into<String>, name: impl Into<String>) -> McpResourceBuilder {
        let uri = uri.into();
        let template = UriTemplate::parse(&uri).map_err(|error| error.to_string());
        McpResourceBuilder {
            inner: Inner {
                uri,
                template,
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                icons: Vec::new(),
                policy: None,
                scopes: Vec::new(),
                reader: None,
                params: None,
                completers: Completers::default(),
            },
        }
    }

    /// Its URI or URI template, as declared.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Whether it is a template (its URI has variables).
    pub fn is_template(&self) -> bool {
        self.inner.template.as_ref().is_ok_and(|t| !t.is_plain())
    }

    /// Its description.
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// What is wrong with its declaration, if anything.
    pub(crate) fn problem(&self) -> Option<CatalogProblem> {
        let reason = self.reason()?;
        Some(CatalogProblem::Resource {
            uri: self.inner.uri.clone(),
            reason,
        })
    }

    fn reason(&self) -> Option<String> {
        let inner = &self.inner;
        let template = match &inner.template {
            Ok(template) => template,
            Err(reason) => return Some(reason.clone()),
        };
        if let Some(reason) = invalid_mcp_name(&inner.name) {
            return Some(format!(
                "its name `{}` is not an MCP name: {reason}",
                inner.name
            ));
        }
        if inner.reader.is_none() {
            return Some("it has no reader: give one with `read` or `read_typed`".to_owned());
        }
        let params = match &inner.params {
            None if template.is_plain() => return None,
            None => {
                return Some(
                    "its URI has variables but its reader takes no parameters: read it with \
                     `read_typed`"
                        .to_owned(),
                );
            }
            Some(Err(reason)) => return Some(format!("its parameters' schema: {reason}")),
            Some(Ok(params)) => params,
        };
        variables_match(template, params)
    }

    /// The values of its variables in `uri`, when `uri` is this resource's.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        self.inner.template.as_ref().ok()?.matches(uri)
    }

    pub(crate) fn policy(&self) -> Option<&Arc<dyn Policy>> {
        self.inner.policy.as_ref()
    }

    /// The OAuth scopes it needs.
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }

    pub(crate) fn reader(&self) -> Option<&ReadFn> {
        self.inner.reader.as_ref()
    }

    pub(crate) fn mime_type(&self) -> Option<&str> {
        self.inner.mime_type.as_deref()
    }

    pub(crate) fn params(&self) -> Option<&Params> {
        self.inner.params.as_ref().and_then(|p| p.as_ref().ok())
    }

    pub(crate) fn completers(&self) -> &Completers {
        &self.inner.completers
    }

    /// Its `resources/list` entry (a plain resource).
    pub(crate) fn listed(&self) -> rmcp::model::Resource {
        let inner = &self.inner;
        let mut entry = rmcp::model::Resource::new(inner.uri.clone(), inner.name.clone());
        entry.title.clone_from(&inner.title);
        entry.description.clone_from(&inner.description);
        entry.mime_type.clone_from(&inner.mime_type);
        entry.icons = super::icon::to_mcp(&inner.icons);
        entry
    }

    /// Its `resources/templates/list` entry (a template).
    pub(crate) fn listed_template(&self) -> rmcp::model::ResourceTemplate {
        let inner = &self.inner;
        let mut entry = rmcp::model::ResourceTemplate::new(inner.uri.clone(), inner.name.clone());
        entry.title.clone_from(&inner.title);
        entry.description.clone_from(&inner.description);
        entry.mime_type.clone_from(&inner.mime_type);
        entry.icons = super::icon::to_mcp(&inner.icons);
        entry
    }
}

/// Why a template's variables and its parameters' properties disagree, if they do: each
/// variable must be a property, and each required property a variable.
fn variables_match(template: &UriTemplate, params: &Params) -> Option<String> {
    let properties = params.properties();
    for variable in template.variables() {
        if !properties.iter().any(|(name, _, _)| name == variable) {
            return Some(format!(
                "its URI's variable `{variable}` is no field of its parameters: add the field \
                 or rename the variable"
            ));
        }
    }
    let variables: Vec<&str> = template.variables().collect();
    (properties.iter())
        .find(|(name, _, required)| *required && !variables.contains(&name.as_str()))
        .map(|(name, _, _)| {
            format!(
                "its parameters require `{name}`, which its URI has no variable for: add \
                 `{{{name}}}` to the URI, or make the field optional"
            )
        })
}

impl fmt::Debug for McpResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpResource")
            .field("uri", &self.inner.uri)
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpResource`]; start with [`McpResource::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct McpResourceBuilder {
    inner: Inner,
}

impl McpResourceBuilder {
    /// Sets a title to show people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.title = Some(title.into());
        self
    }

    /// Sets the description (keep secrets out of it, D3).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.inner.description = Some(description.into());
        self
    }

    /// Sets the media type of its contents (`text/markdown`, …).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.inner.mime_type = Some(mime_type.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.inner.icons.push(icon);
        self
    }

    /// Sets the availability policy (A1): a resource it denies is not listed, and reading it
    /// is answered as reading a URI the server does not serve (A5).
    pub fn available(mut self, policy: impl Policy) -> Self {
        self.inner.policy = Some(Arc::new(policy));
        self
    }

    /// Sets the OAuth scopes a caller's token must grant (Z3, on a server that authorizes its
    /// callers): a token without them is not offered the resource, and is answered as if it did
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

    /// Sets the reader of a resource without variables. Its error is redacted for the client
    /// as a tool's is (E2: `the resource failed`, or a [`tool_core::ToolError`]'s text).
    pub fn read<F, Fut, C, E>(mut self, f: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, E>> + Send + 'static,
        C: Into<Contents>,
        E: Into<BoxError>,
    {
        let f = Arc::new(f);
        self.inner.reader = Some(Arc::new(move |ctx: Context, _: &Map<String, Value>| {
            let f = Arc::clone(&f);
            Ok(Box::pin(async move {
                f(ctx).await.map(Into::into).map_err(Into::into)
            }))
        }));
        self.inner.params = None;
        self
    }

    /// Sets the reader of a template: its URI's variables are read as the fields of `P`
    /// (a string holding a number is read as one where `P` wants a number), validated like a
    /// tool's input (S2); a URI whose values break `P`'s schema is answered with the
    /// violations, and the reader does not run.
    pub fn read_typed<P, F, Fut, C, E>(mut self, f: F) -> Self
    where
        P: Schema + Send + 'static,
        F: Fn(Context, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, E>> + Send + 'static,
        C: Into<Contents>,
        E: Into<BoxError>,
    {
        let params = Params::of::<P>();
        let f = Arc::new(f);
        if let Ok(checked) = &params {
            let checked = checked.clone();
            self.inner.reader = Some(Arc::new(
                move |ctx: Context, arguments: &Map<String, Value>| {
                    let parsed = typed_args::parse::<P>(&checked, arguments)?;
                    let f = Arc::clone(&f);
                    Ok(Box::pin(async move {
                        f(ctx, parsed).await.map(Into::into).map_err(Into::into)
                    }))
                },
            ));
        }
        self.inner.params = Some(params);
        self
    }

    /// Completes the values of the variable `variable` (`completion/complete`): `f` gets the
    /// request's context and what the client typed so far, and returns suggestions (at most
    /// 100 are sent). A variable whose field is an enum is completed from its values without
    /// this.
    pub fn complete<F, Fut, E>(mut self, variable: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.inner
            .completers
            .push(variable.into(), Completer::new(f));
        self
    }

    /// The resource.
    pub fn build(self) -> McpResource {
        McpResource {
            inner: Arc::new(self.inner),
        }
    }
}
