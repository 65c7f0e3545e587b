//! A durable run's text as the model streams it, for a caller to read while the run goes
//! (W10): [`AgentRunText`], a Restate virtual object keyed by the run, which the worker sends
//! each piece of text to through the ingress and a client polls
//! ([`crate::DurableClient::text`]).
//!
//! A step's work cannot reach its workflow's context in restate-sdk 0.13 (no state, promise or
//! message from inside a `ctx.run`), so the text takes a way beside the journal: the worker
//! posts it to the ingress, one request at a time in the order it streamed, as one-way
//! messages to the object, which keeps it in its state. It is best effort: text posted by an
//! attempt that dies may be cut short, and a step taken again after a crash streams its text
//! again, under the next attempt number. A reader keeps, for each turn, the text of its
//! highest attempt ([`TextDeltas::text`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tool_runtime::RunEvent;

/// The object's name in Restate: the first segment of its ingress paths.
pub const TEXT_OBJECT: &str = "AgentRunText";

/// How long a run's text is kept after the run ends: one hour.
pub const TEXT_KEPT: Duration = Duration::from_secs(3600);

/// The most text the object keeps of one run, in bytes: the oldest pieces go first past it
/// (counted in [`TextDeltas::dropped`]).
pub const MAX_KEPT_TEXT: usize = 256 * 1024;

/// The most one post carries, in bytes of text.
const MAX_POST: usize = 64 * 1024;

/// How many attempts of the run's turns the object remembers.
const MAX_ATTEMPTS_KEPT: usize = 1024;

/// The state's keys.
const DELTAS: &str = "deltas";
const ATTEMPTS: &str = "attempts";
const DROPPED: &str = "dropped";
const NEXT: &str = "next";

/// One piece of a durable run's text as the model streamed it (W10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextDelta {
    /// Its place among the run's pieces, from 1: what [`crate::DurableClient::text`] reads
    /// after.
    pub index: u64,
    /// The run's turn whose model reply it is part of, from 1.
    pub turn: usize,
    /// The attempt of that turn's request that streamed it, from 1: a request taken again
    /// after its worker died streams its text again under the next number.
    pub attempt: u32,
    /// The text.
    pub text: String,
}

/// The pieces of a run's text after a point, as [`crate::DurableClient::text`] reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextDeltas {
    /// The pieces, in the order they streamed.
    pub deltas: Vec<TextDelta>,
    /// What to read after next time: the last piece's index, or the index given when none
    /// is new.
    pub next: u64,
    /// How many of the run's oldest pieces were dropped to keep [`MAX_KEPT_TEXT`].
    pub dropped: u64,
}

impl TextDeltas {
    /// The text of each turn these pieces hold, from its highest attempt, in turn order: what
    /// the model said as far as it streamed (a turn's text is whole once the turn ended).
    pub fn text(&self) -> Vec<(usize, String)> {
        let mut turns: Vec<(usize, u32, String)> = Vec::new();
        for delta in &self.deltas {
            match turns.iter_mut().find(|(turn, ..)| *turn == delta.turn) {
                Some((_, attempt, text)) if delta.attempt > *attempt => {
                    *attempt = delta.attempt;
                    text.clone_from(&delta.text);
                }
                Some((_, attempt, text)) if delta.attempt == *attempt => {
                    text.push_str(&delta.text);
                }
                Some(_) => {}
                None => turns.push((delta.turn, delta.attempt, delta.text.clone())),
            }
        }
        turns.sort_by_key(|(turn, ..)| *turn);
        turns
            .into_iter()
            .map(|(turn, _, text)| (turn, text))
            .collect()
    }
}

/// What the worker posts: pieces of text of one attempt.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Posted {
    /// The attempt's token: unique to one run of the workflow's handler in one process.
    attempt: String,
    /// Each piece's turn and text, in the order they streamed.
    pieces: Vec<(usize, String)>,
}

/// What a reader asks for.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Read {
    /// The index to read after.
    #[serde(default)]
    pub(crate) after: u64,
}

/// The Restate virtual object that keeps a durable run's text (W10), keyed by
/// `{workflow}~{run id}`. [`crate::Serving`] binds it when an agent posts its text
/// ([`crate::AgentRun::text_to`]); bind it beside the workflows of an endpoint built by hand.
#[derive(Debug, Default, Clone, Copy)]
pub struct AgentRunText;

#[restate_sdk::object]
impl AgentRunText {
    /// Keeps the posted pieces, each numbered, the attempt of its turn found from its token.
    #[handler]
    async fn append(
        &self,
        ctx: ObjectContext<'_>,
        posted: Json<Posted>,
    ) -> Result<(), HandlerError> {
        let Json(posted) = posted;
        let mut deltas = state_of::<Vec<TextDelta>>(&ctx, DELTAS).await?;
        let mut attempts = state_of::<Vec<(usize, String)>>(&ctx, ATTEMPTS).await?;
        let mut dropped = state_of::<u64>(&ctx, DROPPED).await?;
        let mut next = state_of::<u64>(&ctx, NEXT).await?;
        for (turn, text) in posted.pieces {
            next += 1;
            let attempt = attempt_of(&mut attempts, turn, &posted.attempt);
            deltas.push(TextDelta {
                index: next,
                turn,
                attempt,
                text,
            });
        }
        let mut kept: usize = deltas.iter().map(|d| d.text.len()).sum();
        let mut first = 0;
        while kept > MAX_KEPT_TEXT && first < deltas.len() {
            kept -= deltas[first].text.len();
            first += 1;
        }
        deltas.drain(..first);
        dropped += first as u64;
        ctx.set(DELTAS, Json(deltas));
        ctx.set(ATTEMPTS, Json(attempts));
        ctx.set(DROPPED, Json(dropped));
        ctx.set(NEXT, Json(next));
        Ok(())
    }

    /// The pieces after the one asked, with what to read after next time.
    #[handler]
    async fn read(
        &self,
        ctx: SharedObjectContext<'_>,
        read: Json<Read>,
    ) -> Result<Json<TextDeltas>, HandlerError> {
        let Json(read) = read;
        let deltas = ctx.get::<Json<Vec<TextDelta>>>(DELTAS).await?;
        let dropped = ctx.get::<Json<u64>>(DROPPED).await?;
        let deltas: Vec<TextDelta> = deltas
            .map(|Json(deltas)| deltas)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| d.index > read.after)
            .collect();
        Ok(Json(TextDeltas {
            next: deltas.last().map_or(read.after, |d| d.index),
            deltas,
            dropped: dropped.map_or(0, |Json(n)| n),
        }))
    }

    /// Forgets the run's text; sent by the run when it ends, [`TEXT_KEPT`] later.
    #[handler]
    async fn clear(&self, ctx: ObjectContext<'_>) -> Result<(), HandlerError> {
        ctx.clear_all();
        Ok(())
    }
}

/// The value of the state's `key`, or its default.
async fn state_of<T: serde::de::DeserializeOwned + Default + Serialize + Send + 'static>(
    ctx: &ObjectContext<'_>,
    key: &str,
) -> Result<T, HandlerError> {
    Ok(ctx
        .get::<Json<T>>(key)
        .await?
        .map(|Json(value)| value)
        .unwrap_or_default())
}

/// The attempt number of `token` for `turn`: one more than the tokens seen for the turn
/// before it, the first time it is seen.
fn attempt_of(attempts: &mut Vec<(usize, String)>, turn: usize, token: &str) -> u32 {
    let mut number = 0u32;
    for (seen_turn, seen) in attempts.iter() {
        if *seen_turn == turn {
            number = number.saturating_add(1);
            if seen == token {
                return number;
            }
        }
    }
    attempts.push((turn, token.to_owned()));
    if attempts.len() > MAX_ATTEMPTS_KEPT {
        attempts.remove(0);
    }
    number.saturating_add(1)
}

/// The object's key for the run `run_id` of the workflow `workflow`: `~` is in neither.
pub(crate) fn key(workflow: &str, run_id: &str) -> String {
    format!("{workflow}~{run_id}")
}

/// A token unique to one attempt of a run in this process, and across processes.
fn attempt_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Where a worker posts the text of its runs: the ingress at `ingress`.
#[derive(Debug, Clone)]
pub(crate) struct TextPoster {
    client: reqwest::Client,
    ingress: String,
}

impl TextPoster {
    pub(crate) fn new(ingress: &str) -> Self {
        Self {
            client: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(5))
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap_or_default(),
            ingress: ingress.trim_end_matches('/').to_owned(),
        }
    }

    /// An observer of one attempt of the run `run_id` of `workflow`, for
    /// [`tool_runtime::RunRequest::on_event`]: it hands each piece of text to a task that
    /// posts them in order, which ends once the observer is dropped and its pieces are sent.
    pub(crate) fn observer(
        &self,
        workflow: &str,
        run_id: &str,
    ) -> impl Fn(&RunEvent) + Send + Sync + 'static {
        let (sender, receiver) = mpsc::unbounded_channel::<(usize, String)>();
        let url = format!(
            "{}/{TEXT_OBJECT}/{}/append/send",
            self.ingress,
            key(workflow, run_id)
        );
        tokio::spawn(post_all(
            self.client.clone(),
            url,
            attempt_token(),
            receiver,
        ));
        move |event| {
            if let RunEvent::TextDelta { turn, text } = event {
                // The task ends only after the observer: nothing to do if it is gone.
                let _ = sender.send((*turn, text.clone()));
            }
        }
    }
}

/// Posts the pieces `receiver` gives, each post what has arrived since the last one.
async fn post_all(
    client: reqwest::Client,
    url: String,
    attempt: String,
    mut receiver: mpsc::UnboundedReceiver<(usize, String)>,
) {
    while let Some(first) = receiver.recv().await {
        let mut size = first.1.len();
        let mut pieces = vec![first];
        while size < MAX_POST {
            let Ok(piece) = receiver.try_recv() else {
                break;
            };
            size += piece.1.len();
            pieces.push(piece);
        }
        let posted = Posted {
            attempt: attempt.clone(),
            pieces,
        };
        let sent = client.post(&url).json(&posted).send().await;
        match sent.map(|response| response.status()) {
            Ok(status) if status.is_success() => {}
            Ok(status) => {
                tracing::debug!(%status, "the ingress refused a run's text; it is not kept");
            }
            Err(e) => {
                tracing::debug!(error = %e, "a run's text could not be posted; it is not kept")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(index: u64, turn: usize, attempt: u32, text: &str) -> TextDelta {
        TextDelta {
            index,
            turn,
            attempt,
            text: text.to_owned(),
        }
    }

    #[test]
    fn w10_a_turns_text_is_its_highest_attempts() {
        let deltas = TextDeltas {
            deltas: vec![
                delta(1, 1, 1, "Let me "),
                delta(2, 2, 1, "Do"),
                delta(3, 1, 1, "look."),
                delta(4, 2, 2, "Done. "),
                delta(5, 2, 1, "ne"),
                delta(6, 2, 2, "All well."),
            ],
            next: 6,
            dropped: 0,
        };
        assert_eq!(
            deltas.text(),
            [
                (1, "Let me look.".to_owned()),
                (2, "Done. All well.".to_owned())
            ]
        );
    }

    #[test]
    fn w10_attempts_are_numbered_per_turn_in_the_order_their_tokens_came() {
        let mut attempts = Vec::new();
        assert_eq!(attempt_of(&mut attempts, 1, "a"), 1);
        assert_eq!(attempt_of(&mut attempts, 2, "b"), 1);
        assert_eq!(attempt_of(&mut attempts, 2, "c"), 2);
        assert_eq!(attempt_of(&mut attempts, 2, "b"), 1);
        assert_eq!(attempt_of(&mut attempts, 1, "a"), 1);
        assert_eq!(attempt_of(&mut attempts, 2, "d"), 3);
    }
}
