//! The MCP result of a call's outcome (E1, O1, O3, M4): its text, its images, audio and
//! resources as content of their own, `structuredContent`, `isError`, and the outcome kind
//! (with the violations of invalid arguments) in `_meta`.

use rmcp::model::{
    CallToolResult, ContentBlock, MetaObject, Resource as McpResource, ResourceContents,
};
use serde_json::{Value, json};
use tool_core::{Image, Outcome, OutcomeKind, OutputSchema, Resource};

use crate::mcp::meta::{OUTCOME_META_KEY, VIOLATIONS_META_KEY};

/// An image or audio clip as MCP content (O3, M4); other binary content as an embedded
/// resource of its own (a `data:` URI).
pub(crate) fn media_content(media: &Image) -> ContentBlock {
    if media.is_image() {
        ContentBlock::image(media.base64(), media.media_type())
    } else if media.is_audio() {
        ContentBlock::audio(media.base64(), media.media_type())
    } else {
        let data = media.base64();
        let uri = format!("data:{};base64,{data}", media.media_type());
        ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(media.media_type().to_owned()),
            blob: data,
            meta: None,
        })
    }
}

/// A resource as MCP content (M4): an embedded resource, or a resource link.
pub(crate) fn resource_content(resource: &Resource) -> ContentBlock {
    let uri = resource.uri().to_owned();
    let mime_type = resource.media_type().map(str::to_owned);
    if let Some(text) = resource.embedded_text() {
        return ContentBlock::resource(ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: text.to_owned(),
            meta: None,
        });
    }
    if let Some(blob) = resource.embedded_blob() {
        return ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob: blob.to_owned(),
            meta: None,
        });
    }
    let (name, description) = resource.link_name().unwrap_or(("", None));
    let mut link = McpResource::new(uri, name);
    if let Some(mime_type) = mime_type {
        link = link.with_mime_type(mime_type);
    }
    if let Some(description) = description {
        link = link.with_description(description);
    }
    ContentBlock::resource_link(link)
}

/// The MCP result of an outcome: its text (E1), with `structuredContent` shaped by the tool's
/// output schema when it has one (O1), else when the text is a JSON object; `isError` for
/// anything but a success, and the outcome kind in `_meta` under [`OUTCOME_META_KEY`] (T2),
/// so that our own client can tell a failure (`the tool failed`) from text the tool approved
/// for the model.
pub(super) fn result_of(outcome: &Outcome, output: Option<&OutputSchema>) -> CallToolResult {
    let text = outcome.text();
    let mut result = if outcome.kind() == OutcomeKind::Success {
        // O3, M4: images, audio and resources go beside the text, each as its own content.
        let mut content =
            Vec::with_capacity(1 + outcome.images().len() + outcome.resources().len());
        content.push(ContentBlock::text(text));
        content.extend(outcome.images().iter().map(media_content));
        content.extend(outcome.resources().iter().map(resource_content));
        let mut result = CallToolResult::success(content);
        result.structured_content = match output {
            Some(output) => output.structured(text),
            None if text.starts_with('{') => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
            None => None,
        };
        result
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    let mut meta = MetaObject::new();
    meta.insert(
        OUTCOME_META_KEY.to_owned(),
        Value::String(outcome.kind().to_string()),
    );
    if outcome.kind() == OutcomeKind::InvalidArguments {
        let violations = outcome
            .violations()
            .iter()
            .map(|v| json!({"path": v.path, "rule": v.rule.keyword(), "message": v.message}))
            .collect();
        meta.insert(VIOLATIONS_META_KEY.to_owned(), Value::Array(violations));
    }
    result.meta = Some(meta);
    result
}
