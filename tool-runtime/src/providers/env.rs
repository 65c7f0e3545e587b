//! Picking a provider from the environment: [`from_env`].

use super::error::ConfigError;
use crate::model::{Model, ModelRequest, ModelStream, SchemaUnsupported, ToolSpec};
use tool_core::Tool;

#[cfg(feature = "anthropic")]
use super::anthropic::Anthropic;
#[cfg(feature = "bedrock")]
use super::bedrock::Bedrock;
#[cfg(feature = "gemini")]
use super::gemini::Gemini;
#[cfg(feature = "openai")]
use super::openai::OpenAiChat;

/// The provider the environment named, ready to give to [`crate::Agent::builder`].
#[derive(Debug)]
#[non_exhaustive]
pub enum EnvModel {
    /// OpenAI's Chat Completions API (`OPENAI_API_KEY` was set), strict mode on where a
    /// tool's schema allows it.
    #[cfg(feature = "openai")]
    OpenAi(OpenAiChat),
    /// A server that speaks OpenAI's Chat Completions API (`OPENAI_BASE_URL` without
    /// `OPENAI_API_KEY`), strict mode off.
    #[cfg(feature = "openai")]
    OpenAiCompatible(OpenAiChat),
    /// Anthropic's Messages API (`ANTHROPIC_API_KEY` was set).
    #[cfg(feature = "anthropic")]
    Anthropic(Anthropic),
    /// Google's Gemini API (`GEMINI_API_KEY` or `GOOGLE_API_KEY` was set).
    #[cfg(feature = "gemini")]
    Gemini(Gemini),
    /// Amazon Bedrock's ConverseStream API (`AWS_BEARER_TOKEN_BEDROCK`, or AWS keys with
    /// `AWS_REGION`, was set).
    #[cfg(feature = "bedrock")]
    Bedrock(Bedrock),
}

impl EnvModel {
    fn model(&self) -> &dyn Model {
        match self {
            #[cfg(feature = "openai")]
            EnvModel::OpenAi(m) | EnvModel::OpenAiCompatible(m) => m,
            #[cfg(feature = "anthropic")]
            EnvModel::Anthropic(m) => m,
            #[cfg(feature = "gemini")]
            EnvModel::Gemini(m) => m,
            #[cfg(feature = "bedrock")]
            EnvModel::Bedrock(m) => m,
        }
    }

    /// The provider's name: `openai`, `openai-compatible`, `anthropic`, `gemini` or `bedrock`.
    pub fn provider(&self) -> &'static str {
        match self {
            #[cfg(feature = "openai")]
            EnvModel::OpenAi(_) => "openai",
            #[cfg(feature = "openai")]
            EnvModel::OpenAiCompatible(_) => "openai-compatible",
            #[cfg(feature = "anthropic")]
            EnvModel::Anthropic(_) => "anthropic",
            #[cfg(feature = "gemini")]
            EnvModel::Gemini(_) => "gemini",
            #[cfg(feature = "bedrock")]
            EnvModel::Bedrock(_) => "bedrock",
        }
    }

    /// The model's name, as requests send it.
    pub fn model_name(&self) -> &str {
        match self {
            #[cfg(feature = "openai")]
            EnvModel::OpenAi(m) | EnvModel::OpenAiCompatible(m) => m.model_name(),
            #[cfg(feature = "anthropic")]
            EnvModel::Anthropic(m) => m.model_name(),
            #[cfg(feature = "gemini")]
            EnvModel::Gemini(m) => m.model_name(),
            #[cfg(feature = "bedrock")]
            EnvModel::Bedrock(m) => m.model_name(),
        }
    }
}

impl Model for EnvModel {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        self.model().tool_spec(tool)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        self.model().stream(request)
    }

    fn provider_name(&self) -> &str {
        self.model().provider_name()
    }

    fn native_answers(&self) -> bool {
        self.model().native_answers()
    }

    fn model_name(&self) -> &str {
        self.model().model_name()
    }

    fn server(&self) -> Option<(&str, u16)> {
        self.model().server()
    }
}

/// The provider the process environment names, or `None` when it names none.
///
/// - `OPENAI_API_KEY` or `OPENAI_BASE_URL` set: OpenAI's Chat Completions API, at
///   `OPENAI_BASE_URL` if set, with `OPENAI_MODEL` (default
///   [`super::openai::DEFAULT_MODEL`]). A base URL without a key is an OpenAI-compatible
///   server (Ollama, vLLM, llama.cpp, LM Studio): strict mode off, and `OPENAI_MODEL`
///   required.
/// - Else `ANTHROPIC_API_KEY` set: Anthropic's Messages API, at `ANTHROPIC_BASE_URL` if set,
///   with `ANTHROPIC_MODEL` (default [`super::anthropic::DEFAULT_MODEL`]).
/// - Else `GEMINI_API_KEY` (or else `GOOGLE_API_KEY`) set: Google's Gemini API, at
///   `GEMINI_BASE_URL` if set, with `GEMINI_MODEL` (default [`super::gemini::DEFAULT_MODEL`]).
/// - Else `AWS_BEARER_TOKEN_BEDROCK` set, or `AWS_ACCESS_KEY_ID` and
///   `AWS_SECRET_ACCESS_KEY` set with `AWS_REGION`: Amazon Bedrock's ConverseStream API in
///   `AWS_REGION`, signed with SigV4 when the keys are set (with `AWS_SESSION_TOKEN` if set),
///   else with the API key; at `BEDROCK_BASE_URL` if set, with `BEDROCK_MODEL` (default
///   [`super::bedrock::DEFAULT_MODEL`]). A Bedrock API key without `AWS_REGION` is an error.
/// - Else `None`.
///
/// Empty variables count as unset. A provider whose feature is off is skipped.
///
/// # Errors
///
/// Returns a [`ConfigError`] when the variables name a provider that cannot be set up: an
/// invalid base URL, a key that cannot be sent, a compatible server without
/// `OPENAI_MODEL`.
pub fn from_env() -> Result<Option<EnvModel>, ConfigError> {
    from_lookup(|name| std::env::var(name).ok())
}

/// [`from_env`], reading the variables through `lookup` (for tests, or a configuration
/// source other than the process environment).
///
/// ```
/// use tool_runtime::providers::{EnvModel, from_lookup};
///
/// let vars = |name: &str| match name {
///     "OPENAI_BASE_URL" => Some("http://localhost:11434/v1".to_owned()),
///     "OPENAI_MODEL" => Some("llama3.2".to_owned()),
///     _ => None,
/// };
/// let model = from_lookup(vars).unwrap().unwrap();
/// assert_eq!(model.provider(), "openai-compatible");
/// assert_eq!(model.model_name(), "llama3.2");
/// assert!(from_lookup(|_| None).unwrap().is_none());
/// ```
///
/// # Errors
///
/// As [`from_env`].
pub fn from_lookup(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<EnvModel>, ConfigError> {
    let var = |name: &str| {
        lookup(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    #[cfg(feature = "openai")]
    {
        let key = var("OPENAI_API_KEY");
        let base_url = var("OPENAI_BASE_URL");
        let model = var("OPENAI_MODEL");
        let found = match (key, base_url) {
            (None, None) => None,
            (Some(key), base_url) => {
                let mut builder = OpenAiChat::builder().api_key(key);
                if let Some(url) = base_url {
                    builder = builder.base_url(url);
                }
                if let Some(model) = model {
                    builder = builder.model(model);
                }
                Some(EnvModel::OpenAi(builder.build()?))
            }
            (None, Some(url)) => {
                let mut builder = OpenAiChat::compatible(url);
                if let Some(model) = model {
                    builder = builder.model(model);
                }
                Some(EnvModel::OpenAiCompatible(builder.build()?))
            }
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    #[cfg(feature = "anthropic")]
    if let Some(key) = var("ANTHROPIC_API_KEY") {
        let mut builder = Anthropic::builder().api_key(key);
        if let Some(url) = var("ANTHROPIC_BASE_URL") {
            builder = builder.base_url(url);
        }
        if let Some(model) = var("ANTHROPIC_MODEL") {
            builder = builder.model(model);
        }
        return Ok(Some(EnvModel::Anthropic(builder.build()?)));
    }
    #[cfg(feature = "gemini")]
    if let Some(key) = var("GEMINI_API_KEY").or_else(|| var("GOOGLE_API_KEY")) {
        let mut builder = Gemini::builder().api_key(key);
        if let Some(url) = var("GEMINI_BASE_URL") {
            builder = builder.base_url(url);
        }
        if let Some(model) = var("GEMINI_MODEL") {
            builder = builder.model(model);
        }
        return Ok(Some(EnvModel::Gemini(builder.build()?)));
    }
    #[cfg(feature = "bedrock")]
    if let Some(model) = bedrock_from(&var)? {
        return Ok(Some(EnvModel::Bedrock(model)));
    }
    Ok(None)
}

/// Bedrock, when its variables are set (see [`from_lookup`]).
#[cfg(feature = "bedrock")]
fn bedrock_from(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Bedrock>, ConfigError> {
    let token = var("AWS_BEARER_TOKEN_BEDROCK");
    let keys = var("AWS_ACCESS_KEY_ID").zip(var("AWS_SECRET_ACCESS_KEY"));
    let region = var("AWS_REGION");
    let mut builder = match (keys, token, &region) {
        (Some((id, secret)), _, Some(_)) => {
            Bedrock::builder().credentials(id, secret, var("AWS_SESSION_TOKEN"))
        }
        (_, Some(token), _) => Bedrock::builder().api_key(token),
        _ => return Ok(None),
    };
    if let Some(region) = region {
        builder = builder.region(region);
    }
    if let Some(url) = var("BEDROCK_BASE_URL") {
        builder = builder.base_url(url);
    }
    if let Some(model) = var("BEDROCK_MODEL") {
        builder = builder.model(model);
    }
    builder.build().map(Some)
}
