//! The 2025-11-25 task messages the SDK does not read, rewritten on the way in and out (M5).
//!
//! The SDK reads `tools/call` without its `task`, `tools/list` entries without their
//! `execution`, and the initialize result without `capabilities.tasks`; it routes
//! `tasks/get` and `tasks/cancel` to another protocol's tasks. So the transports pass each
//! JSON-RPC message through here: on the way in a `tools/call`'s `task` moves into its
//! `_meta` ([`TASK_META_KEY`]) and the `tasks/*` methods are renamed ([`METHOD_PREFIX`]); on
//! the way out the initialize result declares tasks, each tool shows its `taskSupport`, and a
//! call the server made a task ([`CREATED_META_KEY`]) becomes a `CreateTaskResult`. A message
//! with nothing to change keeps its bytes.

use serde_json::{Map, Value, json};

use crate::mcp::server::tasks::{CREATED_META_KEY, METHOD_PREFIX, TASK_META_KEY, TaskSupport};

/// The protocol version whose tasks these are.
pub(crate) const TASKS_PROTOCOL: &str = "2025-11-25";
/// The methods of 2025-11-25 tasks.
const METHODS: [&str; 4] = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];

/// One message (or batch) from the client, rewritten; `None` when nothing changes.
pub(crate) fn incoming(bytes: &[u8]) -> Option<Vec<u8>> {
    // Only a message naming a task can change: the rest is not even parsed.
    if !contains(bytes, b"task") {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let changed = match &mut message {
        Value::Array(batch) => batch.iter_mut().fold(false, |c, m| incoming_one(m) | c),
        one => incoming_one(one),
    };
    changed.then(|| serde_json::to_vec(&message).ok()).flatten()
}

fn incoming_one(message: &mut Value) -> bool {
    let Some(object) = message.as_object_mut() else {
        return false;
    };
    match object.get("method").and_then(Value::as_str) {
        Some("tools/call") => {
            let Some(Value::Object(params)) = object.get_mut("params") else {
                return false;
            };
            let Some(task) = params.remove("task") else {
                return false;
            };
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            match meta {
                Value::Object(meta) => {
                    meta.insert(TASK_META_KEY.to_owned(), task);
                }
                // A `_meta` that is not an object: the SDK refuses the request as it is.
                _ => {
                    params.insert("task".to_owned(), task);
                    return false;
                }
            }
            true
        }
        // A request of 2026-07-28 says so in its `_meta`: its `tasks/*` are the Tasks
        // extension's, which the SDK reads.
        Some(method) if METHODS.contains(&method) && !is_modern(object) => {
            let renamed = format!("{METHOD_PREFIX}{method}");
            object.insert("method".to_owned(), Value::String(renamed));
            true
        }
        _ => false,
    }
}

/// Whether a request names protocol 2026-07-28 or later in its `_meta`.
fn is_modern(request: &Map<String, Value>) -> bool {
    request
        .get("params")
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
        .is_some_and(|version| version >= "2026-07-28")
}

/// One message (or batch) to the client, rewritten; `None` when nothing changes.
/// `support` gives a published tool name's task support.
pub(crate) fn outgoing(bytes: &[u8], support: &dyn Fn(&str) -> TaskSupport) -> Option<Vec<u8>> {
    if !(contains(bytes, b"\"protocolVersion\"")
        || contains(bytes, b"\"tools\"")
        || contains(bytes, CREATED_META_KEY.as_bytes()))
    {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let changed = match &mut message {
        Value::Array(batch) => batch
            .iter_mut()
            .fold(false, |c, m| outgoing_one(m, support) | c),
        one => outgoing_one(one, support),
    };
    changed.then(|| serde_json::to_vec(&message).ok()).flatten()
}

fn outgoing_one(message: &mut Value, support: &dyn Fn(&str) -> TaskSupport) -> bool {
    // Only responses change (a request of the server's has a `method`).
    let Some(Value::Object(result)) = message
        .as_object_mut()
        .filter(|m| !m.contains_key("method"))
        .and_then(|m| m.get_mut("result"))
    else {
        return false;
    };
    if let Some(task) = created(result) {
        *result = Map::from_iter([("task".to_owned(), task)]);
        return true;
    }
    if result.get("protocolVersion").and_then(Value::as_str) == Some(TASKS_PROTOCOL)
        && result.contains_key("serverInfo")
    {
        if let Some(Value::Object(capabilities)) = result.get_mut("capabilities") {
            capabilities.insert(
                "tasks".to_owned(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
            return true;
        }
        return false;
    }
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return false;
    };
    let mut changed = false;
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let support = support(name);
        if support != TaskSupport::Forbidden {
            tool.insert(
                "execution".to_owned(),
                json!({"taskSupport": support.as_str()}),
            );
            changed = true;
        }
    }
    changed
}

/// The task a call became, taken out of its result's `_meta`.
fn created(result: &mut Map<String, Value>) -> Option<Value> {
    let Value::Object(meta) = result.get_mut("_meta")? else {
        return None;
    };
    meta.remove(CREATED_META_KEY)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn support(name: &str) -> TaskSupport {
        match name {
            "slow-report" => TaskSupport::Required,
            "export" => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }

    fn parse(bytes: Option<Vec<u8>>) -> Value {
        serde_json::from_slice(&bytes.expect("rewritten")).expect("JSON")
    }

    #[test]
    fn m5_a_task_augmented_call_carries_its_task_in_meta_and_tasks_methods_are_renamed() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"export","arguments":{},"task":{"ttl":60000},"_meta":{"progressToken":7}}}"#;
        let call = parse(incoming(call));
        assert_eq!(
            call["params"]["_meta"][TASK_META_KEY],
            json!({"ttl": 60000})
        );
        assert_eq!(call["params"]["_meta"]["progressToken"], json!(7));
        assert!(call["params"].get("task").is_none());
        let batch = br#"[{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}},{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"t"}}]"#;
        let batch = parse(incoming(batch));
        assert_eq!(batch[0]["method"], "tool-runtime/tasks/get");
        assert_eq!(batch[1]["method"], "tool-runtime/tasks/cancel");
        let plain =
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"task-list"}}"#;
        assert_eq!(incoming(plain), None, "nothing to change keeps the bytes");
        assert_eq!(
            incoming(b"{not json, task"),
            None,
            "garbage is the SDK's to refuse"
        );
    }

    #[test]
    fn m5_the_answers_declare_tasks_and_each_tools_support() {
        let init = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
        let init = parse(outgoing(init, &support));
        assert_eq!(
            init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        let older = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
        assert_eq!(
            outgoing(older, &support),
            None,
            "a version without tasks is not told of them"
        );
        let list = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"slow-report"},{"name":"export"},{"name":"lookup"}]}}"#;
        let list = parse(outgoing(list, &support));
        assert_eq!(
            list["result"]["tools"][0]["execution"]["taskSupport"],
            "required"
        );
        assert_eq!(
            list["result"]["tools"][1]["execution"]["taskSupport"],
            "optional"
        );
        assert!(list["result"]["tools"][2].get("execution").is_none());
        let made = br#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"_meta":{"tool-runtime/task-created":{"taskId":"t","status":"working"}}}}"#;
        let made = parse(outgoing(made, &support));
        assert_eq!(
            made["result"],
            json!({"task": {"taskId": "t", "status": "working"}})
        );
        let request =
            br#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"tools":[]}}"#;
        assert_eq!(
            outgoing(request, &support),
            None,
            "a request of the server's is left alone"
        );
    }
}
