//! A handler's questions on protocol 2026-07-28 (M3, M8), where a server cannot ask during a
//! call: an elicitation, a sampling request or a roots request ends the call with
//! `input_required`, and the client calls again with the answer. The questions a handler asks
//! at once (joined) go in one round, each under its own key. The handler then runs again from its start, and each question it asked before is
//! answered at once from what the client brought back; a new question ends the call again.
//! (So a handler should ask before it acts.)
//!
//! What the earlier rounds asked and were answered travels in the `requestState`, sealed with
//! the server's key and bound to the tool and the arguments (H10's seal): `tre.` + the rounds
//! (base64 JSON) + `.` + the seal. A state that is forged, altered, expired or brought back
//! twice is refused, and the call with it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{InputRequest, InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use tool_core::CancellationToken;

use super::ask::{Carrier, Declared, NoAnswer, Question};
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
    /// The arguments the approval edited (B3), which the call runs with from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    edited: Option<String>,
    /// Each question asked, as a digest of its kind, name and content.
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
    // The questions of the last round, which the client answers now.
    let asked = rounds.answers.len()..rounds.questions.len();
    if asked.is_empty() || rounds.questions.len() > MAX_QUESTIONS {
        return Err(Refusal::Malformed);
    }
    for index in asked {
        let answer = responses
            .and_then(|responses| responses.get(&rounds.key(index)))
            .cloned()
            .unwrap_or(Value::Null);
        rounds.answers.push(answer);
    }
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

/// The digest of a question of `kind` named `key`, asking `content`.
fn digest(kind: &str, key: Option<&str>, content: &[&str]) -> String {
    let mut digest = Sha256::new()
        .chain_update(kind.as_bytes())
        .chain_update([0])
        .chain_update(key.unwrap_or_default().as_bytes());
    for part in content {
        digest = digest.chain_update([0]).chain_update(part.as_bytes());
    }
    base16ct::lower::encode_string(&digest.finalize())
}

/// A question the handler asked that no round answered.
struct Asked {
    key: String,
    request: InputRequest,
}

/// The questions a run asked that no round answered, not yet sent.
#[derive(Default)]
struct Unsent {
    asked: Vec<Asked>,
    /// Whether the rounds take no new question: the call went on as a task (M9).
    closed: bool,
}

/// Why a question could not be asked in a round.
enum AskError {
    /// The rounds are closed: the call went on as a task (M9).
    Closed,
    /// The call asked more than [`MAX_QUESTIONS`].
    TooMany,
    /// Another question of the call has this name.
    Taken(String),
    /// The question cannot be carried.
    Request(String),
}

/// The questions of one run of a call's handler (elicitation, sampling, roots: M3, M8): each
/// answered from the rounds, and a new one ends the run.
pub(crate) struct RoundElicitor {
    rounds: Mutex<Rounds>,
    /// How many questions this run of the handler asked.
    asked: Mutex<usize>,
    new_questions: Mutex<Unsent>,
    notify: Notify,
    /// The call's cancellation: a run ended by its question is cancelled.
    cancelled: CancellationToken,
    declared: Declared,
}

impl RoundElicitor {
    /// The questions of a call cancelled by `cancelled`, after the `rounds` before it, of a
    /// client that `declared` these capabilities.
    pub(crate) fn new(
        rounds: Rounds,
        cancelled: CancellationToken,
        declared: Declared,
    ) -> Arc<Self> {
        Arc::new(Self {
            rounds: Mutex::new(rounds),
            asked: Mutex::new(0),
            new_questions: Mutex::new(Unsent::default()),
            notify: Notify::new(),
            cancelled,
            declared,
        })
    }

    /// Whether the call was approved in an earlier round (H6).
    pub(crate) fn approved(&self) -> bool {
        lock(&self.rounds).approved
    }

    /// The arguments an earlier round's approval edited (B3), which the call runs with.
    pub(crate) fn edited(&self) -> Option<Vec<u8>> {
        lock(&self.rounds).edited.clone().map(String::into_bytes)
    }

    /// Closes the rounds to new questions, for the call goes on as a task (M9), unless a
    /// question is waiting to be sent: then the run ends with it, and `false`. Answered
    /// questions are still answered.
    pub(crate) fn close_if_quiet(&self) -> bool {
        let mut unsent = lock(&self.new_questions);
        if !unsent.asked.is_empty() {
            return false;
        }
        unsent.closed = true;
        true
    }

    /// Waits until the handler asks a question no round answered.
    pub(crate) async fn question(&self) {
        loop {
            let notified = self.notify.notified();
            if !lock(&self.new_questions).asked.is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// The `input_required` answer for the questions the handler asked, its state sealed.
    pub(crate) fn input_required(
        &self,
        states: &RequestStates,
        tool: &str,
        args: &[u8],
        approved: bool,
        edited: Option<&[u8]>,
    ) -> Result<InputRequiredResult, Refusal> {
        let asked = std::mem::take(&mut lock(&self.new_questions).asked);
        if asked.is_empty() {
            return Err(Refusal::Malformed);
        }
        let mut rounds = lock(&self.rounds).clone();
        rounds.approved = approved;
        rounds.edited = match edited {
            Some(edited) => {
                Some(String::from_utf8(edited.to_vec()).map_err(|_| Refusal::Malformed)?)
            }
            None => None,
        };
        let json = serde_json::to_vec(&rounds).map_err(|_| Refusal::Malformed)?;
        let bound = [BOUND_AS, &json].concat();
        let seal = states.seal(&Binding {
            tool,
            args,
            question: &bound,
        })?;
        let state = format!("{PREFIX}{}.{seal}", URL_SAFE_NO_PAD.encode(&json));
        let requests = asked.into_iter().map(|asked| (asked.key, asked.request));
        Ok(InputRequiredResult::new(
            Some(requests.collect()),
            Some(state),
        ))
    }

    /// The answer the rounds hold for the question `digest` (named `key`), or `None` when it
    /// is new: then `request` (given its key) is what the client is asked, and the run ends.
    fn ask(
        &self,
        key: Option<&str>,
        digest: String,
        request: impl FnOnce() -> Result<InputRequest, String>,
    ) -> Result<Option<Value>, AskError> {
        let index = {
            let mut asked = lock(&self.asked);
            *asked += 1;
            *asked - 1
        };
        let mut rounds = lock(&self.rounds);
        if rounds.questions.get(index) == Some(&digest)
            && let Some(answer) = rounds.answers.get(index)
        {
            return Ok(Some(answer.clone()));
        }
        if index >= MAX_QUESTIONS {
            return Err(AskError::TooMany);
        }
        if self.cancelled.is_cancelled() {
            // The run already ended: a question asked while it winds down is not sent.
            return Ok(None);
        }
        let mut unsent = lock(&self.new_questions);
        if unsent.closed {
            // The call went on as a task (M9): its new questions are the task's.
            return Err(AskError::Closed);
        }
        // A question no round answered (or another than was answered here): a new round.
        rounds.questions.truncate(index);
        rounds.answers.truncate(index);
        rounds.keys.truncate(index);
        if let Some(key) = key
            && (0..index).any(|earlier| rounds.key(earlier) == key)
        {
            return Err(AskError::Taken(key.to_owned()));
        }
        let request = request().map_err(AskError::Request)?;
        rounds.questions.push(digest);
        rounds.keys.resize(index, None);
        rounds.keys.push(key.map(str::to_owned));
        let asked_key = rounds.key(index);
        unsent.asked.push(Asked {
            key: asked_key,
            request,
        });
        self.notify.notify_one();
        Ok(None)
    }

    /// The answer to a question from the rounds, or `None` once the run ended with it (the
    /// handler is told when its call is cancelled).
    async fn answered(
        &self,
        key: Option<&str>,
        digest: String,
        request: impl FnOnce() -> Result<InputRequest, String>,
    ) -> Result<Option<Value>, AskError> {
        match self.ask(key, digest, request)? {
            Some(answer) => Ok(Some(answer)),
            None => {
                self.cancelled.cancelled().await;
                Ok(None)
            }
        }
    }
}

impl Carrier for RoundElicitor {
    fn declared(&self) -> Declared {
        self.declared
    }

    async fn carry(&self, key: Option<&str>, question: Question<'_>) -> Result<Value, NoAnswer> {
        let digest = match question {
            Question::Elicit { message, schema } => {
                digest("elicitation", key, &[message, &schema.to_string()])
            }
            Question::Sample(request) => {
                let params = super::sampling::params_of(request);
                let text = serde_json::to_string(&params).unwrap_or_default();
                digest("sampling", key, &[&text])
            }
            Question::Roots => digest("roots", key, &[]),
        };
        match self.answered(key, digest, || question.request()).await {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => Err(NoAnswer::Ended),
            // The call is a task now: `tasks::Later` asks the task instead.
            Err(AskError::Closed) => Err(NoAnswer::Unsupported),
            Err(AskError::TooMany) => Err(NoAnswer::Failed(format!(
                "a call may ask at most {MAX_QUESTIONS} questions"
            ))),
            Err(AskError::Taken(key)) => Err(NoAnswer::KeyTaken {
                key,
                reason: "another question of this call has that name",
            }),
            Err(AskError::Request(reason)) => Err(NoAnswer::Failed(reason)),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::server::ask::Through;
    use serde_json::json;
    use std::time::Duration;
    use tool_core::elicit::{ElicitAnswer, ElicitError, Elicitor};
    use tool_core::roots::{RootsError, RootsSource};
    use tool_core::sampling::{SampleError, Sampler, SamplingRequest};

    fn states() -> RequestStates {
        RequestStates::new(Some(&[7; 32]), Duration::from_secs(60))
    }

    /// A state for the question `message` asked in the call of `tool` with `args`.
    fn asked(states: &RequestStates, tool: &str, args: &[u8]) -> String {
        let round = RoundElicitor::new(Rounds::default(), CancellationToken::new(), ALL);
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let asked = round.ask(None, digest("elicitation", None, &["Who?"]), || {
            Ok(elicitation("Who?", &schema))
        });
        assert!(matches!(asked, Ok(None)), "a new question");
        let input = round
            .input_required(states, tool, args, false, None)
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

    const ALL: Declared = Declared {
        elicitation: true,
        sampling: true,
        roots: true,
    };

    fn elicitation(message: &str, schema: &Value) -> InputRequest {
        crate::mcp::server::ask::elicitation_request(message, schema).expect("a schema")
    }

    #[tokio::test]
    async fn m3_an_answered_question_is_answered_again_and_a_new_one_asked() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let digest = digest("elicitation", None, &["Who?", &schema.to_string()]);
        let rounds = Rounds {
            approved: false,
            edited: None,
            keys: Vec::new(),
            questions: vec![digest],
            answers: vec![json!({"action": "accept", "content": {"name": "Ada"}})],
        };
        let cancelled = CancellationToken::new();
        let round = RoundElicitor::new(rounds, cancelled.clone(), ALL);
        let asks = Through(Arc::clone(&round));
        let first = asks.elicit("Who?", &schema).await;
        assert!(
            matches!(first, Ok(ElicitAnswer::Accept(ref v)) if v["name"] == "Ada"),
            "{first:?}"
        );
        let second = asks.elicit("And when?", &schema);
        let (second, ()) = tokio::join!(second, async {
            round.question().await;
            cancelled.cancel();
        });
        assert_eq!(second, Ok(ElicitAnswer::Cancel), "a new round ends the run");
    }

    /// Asks an elicitation, a sampling request and the roots at once, as a handler that joins
    /// them does, in the call of `ask` with `{}`; gives what each was told and the round.
    async fn ask_three(
        round: &Arc<RoundElicitor>,
        cancelled: &CancellationToken,
    ) -> (
        Result<ElicitAnswer, ElicitError>,
        Result<tool_core::sampling::SamplingAnswer, SampleError>,
        Result<Vec<tool_core::Root>, RootsError>,
    ) {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let request = SamplingRequest::new("Generate a greeting", 50);
        let asks = Through(Arc::clone(round));
        let (elicited, sampled, roots, ()) = tokio::join!(
            asks.elicit_named("user_name", "What is your name?", &schema),
            asks.sample(Some("greeting"), &request),
            asks.roots(Some("client_roots")),
            async {
                // A new question ends the run; a run whose questions were all answered goes on.
                tokio::select! {
                    () = round.question() => cancelled.cancel(),
                    () = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
                }
            }
        );
        (elicited, sampled, roots)
    }

    #[tokio::test]
    async fn m8_sampling_and_roots_go_in_one_sealed_round_and_come_back_answered() {
        let states = states();
        let cancelled = CancellationToken::new();
        let round = RoundElicitor::new(Rounds::default(), cancelled.clone(), ALL);
        let (elicited, sampled, roots) = ask_three(&round, &cancelled).await;
        assert_eq!(elicited, Ok(ElicitAnswer::Cancel));
        assert_eq!(sampled, Err(SampleError::Cancelled));
        assert_eq!(roots, Err(RootsError::Cancelled));
        let input = round
            .input_required(&states, "ask", b"{}", false, None)
            .expect("sealed");
        let requests = input.input_requests.clone().expect("requests");
        let methods: Vec<Value> = ["user_name", "greeting", "client_roots"]
            .iter()
            .map(|key| serde_json::to_value(&requests[*key]).expect("json")["method"].clone())
            .collect();
        assert_eq!(
            methods,
            [
                json!("elicitation/create"),
                json!("sampling/createMessage"),
                json!("roots/list")
            ]
        );
        let state = input.request_state.expect("a state");
        let responses = InputResponses::from([
            (
                "user_name".to_owned(),
                json!({"action": "accept", "content": {"name": "Ada"}}),
            ),
            (
                "greeting".to_owned(),
                json!({"role": "assistant", "content": {"type": "text", "text": "Hello!"},
                       "model": "m"}),
            ),
            (
                "client_roots".to_owned(),
                json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
            ),
        ]);
        let rounds = open(&states, &state, "ask", b"{}", Some(&responses)).expect("opened");
        let again = open(&states, &state, "ask", b"{}", Some(&responses));
        assert_eq!(again.err(), Some(Refusal::Replayed), "H10: once");
        let cancelled = CancellationToken::new();
        let round = RoundElicitor::new(rounds, cancelled.clone(), ALL);
        let (elicited, sampled, roots) = ask_three(&round, &cancelled).await;
        assert!(matches!(elicited, Ok(ElicitAnswer::Accept(ref v)) if v["name"] == "Ada"));
        assert_eq!(sampled.expect("sampled").text, "Hello!");
        assert_eq!(roots.expect("roots")[0].uri, "file:///work");
    }

    #[tokio::test]
    async fn m8_a_round_refuses_what_the_client_did_not_declare_and_hostile_answers() {
        let only_elicitation = Declared {
            elicitation: true,
            ..Declared::default()
        };
        let round = RoundElicitor::new(
            Rounds::default(),
            CancellationToken::new(),
            only_elicitation,
        );
        let request = SamplingRequest::new("hi", 5);
        let asks = Through(round);
        assert_eq!(
            asks.sample(None, &request).await,
            Err(SampleError::Unsupported)
        );
        assert_eq!(asks.roots(None).await, Err(RootsError::Unsupported));
        // A sampling answer of the wrong shape, answered in the next round.
        let params = super::super::sampling::params_of(&request);
        let text = serde_json::to_string(&params).expect("json");
        let rounds = Rounds {
            approved: false,
            edited: None,
            keys: vec![None],
            questions: vec![digest("sampling", None, &[&text])],
            answers: vec![json!({"role": "assistant", "content": {"type": "text"}})],
        };
        let round = RoundElicitor::new(rounds, CancellationToken::new(), ALL);
        let answer = Through(round).sample(None, &request).await;
        assert!(matches!(answer, Err(SampleError::Invalid(_))), "{answer:?}");
    }
}
