//! [`SearchIndex`]: a BM25 index over the names, titles and descriptions of an agent's
//! deferred tools (Q1), built once when the agent is built and searched in the process. A
//! search touches only the postings of the query's words, so its cost follows the query and
//! the tools that share its words, not the size of the catalog, and it holds a cursor per
//! word and the best matches so far, nothing per tool (Q2).

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

/// A word's inverse document frequency, and each document holding it with the word's BM25
/// weight there.
type Postings = (f32, Vec<(u32, f32)>);

/// The index.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    /// Each word's inverse document frequency and postings: the document and the word's
    /// BM25 weight in it (its frequency, saturated and normalized by the document's length,
    /// computed once here so that a search only multiplies and adds).
    postings: HashMap<Box<str>, Postings, FxBuildHasher>,
    docs: Vec<Doc>,
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
                let entry = index.postings.entry(word.into_boxed_str()).or_default();
                entry.1.push((doc, count as f32));
            }
            total += u64::from(len);
            index.docs.push(Doc {
                tool: tool_at,
                name: tool.name().into(),
                description: tool.description().into(),
                len,
            });
        }
        index.weigh(total);
        index
    }

    /// Turns each posting's count into its BM25 weight, and each word's document count into
    /// its inverse document frequency, once `total` words were indexed.
    fn weigh(&mut self, total: u64) {
        let docs = self.docs.len() as f32;
        let average = (total as f32 / docs.max(1.0)).max(1.0);
        for (idf, postings) in self.postings.values_mut() {
            let found = postings.len() as f32;
            *idf = (1.0 + (docs - found + 0.5) / (found + 0.5)).ln();
            for (doc, tf) in postings.iter_mut() {
                let len = self
                    .docs
                    .get(*doc as usize)
                    .map_or(average, |d| d.len as f32);
                let norm = K1 * (1.0 - B + B * len / average);
                *tf = *tf * (K1 + 1.0) / (*tf + norm);
            }
        }
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
        // Document at a time: the query's postings (each in document order) are walked
        // together, a document's score summed from the words it holds, in the query's order,
        // and offered to the bounded list at once. What a search holds is a cursor per word
        // of the query and the list: nothing grows with the catalog (Q2).
        let mut lists: Vec<(f32, &[(u32, f32)])> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for word in words(query).take(MAX_QUERY_WORDS) {
            if seen.contains(&word) {
                continue;
            }
            if let Some((idf, postings)) = self.postings.get(word.as_str()) {
                lists.push((*idf, postings.as_slice()));
            }
            seen.push(word);
        }
        let mut best = Best::new(limit);
        // The next document some word holds: the least at the lists' heads, found again in
        // the pass that sums the current one.
        let mut next = (lists.iter())
            .filter_map(|(_, rest)| rest.first())
            .map(|p| p.0)
            .min();
        while let Some(doc) = next {
            let mut score = 0.0f32;
            next = None;
            for (idf, rest) in &mut lists {
                if let Some((&(at, weight), after)) = rest.split_first()
                    && at == doc
                {
                    score += *idf * weight;
                    *rest = after;
                }
                if let Some(&(at, _)) = rest.first() {
                    next = Some(next.map_or(at, |least: u32| least.min(at)));
                }
            }
            if let Some(entry) = self.docs.get(doc as usize)
                && best.admits(score, entry.tool)
                && allowed(entry.tool)
            {
                best.insert(score, entry);
            }
        }
        best.into_docs()
    }
}

/// The best `limit` documents seen so far, best first: a candidate below the worst of a
/// full list costs one comparison.
struct Best<'a> {
    limit: usize,
    ranked: Vec<(f32, &'a Doc)>,
}

impl<'a> Best<'a> {
    /// An empty list of at most `limit` documents.
    fn new(limit: usize) -> Self {
        Self {
            limit,
            ranked: Vec::with_capacity(limit.min(64) + 1),
        }
    }

    /// Whether a document of `score` at position `tool` would enter the list (ties go to the
    /// tool declared first).
    fn admits(&self, score: f32, tool: usize) -> bool {
        if self.limit == 0 {
            return false;
        }
        match self.ranked.last() {
            Some(&(worst, doc)) if self.ranked.len() >= self.limit => {
                score > worst || (score == worst && tool < doc.tool)
            }
            _ => true,
        }
    }

    /// Puts `doc` at its rank, dropping the worst past `limit`.
    fn insert(&mut self, score: f32, doc: &'a Doc) {
        let at = self
            .ranked
            .partition_point(|&(s, d)| s > score || (s == score && d.tool < doc.tool));
        self.ranked.insert(at, (score, doc));
        self.ranked.truncate(self.limit);
    }

    /// The documents, best first.
    fn into_docs(self) -> Vec<&'a Doc> {
        self.ranked.into_iter().map(|(_, doc)| doc).collect()
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

    /// The scores of every indexed tool for `query`, computed document by document from the
    /// tools' text with BM25's formula (no postings, no bounded list), ranked by a full sort:
    /// what the index must return.
    fn ranked_by_full_scan(
        tools: &[Tool],
        indexed: &[usize],
        query: &str,
        allowed: impl Fn(usize) -> bool,
        limit: usize,
    ) -> Vec<usize> {
        let counts: Vec<(HashMap<String, u32>, u32)> = (indexed.iter())
            .map(|&at| {
                let tool = &tools[at];
                let mut counts = HashMap::new();
                let mut len = 0;
                let title = tool.annotations().title.as_deref().unwrap_or_default();
                let fields = [(tool.name(), NAME_WEIGHT), (title, TITLE_WEIGHT)];
                for (text, weight) in fields.into_iter().chain([(tool.description(), 1)]) {
                    for word in words(text) {
                        *counts.entry(word).or_default() += weight;
                        len += weight;
                    }
                }
                (counts, len)
            })
            .collect();
        let docs = counts.len() as f32;
        let total: u32 = counts.iter().map(|(_, len)| len).sum();
        let average = (total as f32 / docs.max(1.0)).max(1.0);
        let mut query_words: Vec<String> = Vec::new();
        for word in words(query).take(MAX_QUERY_WORDS) {
            if !query_words.contains(&word) {
                query_words.push(word);
            }
        }
        let idfs: Vec<f32> = (query_words.iter())
            .map(|word| {
                let found = counts.iter().filter(|(c, _)| c.contains_key(word)).count() as f32;
                (1.0 + (docs - found + 0.5) / (found + 0.5)).ln()
            })
            .collect();
        let mut scored: Vec<(f32, usize)> = Vec::new();
        for (doc, (doc_counts, len)) in counts.iter().enumerate() {
            let mut score = 0.0f32;
            for (word, idf) in query_words.iter().zip(&idfs) {
                let Some(&count) = doc_counts.get(word) else {
                    continue;
                };
                let tf = count as f32;
                let norm = K1 * (1.0 - B + B * *len as f32 / average);
                score += idf * (tf * (K1 + 1.0) / (tf + norm));
            }
            if score > 0.0 && allowed(indexed[doc]) {
                scored.push((score, indexed[doc]));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, at)| at).collect()
    }

    #[test]
    fn q1_q2_the_index_ranks_as_a_full_scan_of_the_catalog_does() {
        // 300 tools in groups of five sharing a word, with words shared by every tool, by
        // every other, and by a few: ties, rare and common words; only some tools indexed.
        let tools: Vec<Tool> = (0..300)
            .map(|i| {
                let extra = ["", " weather", " weather city", " room"][i % 4];
                let parity = if i % 2 == 0 { "even" } else { "odd" };
                tool(
                    &format!("tool-{i:03}"),
                    &format!("Returns its input. Group g{}. {parity}{extra}.", i / 5),
                )
            })
            .collect();
        let indexed: Vec<usize> = (0..tools.len()).filter(|at| at % 7 != 3).collect();
        let index = SearchIndex::build(&tools, indexed.iter().copied());
        let at = |found: Vec<&Doc>| found.iter().map(|doc| doc.tool).collect::<Vec<_>>();
        let queries = [
            "g7",
            "returns its input",
            "returns its input g12 weather",
            "even weather city",
            "odd odd room g3 g4",
            "g8 g5",
            "tool 042",
            "nothing matches",
        ];
        for query in queries {
            for limit in [0, 1, 3, 5, 20, 400] {
                let everything = ranked_by_full_scan(&tools, &indexed, query, |_| true, limit);
                assert_eq!(
                    at(index.search(query, |_| true, limit)),
                    everything,
                    "{query}"
                );
                let refuse = |t: usize| !t.is_multiple_of(3);
                let admitted = ranked_by_full_scan(&tools, &indexed, query, refuse, limit);
                assert_eq!(at(index.search(query, refuse, limit)), admitted, "{query}");
                assert!(everything.len() <= limit);
            }
        }
        // Ties go to the tool declared first: tools 0 and 4 have the same words but their
        // names', and score alike for their group's word.
        assert_eq!(at(index.search("g0", |_| true, 2)), vec![0, 4]);
        assert_eq!(at(index.search("g0", |t| t != 0, 1)), vec![4]);
        // A tie met after the list is full still goes to the tool declared first: tools 40
        // (group 8) and 28 (group 5) score alike, and the first declared wins whichever the
        // search meets first.
        assert_eq!(at(index.search("g8 g5", |_| true, 1)), vec![28]);
    }
}
