//! [`SearchIndex`]: a BM25 index over the names, titles and descriptions of an agent's
//! deferred tools (Q1), built once when the agent is built and searched in the process. A
//! search touches only the postings of the query's words, so its cost follows the query and
//! the tools that share its words, not the size of the catalog (Q2).

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;
use tool_core::Tool;

/// BM25's saturation of a word's frequency.
const K1: f32 = 1.2;
/// BM25's weight of a document's length.
const B: f32 = 0.75;
/// The words of a query past which the rest is ignored: a query's cost stays bounded.
pub(crate) const MAX_QUERY_WORDS: usize = 32;
/// How many times a word of a tool's name counts: a name says most about a tool.
const NAME_WEIGHT: u32 = 3;
/// How many times a word of a tool's title counts.
const TITLE_WEIGHT: u32 = 2;

/// One indexed tool.
#[derive(Debug)]
pub(crate) struct Doc {
    /// The tool's position in the agent.
    pub(crate) tool: usize,
    /// Its name and description, as a search returns them.
    pub(crate) name: Box<str>,
    pub(crate) description: Box<str>,
    /// Its weighted number of words.
    len: u32,
}

/// The index.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    /// Each word's postings: the document and the word's weighted count in it.
    postings: HashMap<Box<str>, Vec<(u32, u32)>, FxBuildHasher>,
    docs: Vec<Doc>,
    average_len: f32,
}

/// The words of `text`: runs of letters and digits, lowercased (`get-weather` and
/// `get_weather` are `get`, `weather`).
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

impl SearchIndex {
    /// The index of `tools` at the positions `indexed` gives.
    pub(crate) fn build(tools: &[Tool], indexed: impl Iterator<Item = usize>) -> Self {
        let mut index = SearchIndex::default();
        let mut total: u64 = 0;
        for tool_at in indexed {
            let Some(tool) = tools.get(tool_at) else {
                continue;
            };
            let Ok(doc) = u32::try_from(index.docs.len()) else {
                break;
            };
            let mut counts: HashMap<String, u32, FxBuildHasher> = HashMap::default();
            let title = tool.annotations().title.as_deref().unwrap_or_default();
            let fields = [
                (tool.name(), NAME_WEIGHT),
                (title, TITLE_WEIGHT),
                (tool.description(), 1),
            ];
            let mut len = 0u32;
            for (text, weight) in fields {
                for word in words(text) {
                    *counts.entry(word).or_default() += weight;
                    len = len.saturating_add(weight);
                }
            }
            for (word, count) in counts {
                (index.postings.entry(word.into_boxed_str()).or_default()).push((doc, count));
            }
            total += u64::from(len);
            index.docs.push(Doc {
                tool: tool_at,
                name: tool.name().into(),
                description: tool.description().into(),
                len,
            });
        }
        if !index.docs.is_empty() {
            index.average_len = total as f32 / index.docs.len() as f32;
        }
        index
    }

    /// The `limit` tools that best match `query`, best first, among those `allowed` admits
    /// by position (a tool it refuses is never returned and never displaces one it admits).
    /// Ties go to the tool declared first.
    pub(crate) fn search(
        &self,
        query: &str,
        allowed: impl Fn(usize) -> bool,
        limit: usize,
    ) -> Vec<&Doc> {
        let total = self.docs.len() as f32;
        let mut scores: HashMap<u32, f32, FxBuildHasher> = HashMap::default();
        let mut seen: Vec<String> = Vec::new();
        for word in words(query).take(MAX_QUERY_WORDS) {
            if seen.contains(&word) {
                continue;
            }
            let Some(postings) = self.postings.get(word.as_str()) else {
                seen.push(word);
                continue;
            };
            let found = postings.len() as f32;
            let idf = (1.0 + (total - found + 0.5) / (found + 0.5)).ln();
            for &(doc, count) in postings {
                let Some(entry) = self.docs.get(doc as usize) else {
                    continue;
                };
                let tf = count as f32;
                let norm = K1 * (1.0 - B + B * entry.len as f32 / self.average_len.max(1.0));
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
            seen.push(word);
        }
        let mut ranked: Vec<(f32, &Doc)> = scores
            .into_iter()
            .filter_map(|(doc, score)| self.docs.get(doc as usize).map(|d| (score, d)))
            .filter(|(_, doc)| allowed(doc.tool))
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.tool.cmp(&b.1.tool)));
        ranked.truncate(limit);
        ranked.into_iter().map(|(_, doc)| doc).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        Tool::builder(name, description)
            .handler(|_ctx, _args: serde_json::Value| async { Ok::<_, tool_core::BoxError>("ok") })
            .build()
    }

    #[test]
    fn q1_search_ranks_by_name_and_description_and_skips_refused_tools() {
        let tools = vec![
            tool("get-weather", "Finds the weather forecast of a city."),
            tool("book-room", "Books a meeting room."),
            tool("weather-alerts", "Lists the weather alerts of a region."),
        ];
        let index = SearchIndex::build(&tools, 0..tools.len());
        let at = |found: Vec<&Doc>| found.iter().map(|doc| doc.tool).collect::<Vec<_>>();
        assert_eq!(
            at(index.search("weather forecast", |_| true, 5)),
            vec![0, 2]
        );
        assert_eq!(at(index.search("weather forecast", |t| t != 0, 5)), vec![2]);
        assert!(index.search("", |_| true, 5).is_empty());
        assert!(index.search("unknown words", |_| true, 5).is_empty());
        assert_eq!(at(index.search("room", |_| true, 1)), vec![1]);
    }
}
