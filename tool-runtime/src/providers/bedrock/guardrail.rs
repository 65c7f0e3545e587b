//! What a Bedrock guardrail did, read from an answer's `trace.guardrail` (Converse's answer,
//! ConverseStream's `metadata` event): when the answer stopped with `guardrail_intervened`,
//! the driver names the intervention in a warning of the run's trace, with the guardrail's
//! own reason (`actionReason`) and each policy finding it acted on (V3).

use serde_json::Value;

/// The stop reason of an answer a guardrail stopped.
pub(super) const INTERVENED: &str = "guardrail_intervened";

/// The most findings a summary lists.
const MOST_FINDINGS: usize = 8;

/// A summary of `trace` (a `GuardrailTraceAssessment`): its `actionReason`, then each finding
/// of the input and output assessments whose `action` is not `NONE`, as
/// `topicPolicy.topics: Maintenance BLOCKED`. `None` when the trace says nothing of the kind.
pub(super) fn summary(trace: &Value) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    if let Some(reason) = trace.get("actionReason").and_then(Value::as_str) {
        lines.push(reason.to_owned());
    }
    let inputs = trace
        .get("inputAssessment")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|map| map.values());
    let outputs = trace
        .get("outputAssessments")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|map| map.values())
        .filter_map(Value::as_array)
        .flatten();
    for assessment in inputs.chain(outputs) {
        findings(assessment, &mut lines);
    }
    lines.dedup();
    lines.truncate(MOST_FINDINGS);
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// The findings of one `GuardrailAssessment`: under each policy, each list of findings, each
/// finding with an `action` other than `NONE`, named by its `name`, `type` or `match`.
fn findings(assessment: &Value, lines: &mut Vec<String>) {
    let Some(policies) = assessment.as_object() else {
        return;
    };
    for (policy, body) in policies {
        let Some(lists) = body.as_object() else {
            continue;
        };
        for (list, items) in lists {
            for item in items.as_array().into_iter().flatten() {
                let action = item.get("action").and_then(Value::as_str);
                let Some(action) = action.filter(|a| *a != "NONE") else {
                    continue;
                };
                let name = ["name", "type", "match"]
                    .iter()
                    .find_map(|k| item.get(*k).and_then(Value::as_str))
                    .unwrap_or("?");
                lines.push(format!("{policy}.{list}: {name} {action}"));
            }
        }
    }
}

/// Names a guardrail's intervention in the run's trace: a warning with the summary of its
/// `trace` (or only the stop reason when the answer carried no trace).
pub(super) fn report(trace: Option<&Value>, request_id: Option<&str>) {
    let found = trace.and_then(summary);
    tracing::warn!(
        stop_reason = INTERVENED,
        guardrail = found
            .as_deref()
            .unwrap_or("(no trace: enable it with `guardrailConfig.trace`)"),
        request_id = request_id.unwrap_or_default(),
        "Bedrock's guardrail intervened in the answer"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // V3: the summary names the guardrail's reason and the findings it acted on, in the
    // service model's `GuardrailTraceAssessment` shape; a trace of another shape is no summary,
    // never a panic.
    #[test]
    fn v3_a_guardrail_intervention_is_named() {
        let trace = json!({
            "actionReason": "Guardrail blocked.",
            "inputAssessment": {"gr-1": {
                "topicPolicy": {"topics": [
                    {"name": "Maintenance", "type": "DENY", "action": "BLOCKED"}]},
                "wordPolicy": {"customWords": [{"match": "ok", "action": "NONE"}]},
            }},
            "outputAssessments": {"gr-1": [{
                "contentPolicy": {"filters": [
                    {"type": "VIOLENCE", "confidence": "HIGH", "action": "BLOCKED"}]},
                "invocationMetrics": {"guardrailProcessingLatency": 12},
            }]},
        });
        assert_eq!(
            summary(&trace).as_deref(),
            Some(
                "Guardrail blocked.; topicPolicy.topics: Maintenance BLOCKED; \
                 contentPolicy.filters: VIOLENCE BLOCKED"
            )
        );
        for garbage in [json!(null), json!([1]), json!({"inputAssessment": 3})] {
            assert_eq!(summary(&garbage), None);
        }
    }
}
