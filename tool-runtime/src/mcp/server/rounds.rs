//! A handler's questions on protocol 2026-07-28 (M3), where a server cannot ask during a call:
//! the question ends the call with `input_required`, and the client calls again with the
//! answer. The handler then runs again from its start, and each question it asked before is
//! answered at once from what the client brought back; a new question ends the call again.
//! (So a handler should ask before it acts.)
//!
//! What the earlier rounds asked and were answered travels in the `requestState`, sealed with
//! the server's key and bound to the tool and the arguments (H10's seal): `tre.` + the rounds
//! (base64 JSON) + `.` + the seal. A state that is forged, altered, expired or brought back
//! twice is refused, and the call with it.

use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequiredResult, InputResponses,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tool_core::CancellationToken;
use tool_core::elicit::{ElicitAnswer, ElicitError, ElicitFuture, Elicitor};

use super::request_state::{Binding, Refusal, RequestStates};

/// How a state of these rounds starts.
const PREFIX: &str = "tre.";
/// What the seal binds besides the rounds: no approval state can pass for one of these.
const BOUND_AS: &[u8] = b"tool-runtime/mcp/elicitation-rounds:";
/// The most questions one call may ask over its rounds.
const MAX_QUESTIONS: usize = 16;

/// What the earlier rounds of a call asked and were answered.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Rounds {
    /// Whether the call was approved (H6) before its handler asked.
    pub(crate) approved: bool,
    /// Each question asked, as a digest of its name, message and schema.
    questions: Vec<String>,
    /// The name the handler gave each question, if it named it (M10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    keys: Vec<Option<String>>,
    /// The answers, one per question but the last until the client answers it.
    answers: Vec<Value>,
}

/// Whether `state` is one of these rounds' (rather than an approval question's).
pub(crate) fn is_rounds_state(state: &str) -> bool {
    state.starts_with(PREFIX)
}

/// The rounds `state` carries for the call of `tool` with `args`, with the client's answer to
/// the last question taken from `responses`.
pub(crate) fn open(
    states: &RequestStates,
    state: &str,
    tool: &str,
    args: &[u8],
    responses: Option<&InputResponses>,
) -> Result<Rounds, Refusal> {
    let rest = state.strip_prefix(PREFIX).ok_or(Refusal::Malformed)?;
    let (payload, seal) = rest.split_once('.').ok_or(Refusal::Malformed)?;
    let json = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| Refusal::Malformed)?;
    let bound = [BOUND_AS, &json].concat();
    states.redeem(
        seal,
        &Binding {
            tool,
            args,
            question: &bound,
        },
    )?;
    let mut rounds: Rounds = serde_json::from_slice(&json).map_err(|_| Refusal::Malformed)?;
    let last = rounds
        .questions
        .len()
        .checked_sub(1)
        .ok_or(Refusal::Malformed)?;
    let answer = responses
        .and_then(|responses| responses.get(&rounds.key(last)))
        .cloned()
        .unwrap_or(Value::Null);
    rounds.answers.push(answer);
    Ok(rounds)
}

impl Rounds {
    /// The key of question `index` in `inputRequests` and `inputResponses`: the name its
    /// handler gave it, or `question-<index>`.
    fn key(&self, index: usize) -> String {
        match self.keys.get(index) {
            Some(Some(key)) => key.clone(),
            _ => format!("question-{index}"),
        }
    }
}

fn digest(key: Option<&str>, message: &str, schema: &Value) -> String {
    let digest = Sha256::new()
        .chain_update(key.unwrap_or_default().as_bytes())
        .chain_update([0])
        .chain_update(message.as_bytes())
        .chain_update([0])
        .chain_update(schema.to_string().as_bytes())
        .finalize();
    base16ct::lower::encode_string(&digest)
}

/// A question the handler asked that no round answered.
struct Asked {
    key: String,
    message: String,
    schema: ElicitationSchema,
}

/// The elicitor of one run of a call's handler: it answers from the rounds, and a new
/// question ends the run.
pub(crate) struct RoundElicitor {
    rounds: Mutex<Rounds>,
    /// How many questions this run of the handler asked.
    asked: Mutex<usize>,
    new_question: Mutex<Option<Asked>>,
    notify: Notify,
    /// The call's cancellation: a run ended by its question is cancelled.
    cancelled: CancellationToken,
}

impl RoundElicitor {
    /// The elicitor of a call cancelled by `cancelled`, after the `rounds` before it.
    pub(crate) fn new(rounds: Rounds, cancelled: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            rounds: Mutex::new(rounds),
            asked: Mutex::new(0),
            new_question: Mutex::new(None),
            notify: Notify::new(),
            cancelled,
        })
    }

    /// Whether the call was approved in an earlier round (H6).
    pub(crate) fn approved(&self) -> bool {
        lock(&self.rounds).approved
    }

    /// Waits until the handler asks a question no round answered.
    pub(crate) async fn question(&self) {
        loop {
            let notified = self.notify.notified();
            if lock(&self.new_question).is_some() {
                return;
            }
            notified.await;
        }
    }

    /// The `input_required` answer for the question the handler asked, its state sealed.
    pub(crate) fn input_required(
        &self,
        states: &RequestStates,
        tool: &str,
        args: &[u8],
        approved: bool,
    ) -> Result<InputRequiredResult, Refusal> {
        let asked = lock(&self.new_question).take().ok_or(Refusal::Malformed)?;
        let mut rounds = lock(&self.rounds).clone();
        rounds.approved = approved;
        let json = serde_json::to_vec(&rounds).map_err(|_| Refusal::Malformed)?;
        let bound = [BOUND_AS, &json].concat();
        let seal = states.seal(&Binding {
            tool,
            args,
            question: &bound,
        })?;
        let state = format!("{PREFIX}{}.{seal}", URL_SAFE_NO_PAD.encode(&json));
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: asked.message,
            requested_schema: asked.schema,
        };
        let requests = [(
            asked.key,
            InputRequest::Elicitation(ElicitRequest::new(params)),
        )];
        Ok(InputRequiredResult::new(
            Some(requests.into_iter().collect()),
            Some(state),
        ))
    }

    fn ask(
        &self,
        key: Option<&str>,
        message: &str,
        schema: &Value,
    ) -> Result<Option<ElicitAnswer>, ElicitError> {
        let index = {
            let mut asked = lock(&self.asked);
            *asked += 1;
            *asked - 1
        };
        let digest = digest(key, message, schema);
        let mut rounds = lock(&self.rounds);
        if rounds.questions.get(index) == Some(&digest)
            && let Some(answer) = rounds.answers.get(index)
        {
            return Ok(Some(answer_of(answer)));
        }
        if index >= MAX_QUESTIONS {
            return Err(ElicitError::Failed(
                "a call may ask at most 16 questions".into(),
            ));
        }
        // A question no round answered (or another than was answered here): a new round.
        rounds.questions.truncate(index);
        rounds.answers.truncate(index);
        rounds.keys.truncate(index);
        if let Some(key) = key
            && (0..index).any(|earlier| rounds.key(earlier) == key)
        {
            return Err(ElicitError::Key {
                key: key.to_owned(),
                reason: "another question of this call has that name",
            });
        }
        rounds.questions.push(digest);
        rounds.keys.resize(index, None);
        rounds.keys.push(key.map(str::to_owned));
        let asked_key = rounds.key(index);
        let schema: ElicitationSchema = serde_json::from_value(schema.clone()).map_err(|e| {
            ElicitError::Failed(format!("the schema is not one MCP elicitation takes: {e}"))
        })?;
        *lock(&self.new_question) = Some(Asked {
            key: asked_key,
            message: message.to_owned(),
            schema,
        });
        self.notify.notify_one();
        Ok(None)
    }
}

impl Elicitor for RoundElicitor {
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        self.ask_until_answered(None, message, schema)
    }

    fn elicit_named<'a>(
        &'a self,
        key: &'a str,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        self.ask_until_answered(Some(key), message, schema)
    }
}

impl RoundElicitor {
    /// The answer to a question from the rounds; a new question ends the run, and the handler
    /// is told `Cancel` once its call is.
    fn ask_until_answered<'a>(
        &'a self,
        key: Option<&'a str>,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        Box::pin(async move {
            match self.ask(key, message, schema)? {
                Some(answer) => Ok(answer),
                None => {
                    // The run ends with this question; the handler is told once it is cancelled.
                    self.cancelled.cancelled().await;
                    Ok(ElicitAnswer::Cancel)
                }
            }
        })
    }
}

/// The handler's answer from the client's `ElicitResult`; anything unreadable is a decline.
fn answer_of(answer: &Value) -> ElicitAnswer {
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(result) => match result.action {
            ElicitationAction::Accept => {
                ElicitAnswer::Accept(result.content.unwrap_or(Value::Object(Default::default())))
            }
            ElicitationAction::Cancel => ElicitAnswer::Cancel,
            _ => ElicitAnswer::Decline,
        },
        Err(_) => ElicitAnswer::Decline,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn states() -> RequestStates {
        RequestStates::new(Some(&[7; 32]), Duration::from_secs(60))
    }

    /// A state for the question `message` asked in the call of `tool` with `args`.
    fn asked(states: &RequestStates, tool: &str, args: &[u8]) -> String {
        let round = RoundElicitor::new(Rounds::default(), CancellationToken::new());
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert!(
            round.ask(None, "Who?", &schema).expect("asked").is_none(),
            "a new question"
        );
        let input = round
            .input_required(states, tool, args, false)
            .expect("sealed");
        input.request_state.expect("a state")
    }

    #[test]
    fn m3_h10_a_rounds_state_counts_once_for_its_own_call_only() {
        let states = states();
        let state = asked(&states, "ask", b"{}");
        assert!(is_rounds_state(&state));
        let answer = InputResponses::from([(
            "question-0".to_owned(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )]);
        for (tool, args) in [("other", &b"{}"[..]), ("ask", &br#"{"a":1}"#[..])] {
            let refused = open(&states, &state, tool, args, Some(&answer));
            assert_eq!(refused.err(), Some(Refusal::Forged), "{tool} {args:?}");
        }
        let rounds = open(&states, &state, "ask", b"{}", Some(&answer)).expect("taken");
        assert_eq!(rounds.answers.len(), 1);
        let replayed = open(&states, &state, "ask", b"{}", Some(&answer));
        assert_eq!(replayed.err(), Some(Refusal::Replayed));
        // The rounds altered by the client: the seal no longer holds.
        let other = asked(&states, "ask", b"{}");
        let (payload, seal) = other["tre.".len()..].split_once('.').expect("two parts");
        let mut json: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("b64")).expect("json");
        json["approved"] = json!(true);
        let forged = format!("tre.{}.{seal}", URL_SAFE_NO_PAD.encode(json.to_string()));
        assert_eq!(
            open(&states, &forged, "ask", b"{}", None).err(),
            Some(Refusal::Forged)
        );
    }

    #[test]
    fn m3_an_answered_question_is_answered_again_and_a_new_one_asked() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let digest = digest(None, "Who?", &schema);
        let rounds = Rounds {
            approved: false,
            keys: Vec::new(),
            questions: vec![digest],
            answers: vec![json!({"action": "accept", "content": {"name": "Ada"}})],
        };
        let round = RoundElicitor::new(rounds, CancellationToken::new());
        let first = round.ask(None, "Who?", &schema).expect("answered");
        assert!(
            matches!(first, Some(ElicitAnswer::Accept(ref v)) if v["name"] == "Ada"),
            "{first:?}"
        );
        assert!(
            round
                .ask(None, "And when?", &schema)
                .expect("asked")
                .is_none(),
            "a new round"
        );
    }
}
