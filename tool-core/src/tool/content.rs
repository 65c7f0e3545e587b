//! Results with images beside their text (O3): [`Image`], [`WithImages`], and what a handler's
//! result renders to ([`Rendered`]).

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::error::BoxError;
use crate::json::Json;
use crate::schema::{Schema, SchemaGen};
use crate::violation::ParseCx;

/// An image (or other binary content with a media type) in a tool's result (O3).
///
/// Each transport sends it in its own form: MCP image content, an Anthropic `tool_result`
/// image block, a Responses `input_image`; a provider that takes no images in tool results
/// gets a text stand-in naming it.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    media_type: Arc<str>,
    data: Arc<[u8]>,
}

impl Image {
    /// An image of media type `media_type` (`image/png`, `image/jpeg`, …) with these bytes.
    pub fn new(media_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self {
            media_type: Arc::from(media_type.into()),
            data: Arc::from(data.into()),
        }
    }

    /// A PNG image.
    pub fn png(data: impl Into<Vec<u8>>) -> Self {
        Self::new("image/png", data)
    }

    /// A JPEG image.
    pub fn jpeg(data: impl Into<Vec<u8>>) -> Self {
        Self::new("image/jpeg", data)
    }

    /// Its media type.
    pub fn media_type(&self) -> &str {
        &self.media_type
    }

    /// Its bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// A short text that stands for it where images cannot go:
    /// `[image: image/png, 1234 bytes]`.
    pub fn stand_in(&self) -> String {
        format!("[image: {}, {} bytes]", self.media_type, self.data.len())
    }
}

impl Serialize for Image {
    /// As `{"media_type": "image/png", "data": "<base64>"}`: a transcript holding an image
    /// stays plain JSON.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut image = serializer.serialize_struct("Image", 2)?;
        image.serialize_field("media_type", &*self.media_type)?;
        image.serialize_field("data", &BASE64.encode(&self.data))?;
        image.end()
    }
}

impl<'de> Deserialize<'de> for Image {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            media_type: String,
            data: String,
        }
        let wire = Wire::deserialize(deserializer)?;
        let data = BASE64
            .decode(wire.data.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("an image's data is not base64: {e}")))?;
        Ok(Image::new(wire.media_type, data))
    }
}

impl Image {
    /// Its bytes in standard base64, as most transports carry them.
    pub fn base64(&self) -> String {
        BASE64.encode(&self.data)
    }

    /// An image whose bytes arrive in standard base64.
    ///
    /// # Errors
    ///
    /// Returns why `data` is not base64.
    pub fn from_base64(
        media_type: impl Into<String>,
        data: &str,
    ) -> Result<Self, base64::DecodeError> {
        Ok(Self::new(media_type, BASE64.decode(data.as_bytes())?))
    }
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Image")
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// A handler's result with images beside it (O3): the value renders for the model as it would
/// alone (E1), and the images go with it.
///
/// ```
/// use tool_core::{Image, WithImages};
///
/// # let png_bytes = vec![0x89, b'P', b'N', b'G'];
/// let chart = WithImages::new("Load over the last day.").image(Image::png(png_bytes));
/// assert_eq!(chart.images().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct WithImages<T> {
    value: T,
    images: Vec<Image>,
}

impl<T> WithImages<T> {
    /// `value`, with no image yet.
    pub fn new(value: T) -> Self {
        Self {
            value,
            images: Vec::new(),
        }
    }

    /// Adds an image.
    #[must_use]
    pub fn image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// The value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The images.
    pub fn images(&self) -> &[Image] {
        &self.images
    }
}

thread_local! {
    /// The images of the result being rendered on this thread, while [`render_rich`] runs.
    static COLLECTED: RefCell<Option<Vec<Image>>> = const { RefCell::new(None) };
}

impl<T: Serialize> Serialize for WithImages<T> {
    /// Serializes the value alone; while a result is rendered for a call, the images are
    /// collected beside it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        COLLECTED.with(|collected| {
            if let Some(images) = collected.borrow_mut().as_mut() {
                images.extend(self.images.iter().cloned());
            }
        });
        self.value.serialize(serializer)
    }
}

impl<T: Schema> Schema for WithImages<T> {
    const STRUCTURED: bool = T::STRUCTURED;

    fn schema(generator: &mut SchemaGen) -> Value {
        T::schema(generator)
    }

    /// The value alone: the model sends no images.
    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        T::parse(value, cx).map(Self::new)
    }

    fn to_json(&self) -> Value {
        self.value.to_json()
    }
}

/// What a handler's result renders to: the text for the model (E1) and the images beside it
/// (O3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// The images, in the order the result holds them.
    pub images: Vec<Image>,
}

impl From<String> for Rendered {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

/// Renders a handler's result (E1) with the images it carries (O3).
///
/// # Errors
///
/// Returns the serialization error.
pub fn render_rich<T: Serialize + ?Sized>(output: &T) -> Result<Rendered, BoxError> {
    let outer = COLLECTED.with(|collected| collected.borrow_mut().replace(Vec::new()));
    let text = super::render_result(output);
    let images = COLLECTED.with(|collected| {
        std::mem::replace(&mut *collected.borrow_mut(), outer).unwrap_or_default()
    });
    Ok(Rendered {
        text: text?,
        images,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o3_images_travel_beside_the_text_they_render_with() {
        let result = WithImages::new(serde_json::json!({"load": 0.5}))
            .image(Image::png(vec![1, 2, 3]))
            .image(Image::jpeg(vec![4]));
        let rendered = render_rich(&result).expect("renders");
        assert_eq!(rendered.text, r#"{"load":0.5}"#);
        assert_eq!(rendered.images.len(), 2);
        assert_eq!(rendered.images[0].media_type(), "image/png");
        assert_eq!(rendered.images[1].data(), [4]);
        // Outside a render, serializing collects nothing, and a render collects only its own.
        assert_eq!(
            serde_json::to_string(&result).expect("serializes"),
            r#"{"load":0.5}"#
        );
        let plain = render_rich("text").expect("renders");
        assert_eq!(plain, Rendered::from("text".to_owned()));
        assert_eq!(
            Image::png(vec![0; 10]).stand_in(),
            "[image: image/png, 10 bytes]"
        );
        let image = Image::png(vec![0, 255, 7]);
        let json = serde_json::to_value(&image).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"media_type": "image/png", "data": "AP8H"})
        );
        assert_eq!(
            serde_json::from_value::<Image>(json).expect("round-trips"),
            image
        );
        assert!(
            serde_json::from_value::<Image>(serde_json::json!({"media_type": "x", "data": "*"}))
                .is_err()
        );
    }
}
