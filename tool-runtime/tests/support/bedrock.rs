//! What the Bedrock tests (`tests/provider_bedrock*.rs`) answer with and check: Converse
//! and ConverseStream payloads of the API's real shapes, ConverseStream's events encoded as
//! real event stream frames with AWS's own encoder (`aws-smithy-eventstream`), Bedrock's
//! error replies, and the check that a request's SigV4 `Authorization` header is well
//! formed and its signature verifies (recomputed with `aws-sigv4` from the request the
//! server received).

#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_runtime_api::client::identity::Identity;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use serde_json::{Value, json};

use super::provider::{Reply, Request};

/// The event stream's media type.
pub const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";
/// The test keys.
pub const ACCESS_KEY_ID: &str = "AKIDEXAMPLETEST";
/// The test secret key.
pub const SECRET_ACCESS_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// The test region.
pub const REGION: &str = "eu-west-3";
/// The test model, with the `:` a versioned model id has.
pub const MODEL: &str = "anthropic.claude-3-5-haiku-20241022-v1:0";

fn string(value: &str) -> HeaderValue {
    HeaderValue::String(value.to_owned().into())
}

fn encode(message: &Message) -> Vec<u8> {
    let mut out = Vec::new();
    write_message_to(message, &mut out).expect("the frame encodes");
    out
}

/// One event frame: `:event-type` `kind`, the JSON `payload` (with the `p` padding field
/// Bedrock adds).
pub fn event(kind: &str, payload: Value) -> Vec<u8> {
    let mut payload = payload;
    if let Some(map) = payload.as_object_mut() {
        map.insert("p".into(), "abcdefghijklmnopqrstu".into());
    }
    let message = Message::new(payload.to_string().into_bytes())
        .add_header(Header::new(":event-type", string(kind)))
        .add_header(Header::new(":content-type", string("application/json")))
        .add_header(Header::new(":message-type", string("event")));
    encode(&message)
}

/// One exception frame (`throttlingException`, `modelStreamErrorException`, …).
pub fn exception(kind: &str, message: &str) -> Vec<u8> {
    let message = Message::new(json!({"message": message}).to_string().into_bytes())
        .add_header(Header::new(":exception-type", string(kind)))
        .add_header(Header::new(":content-type", string("application/json")))
        .add_header(Header::new(":message-type", string("exception")));
    encode(&message)
}

/// A ConverseStream reply of these frames, with a request id.
pub fn stream(frames: &[Vec<u8>]) -> Reply {
    Reply::bytes(EVENT_STREAM, frames.concat()).header("x-amzn-requestid", "req-bedrock-1")
}

fn text_block(index: u64, text: &str) -> Vec<Vec<u8>> {
    let (a, b) = text.split_at(text.len() / 2);
    vec![
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": {"text": a}}),
        ),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": {"text": b}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": index})),
    ]
}

fn ending(stop: &str, input: u64, output: u64) -> Vec<Vec<u8>> {
    vec![
        event("messageStop", json!({"stopReason": stop})),
        event(
            "metadata",
            json!({"usage": {"inputTokens": input, "outputTokens": output,
                             "totalTokens": input + output},
                   "metrics": {"latencyMs": 412}}),
        ),
    ]
}

/// The frames of an answer `text` that stopped for `stop`.
pub fn text_frames(text: &str, stop: &str) -> Vec<Vec<u8>> {
    let mut frames = vec![event("messageStart", json!({"role": "assistant"}))];
    frames.extend(text_block(0, text));
    frames.extend(ending(stop, 30, 5));
    frames
}

/// A ConverseStream answer `text`.
pub fn text_answer(text: &str) -> Reply {
    stream(&text_frames(text, "end_turn"))
}

/// The frames of a turn with `text`, then a `toolUse` block per call `(id, name, input)`,
/// each input streamed in two fragments.
pub fn tool_frames(text: &str, calls: &[(&str, &str, &str)]) -> Vec<Vec<u8>> {
    let mut frames = vec![event("messageStart", json!({"role": "assistant"}))];
    frames.extend(text_block(0, text));
    for (i, (id, name, input)) in calls.iter().enumerate() {
        let index = i as u64 + 1;
        frames.push(event(
            "contentBlockStart",
            json!({"contentBlockIndex": index,
                   "start": {"toolUse": {"toolUseId": id, "name": name}}}),
        ));
        let (a, b) = input.split_at(input.len() / 2);
        for fragment in [a, b] {
            frames.push(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}}),
            ));
        }
        frames.push(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
    }
    frames.extend(ending("tool_use", 512, 40));
    frames
}

/// A ConverseStream turn of tool calls.
pub fn tool_answer(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    stream(&tool_frames(text, calls))
}

/// A Converse (not streamed) answer `text` that stopped for `stop`.
pub fn converse_answer(text: &str, stop: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": stop,
            "usage": {"inputTokens": 30, "outputTokens": 5, "totalTokens": 35},
            "metrics": {"latencyMs": 300},
        }),
    )
    .header("x-amzn-requestid", "req-converse-1")
}

/// A Converse (not streamed) turn of tool calls `(id, name, input)`.
pub fn converse_tools(calls: &[(&str, &str, Value)]) -> Reply {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}),
        )
        .collect();
    Reply::json(
        200,
        json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
            "metrics": {"latencyMs": 300},
        }),
    )
}

/// Bedrock's error reply: `status`, `x-amzn-ErrorType` and `{"message"}`.
pub fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(status, json!({"message": message}))
        .header(
            "x-amzn-ErrorType",
            &format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        )
        .header("x-amzn-requestid", "req-error-1")
}

/// `YYYYMMDDTHHMMSSZ` as a time.
fn amz_date(text: &str) -> Option<SystemTime> {
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    if text.len() != 16 || text.get(8..9) != Some("T") || !text.ends_with('Z') {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Checks that `request` carries a SigV4 `Authorization` of the right shape (algorithm,
/// credential scope `…/REGION/bedrock/aws4_request`, signed headers that include `host`
/// and `x-amz-date`) and that its signature is the one `aws-sigv4` computes from the
/// request received, with the test keys (and `session_token`, sent as
/// `x-amz-security-token`). Returns what is wrong.
pub fn verify_sigv4(request: &Request, session_token: Option<&str>) -> Result<(), String> {
    let authorization = request
        .header("authorization")
        .ok_or("no authorization header")?;
    let rest = authorization
        .strip_prefix("AWS4-HMAC-SHA256 Credential=")
        .ok_or_else(|| format!("not SigV4: {authorization}"))?;
    let mut parts = rest.split(", ");
    let credential = parts.next().ok_or("no credential")?;
    let signed = parts
        .next()
        .and_then(|p| p.strip_prefix("SignedHeaders="))
        .ok_or("no SignedHeaders")?;
    let signature = parts
        .next()
        .and_then(|p| p.strip_prefix("Signature="))
        .ok_or("no Signature")?;
    let scope: Vec<&str> = credential.split('/').collect();
    if scope.len() != 5
        || scope[0] != ACCESS_KEY_ID
        || scope[2..] != [REGION, "bedrock", "aws4_request"]
    {
        return Err(format!("a wrong credential scope: {credential}"));
    }
    if signature.len() != 64 || !signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "a signature that is not 64 hex digits: {signature}"
        ));
    }
    let names: Vec<&str> = signed.split(';').collect();
    if !names.contains(&"host") || !names.contains(&"x-amz-date") {
        return Err(format!("host and x-amz-date must be signed: {signed}"));
    }
    let date = request.header("x-amz-date").ok_or("no x-amz-date")?;
    let at = amz_date(date).ok_or_else(|| format!("a bad x-amz-date: {date}"))?;
    if !date.starts_with(scope[1]) {
        return Err("the scope's date is not the request's".into());
    }
    if request.header("x-amz-security-token") != session_token {
        return Err("the session token is not sent as it should be".into());
    }
    let expected = expected_signature(request, &names, at, session_token)?;
    if expected == signature {
        Ok(())
    } else {
        Err("the signature does not verify".into())
    }
}

/// The signature `aws-sigv4` computes for `request`, its headers `names` signed at `at`.
fn expected_signature(
    request: &Request,
    names: &[&str],
    at: SystemTime,
    session_token: Option<&str>,
) -> Result<String, String> {
    let mut headers = Vec::new();
    for name in names
        .iter()
        .filter(|n| !matches!(**n, "x-amz-date" | "x-amz-security-token"))
    {
        let value = request
            .header(name)
            .ok_or_else(|| format!("a signed header is missing: {name}"))?;
        headers.push((*name, value));
    }
    let identity: Identity = Credentials::new(
        ACCESS_KEY_ID,
        SECRET_ACCESS_KEY,
        session_token.map(str::to_owned),
        None,
        "test",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(REGION)
        .name("bedrock")
        .time(at)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let host = request.header("host").ok_or("no host")?;
    let url = format!("http://{host}{}", request.path);
    let signable = SignableRequest::new(
        &request.method,
        url,
        headers.into_iter(),
        SignableBody::Bytes(request.body.as_bytes()),
    )
    .map_err(|e| e.to_string())?;
    let (_, expected) = sign(signable, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    Ok(expected)
}
