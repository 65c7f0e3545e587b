//! [`Message`]: one message of a prompt, from the user or the assistant: text, an image (or
//! audio clip) or a resource (embedded, or a link).

use rmcp::model::{ContentBlock, PromptMessage, Role};
use tool_core::{Image, Resource};

use crate::mcp::server::result::{media_content, resource_content};

/// One message of a prompt.
///
/// ```
/// use tool_runtime::mcp::Message;
/// use tool_runtime::outcome::{Image, Resource};
///
/// let messages = vec![
///     Message::user("Review this change."),
///     Message::user_resource(Resource::text("file:///diff.patch", "text/x-diff", "- a\n+ b")),
///     Message::user_image(Image::png(vec![0x89, b'P', b'N', b'G'])),
///     Message::assistant("I will look at it."),
/// ];
/// assert_eq!(messages.len(), 4);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    role: Role,
    content: Content,
}

#[derive(Debug, Clone, PartialEq)]
enum Content {
    Text(String),
    Media(Image),
    Resource(Resource),
}

impl Message {
    /// Text from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self::of(Role::User, Content::Text(text.into()))
    }

    /// Text from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::of(Role::Assistant, Content::Text(text.into()))
    }

    /// An image (or audio clip) from the user.
    pub fn user_image(image: Image) -> Self {
        Self::of(Role::User, Content::Media(image))
    }

    /// A resource from the user: embedded (its text or bytes) or a link.
    pub fn user_resource(resource: Resource) -> Self {
        Self::of(Role::User, Content::Resource(resource))
    }

    fn of(role: Role, content: Content) -> Self {
        Self { role, content }
    }

    /// Whether the assistant says it (else the user).
    pub fn is_assistant(&self) -> bool {
        self.role == Role::Assistant
    }

    /// Its text, for a text message.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }

    /// As MCP sends it.
    pub(crate) fn to_mcp(&self) -> PromptMessage {
        let content = match &self.content {
            Content::Text(text) => ContentBlock::text(text.clone()),
            Content::Media(media) => media_content(media),
            Content::Resource(resource) => resource_content(resource),
        };
        PromptMessage::new(self.role.clone(), content)
    }
}
