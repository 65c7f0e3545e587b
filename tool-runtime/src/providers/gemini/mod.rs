//! Google's Gemini API: [`Gemini`] (V3).
//!
//! # Defaults
//!
//! | setting | default |
//! |---|---|
//! | base URL | [`DEFAULT_BASE_URL`] (`https://generativelanguage.googleapis.com`) |
//! | API version | [`API_VERSION`] (`v1beta`) |
//! | model | [`DEFAULT_MODEL`] (`gemini-2.5-flash`) |
//! | `toolConfig` | not sent (the API's default: `AUTO`) |
//! | typed answers | native (`responseJsonSchema`) for models after the 2.x line, else a final-answer tool |
//! | images in tool results | `functionResponse.parts` for models after the 2.x line, else text stand-ins |
//!
//! Requests go to `POST {base}/{version}/models/{model}:streamGenerateContent?alt=sse`, with
//! the key in the `x-goog-api-key` header (never in the URL). A tool's schema is published
//! as `parametersJsonSchema` in Gemini's dialect ([`dialect`], V4).
//!
//! # Thought signatures
//!
//! A Gemini model that thinks signs the function calls of its reply (`thoughtSignature` on
//! a part), and wants the signature back on the same call in the requests that follow. The
//! driver puts each signature on its call ([`crate::model::ToolCall::signature`]), which the
//! conversation keeps: a run paused and resumed by another process, or a durable run
//! replayed, sends it back as the model gave it. A turn none of whose calls carries one (a
//! transcript from another provider) is sent with the value Google documents for calls it
//! did not sign, [`UNSIGNED_CALL`], on its first call.

pub mod dialect;
mod events;
mod wire;

use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::Tool;

use super::http::{Auth, Endpoint};
use super::stream::model_stream;
use super::{Common, ConfigError, common_setters};
use crate::model::{Model, ModelRequest, ModelStream, SchemaUnsupported, ToolSpec};
use events::GeminiEvents;

/// The model used when none is given.
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";
/// The base URL used when none is given.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The API version in the request path.
pub const API_VERSION: &str = "v1beta";
/// The thought signature Google documents for a function call it did not sign (one made
/// by another model, or whose signature was lost).
pub const UNSIGNED_CALL: &str = "skip_thought_signature_validator";

/// The wire format tag of tools rendered for `generateContent`.
const FORMAT: &str = "gemini.generate_content";

/// Which functions the model may call, sent as `toolConfig.functionCallingConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (`AUTO`, the API's default).
    Auto,
    /// The model must call a function (`ANY`). An agent's run then never gets a final
    /// answer: use it with [`crate::agent::AgentBuilder::max_turns`].
    Any,
    /// The model may not call functions (`NONE`).
    None,
    /// The model must call one of these functions (`ANY` with `allowedFunctionNames`).
    Only(Vec<String>),
}

/// A model behind Google's Gemini API (`models/{model}:streamGenerateContent`).
///
/// The instructions (and any system messages of the conversation) go in
/// `systemInstruction`; calls come back as `functionCall` parts, and results go back as
/// `functionResponse` parts (`{"output": …}`, or `{"error": …}` for failures) in one user
/// turn, in the order of the calls.
///
/// ```no_run
/// use tool_runtime::providers::gemini::Gemini;
///
/// # fn main() -> Result<(), tool_runtime::providers::ConfigError> {
/// let gemini = Gemini::builder().api_key("AIza…").model("gemini-2.5-pro").build()?;
/// # let _ = gemini; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Gemini {
    endpoint: Arc<Endpoint>,
    model: String,
    max_output_tokens: Option<u32>,
    tool_choice: Option<ToolChoice>,
    native_answers: bool,
    media_in_results: bool,
    body: Map<String, Value>,
}

impl Gemini {
    /// A builder: an API key is required, the model defaults to [`DEFAULT_MODEL`].
    pub fn builder() -> GeminiBuilder {
        GeminiBuilder {
            common: Common::default(),
            version: API_VERSION.to_owned(),
            max_output_tokens: None,
            tool_choice: None,
            native_answers: None,
            media_in_results: None,
        }
    }

    /// The model's name, as requests send it.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The URL requests go to (without the query).
    pub fn endpoint(&self) -> &str {
        self.endpoint.shown()
    }
}

/// Builds a [`Gemini`]; start with [`Gemini::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GeminiBuilder {
    common: Common,
    version: String,
    max_output_tokens: Option<u32>,
    tool_choice: Option<ToolChoice>,
    native_answers: Option<bool>,
    media_in_results: Option<bool>,
}

impl GeminiBuilder {
    common_setters!();

    /// Sets the API version of the request path (default [`API_VERSION`]).
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets `generationConfig.maxOutputTokens`, the most tokens one reply may hold (not sent
    /// by default: the model's own limit).
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// Sets the driver's tool choice (not sent by default; sent only with tools). A run's
    /// own choice (L3) wins over it.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets whether a typed answer (O2) is asked for natively, as
    /// `generationConfig.responseJsonSchema`, or through a final-answer tool. By default it
    /// is native except for the `gemini-1` and `gemini-2` lines, whose API refuses a JSON
    /// answer beside function declarations.
    pub fn native_answers(mut self, native: bool) -> Self {
        self.native_answers = Some(native);
        self
    }

    /// Sets whether the images and documents of a tool's result (O3) go to the model as
    /// `functionResponse.parts` (`inlineData`, for the media types Google lists for
    /// multimodal function responses: PNG, JPEG, WebP, PDF) or, the declared fallback, as
    /// lines of the result's text that stand for them (M4). By default parts, except for the
    /// `gemini-1` and `gemini-2` lines, which do not take media in function responses. Audio
    /// and other types always go as text stand-ins.
    pub fn media_in_results(mut self, media: bool) -> Self {
        self.media_in_results = Some(media);
        self
    }

    /// Builds the driver.
    ///
    /// # Errors
    ///
    /// Returns a [`ConfigError`]: no API key, a base URL that is not `http(s)`, a key or
    /// header that cannot be sent.
    pub fn build(self) -> Result<Gemini, ConfigError> {
        let Self {
            common,
            version,
            max_output_tokens,
            tool_choice,
            native_answers,
            media_in_results,
        } = self;
        if common.api_key.is_none() {
            return Err(ConfigError::MissingApiKey {
                var: "GEMINI_API_KEY",
            });
        }
        let model = common.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let resource = if model.contains('/') {
            model.clone()
        } else {
            format!("models/{model}")
        };
        let path = format!(
            "/{}/{resource}:streamGenerateContent?alt=sse",
            version.trim_matches('/')
        );
        let endpoint = Endpoint::new(
            common.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL),
            &path,
            common.api_key,
            Auth::Header("x-goog-api-key"),
            &[],
            common.http,
        )?;
        // Both wait for the line after 2.x: JSON answers beside function declarations, and
        // media in function responses.
        let after_2 = {
            let name = model.rsplit('/').next().unwrap_or_default();
            !(name.starts_with("gemini-1") || name.starts_with("gemini-2"))
        };
        let native_answers = native_answers.unwrap_or(after_2);
        let media_in_results = media_in_results.unwrap_or(after_2);
        Ok(Gemini {
            endpoint: Arc::new(endpoint),
            model,
            max_output_tokens,
            tool_choice,
            native_answers,
            media_in_results,
            body: common.body,
        })
    }
}

/// Why Gemini would refuse `name` as a function's name, if it would: it must start with a
/// letter or an underscore, and hold only letters, digits, `_`, `.`, `:` and `-`, at most 64
/// (a name of N1 that starts with a digit is refused).
fn name_problem(name: &str) -> Option<String> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    (!first_ok || !rest_ok || name.len() > 64).then(|| {
        format!(
            "Gemini takes a function name only if it starts with a letter or an underscore and \
             holds at most 64 letters, digits, `_`, `.`, `:` or `-`; `{name}` does not"
        )
    })
}

impl Model for Gemini {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        if let Some(problem) = name_problem(tool.name()) {
            return Err(SchemaUnsupported::new(problem));
        }
        let rewritten = dialect::rewrite(tool.schema()).map_err(|e| e.into_unsupported())?;
        // Q3: no field for examples: they go in the description (V4).
        let description = super::described(tool);
        let wire = wire::render(tool.name(), &description, &rewritten.schema);
        Ok(ToolSpec::from_tool(tool).with_wire(FORMAT, wire))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        model_stream(
            self.endpoint.clone(),
            wire::body(self, &request),
            GeminiEvents::new(),
        )
    }

    /// `gcp.gemini` (K2).
    fn provider_name(&self) -> &str {
        "gcp.gemini"
    }

    /// Gemini takes a typed answer as `responseJsonSchema` (O2), on the models that take it
    /// beside function declarations.
    fn native_answers(&self) -> bool {
        self.native_answers
    }

    fn model_name(&self) -> &str {
        &self.model
    }

    fn server(&self) -> Option<(&str, u16)> {
        self.endpoint.server()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // V3: a name Gemini refuses is found at build, not by a 400 at the first request.
    #[test]
    fn v3_function_names_gemini_refuses() {
        assert_eq!(name_problem("lookup-window"), None);
        assert_eq!(name_problem("mcp_server.tool:v2"), None);
        assert!(name_problem("2fa-check").is_some());
        assert!(name_problem("a/b").is_some());
        assert!(name_problem("").is_some());
        assert!(name_problem(&"a".repeat(65)).is_some());
    }
}
