//! Amazon Bedrock's Converse and ConverseStream APIs: [`Bedrock`].
//!
//! # Defaults
//!
//! | setting | default |
//! |---|---|
//! | base URL | `https://bedrock-runtime.{region}.amazonaws.com` |
//! | model | [`DEFAULT_MODEL`] |
//! | `inferenceConfig.maxTokens` | [`DEFAULT_MAX_TOKENS`] (4096) |
//! | API | ConverseStream (`POST /model/{modelId}/converse-stream`); Converse with `streaming(false)` |
//! | `toolConfig.toolChoice` | not sent (the API's default: `auto`) |
//!
//! # Authentication
//!
//! Either SigV4 ([`BedrockBuilder::credentials`]), signed by AWS's `aws-sigv4` crate for the
//! service `bedrock` in the region given, each attempt signed anew; or a Bedrock API key
//! ([`BedrockBuilder::api_key`]) sent as `Authorization: Bearer`. Neither the keys nor any
//! signature is logged or shown by an error or `Debug` output.
//!
//! # The wire
//!
//! A tool's neutral schema goes to `toolSpec.inputSchema.json` in Bedrock's dialect (V4): its
//! root must be an object, and its `$defs` are inlined wherever a reference does not recur
//! (recursive references stay, with the definitions they need, themselves inlined but for
//! the recursion); nothing else is rewritten or dropped, so
//! the parser enforces what the model is shown. Calls come back as `toolUse` blocks; results go back as `toolResult` blocks (with
//! `status: "error"` for a failed call) leading the next user message. ConverseStream's body
//! is the AWS event stream's binary framing, decoded with AWS's own codec
//! (`aws-smithy-eventstream`): a frame that does not decode (a bad CRC, garbage) is a
//! [`crate::ModelError::Protocol`], an exception frame an [`crate::ModelError::Api`] with
//! its type, and a stream that ends before `messageStop` a
//! [`TransportError::Truncated`](crate::providers::TransportError::Truncated).
//!
//! `stopReason` maps to a [`crate::FinishReason`]: `end_turn` and `stop_sequence` are
//! `Stop`, `tool_use` is `ToolCalls`, `max_tokens` is `Length` (a cut-off answer),
//! `guardrail_intervened` and `content_filtered` are `ContentFilter`; a guardrail's
//! intervention is also named in a warning of the run's trace, with the guardrail's reason and
//! the policy findings it acted on (from the answer's `trace.guardrail`).
//!
//! # Reasoning
//!
//! A model that thinks (extended thinking, turned on with `additionalModelRequestFields`
//! through [`BedrockBuilder::body_field`]) answers with `reasoningContent` blocks, and wants
//! them back, signature and all, before its `toolUse` blocks in the next request. The driver
//! checks each block (text and signature, or redacted content; anything else is a
//! [`crate::ModelError::Protocol`]), keeps a reply's blocks on its first call
//! ([`crate::model::ToolCall::signature`]), so that a paused, journaled or moved run keeps
//! them, and sends them back first in that assistant message. The reasoning of a reply without
//! calls is not kept (Bedrock does not need it back). A content block or delta of a kind the
//! service model does not define is an error that names it.
//!
//! # Limits
//!
//! - Bedrock has no tool choice `none`: for a run's `ToolChoice::None` the tools are not
//!   advertised, unless the conversation already holds tool calls or results (the API then
//!   requires `toolConfig`), when they are sent with no choice (the model's `auto`).
//! - Citations (`citationsContent`, citation deltas) give their generated text; the
//!   citations themselves are not passed on (no driver exposes a provider's citations).

mod answer;
mod auth;
mod events;
mod frames;
mod guardrail;
mod reasoning;
mod schema;
mod transport;
mod wire;

use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::Tool;

use super::http::ApiKey;
use super::{Common, ConfigError, common_setters};
use crate::model::{Model, ModelRequest, ModelStream, SchemaUnsupported, ToolSpec};
use auth::{Auth, AwsKeys};
use transport::Transport;

/// The model used when none is given.
pub const DEFAULT_MODEL: &str = "anthropic.claude-3-5-haiku-20241022-v1:0";
/// The `inferenceConfig.maxTokens` sent when none is given.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The wire format tag of tools rendered for the Converse API.
const FORMAT: &str = "bedrock.converse";

/// Which tools the model may call, sent as `toolConfig.toolChoice`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the API's default).
    Auto,
    /// The model must call at least one tool (`any`).
    Any,
    /// The model must call this tool.
    Tool(String),
}

/// A model behind Amazon Bedrock's Converse API.
///
/// ```no_run
/// use tool_runtime::providers::bedrock::Bedrock;
///
/// # fn main() -> Result<(), tool_runtime::providers::ConfigError> {
/// let model = Bedrock::builder()
///     .region("us-east-1")
///     .credentials("AKIA…", "secret…", None)
///     .model("anthropic.claude-3-5-haiku-20241022-v1:0")
///     .build()?;
/// # let _ = model; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Bedrock {
    transport: Arc<Transport>,
    model: String,
    max_tokens: u32,
    tool_choice: Option<ToolChoice>,
    streaming: bool,
    body: Map<String, Value>,
}

impl Bedrock {
    /// A builder: a region and credentials (or an API key) are required.
    pub fn builder() -> BedrockBuilder {
        BedrockBuilder {
            common: Common::default(),
            region: None,
            keys: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            tool_choice: None,
            streaming: true,
        }
    }

    /// The model's name, as requests send it.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.transport.shown()
    }
}

/// Builds a [`Bedrock`]; start with [`Bedrock::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct BedrockBuilder {
    common: Common,
    region: Option<String>,
    keys: Option<AwsKeys>,
    max_tokens: u32,
    tool_choice: Option<ToolChoice>,
    streaming: bool,
}

impl BedrockBuilder {
    common_setters!();

    /// Sets the AWS region (`AWS_REGION`): it names the default endpoint and is signed.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Signs requests with SigV4 with these keys (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, and `AWS_SESSION_TOKEN` for temporary credentials). They win
    /// over an API key.
    pub fn credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        self.keys = Some(AwsKeys {
            access_key_id: access_key_id.into(),
            secret_access_key: ApiKey::new(secret_access_key),
            session_token: session_token.filter(|t| !t.is_empty()).map(ApiKey::new),
        });
        self
    }

    /// Sets `inferenceConfig.maxTokens` (default [`DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Sets `toolConfig.toolChoice` (not sent by default; sent only with tools).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Whether to use ConverseStream (the default) or Converse, which answers at once.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Builds the driver.
    ///
    /// # Errors
    ///
    /// Returns a [`ConfigError`]: no region, no credentials nor API key, a base URL that is
    /// not `http(s)`, a key or header that cannot be sent.
    pub fn build(self) -> Result<Bedrock, ConfigError> {
        let Self {
            common,
            region,
            keys,
            max_tokens,
            tool_choice,
            streaming,
        } = self;
        let region = region.filter(|r| !r.trim().is_empty());
        let Some(region) = region else {
            return Err(ConfigError::MissingRegion { var: "AWS_REGION" });
        };
        let auth = match (keys, common.api_key) {
            (Some(keys), _) => Auth::SigV4 {
                keys,
                region: region.clone(),
            },
            (None, Some(key)) if !key.expose().is_empty() => Auth::Bearer(key),
            _ => {
                return Err(ConfigError::MissingApiKey {
                    var: "AWS_ACCESS_KEY_ID or AWS_BEARER_TOKEN_BEDROCK",
                });
            }
        };
        let model = common.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let base = common
            .base_url
            .unwrap_or_else(|| format!("https://bedrock-runtime.{region}.amazonaws.com"));
        let action = if streaming {
            "converse-stream"
        } else {
            "converse"
        };
        let url = endpoint_url(&base, &model, action)?;
        let transport = Transport::new(url, auth, common.http)?;
        Ok(Bedrock {
            transport: Arc::new(transport),
            model,
            max_tokens,
            tool_choice,
            streaming,
            body: common.body,
        })
    }
}

/// `{base}/model/{modelId}/{action}`, the model id percent-encoded as one path segment (an
/// ARN's `/` and a version's `:` included).
fn endpoint_url(base: &str, model: &str, action: &str) -> Result<reqwest::Url, ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidBaseUrl {
        url: base.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = reqwest::Url::parse(base.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("a base URL has no query or fragment"));
    }
    let mut segment = String::with_capacity(model.len());
    for byte in model.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            segment.push(char::from(byte));
        } else {
            segment.push_str(&format!("%{byte:02X}"));
        }
    }
    let joined = format!(
        "{}/model/{segment}/{action}",
        parsed.as_str().trim_end_matches('/')
    );
    reqwest::Url::parse(&joined).map_err(|e| invalid(&e.to_string()))
}

impl Model for Bedrock {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        let schema = tool.schema();
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SchemaUnsupported::new(
                "Bedrock requires `inputSchema.json` to be an object schema",
            )
            .at("/type"));
        }
        let schema = schema::inline_defs(schema);
        // Q3: no field for examples: they go in the description (V4).
        let description = super::described(tool);
        let wire = wire::render(tool.name(), &description, &schema);
        Ok(ToolSpec::from_tool(tool).with_wire(FORMAT, wire))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let body = wire::body(self, &request);
        answer::answer(self.transport.clone(), body, self.streaming)
    }

    /// `aws.bedrock` (K2, the GenAI conventions' name).
    fn provider_name(&self) -> &str {
        "aws.bedrock"
    }

    fn model_name(&self) -> &str {
        &self.model
    }

    fn server(&self) -> Option<(&str, u16)> {
        self.transport.server()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_the_model_id_is_one_encoded_segment() {
        let url = endpoint_url("http://127.0.0.1:9/", "arn:aws:bedrock:x/y", "converse")
            .map(|u| u.to_string());
        assert_eq!(
            url.ok().as_deref(),
            Some("http://127.0.0.1:9/model/arn%3Aaws%3Abedrock%3Ax%2Fy/converse")
        );
    }
}
