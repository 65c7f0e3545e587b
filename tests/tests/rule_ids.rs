//! Rule ids stay resolvable: every rule id that the code, the tests and the docs cite (`A4`,
//! `S2`, the ends of a range such as `P1–P3`) is defined in `docs/contract.md`, where a rule
//! is defined by a line that starts with its id in bold (`**A4**`).
//!
//! Where ids are looked for: every `.rs` file under `tool-core/`, `tool-macros/`,
//! `tool-runtime/`, `tests/`, `examples/` and any other member of the workspace (wherever it
//! sits in them, `target` directories left out), and every `.md` file at the workspace root,
//! in `docs/` and in the guide's chapters, this file aside (it quotes ids as examples). In Rust sources only comments
//! and string literals are read: an identifier in code that looks like an id (a type named
//! after a nesting level, say) cites nothing.
//!
//! A second pass lists the implemented rules (those not marked `(planned)`) that no test
//! cites. It prints its list (`cargo test --test rule_ids -- --nocapture`) and fails nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The letters that begin a rule id, one per group of the contract.
const LETTERS: &str = "NDSAEPRVHLKOT";

/// Words shaped like a rule id that are something else. Each needs its reason.
const NOT_RULES: &[&str] = &[
    // The JavaScript engine of Node, named where the pattern tests compare with it.
    "V8",
];

/// The directories whose `.rs` files are scanned, relative to the workspace root, besides the
/// workspace's members.
const SOURCE_DIRS: &[&str] = &[
    "tool-core",
    "tool-macros",
    "tool-runtime",
    "tests",
    "examples",
];

/// The directories whose `.md` files (not their subdirectories') are scanned.
const DOC_DIRS: &[&str] = &[".", "docs", "tool-runtime/src/guide", "tool-durable/src"];

/// A rule id: its group letter and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RuleId {
    group: char,
    number: u32,
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.group, self.number)
    }
}

/// Where an id is cited: a path relative to the workspace root, and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    path: String,
    line: usize,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path, self.line)
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace root")
        .to_path_buf()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every `.rs` file under `dir`, `target` and hidden directories left out. A directory that
/// does not exist (moved away) has none.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The `.md` files directly in `dir`.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    out.extend(paths);
}

/// The prose of a Rust source: its comments and string literals, with everything else (code,
/// char literals, lifetimes) blanked out. Line breaks are kept, so lines keep their numbers.
fn rust_prose(source: &str) -> String {
    let s: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char, out: &mut String| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            // A line comment, doc comments included: kept up to the line break.
            while i < s.len() && s[i] != '\n' {
                out.push(s[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // A block comment, which may nest.
            let mut depth = 0usize;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("/*");
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("*/");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
        } else if c == '"' {
            // A string (or byte or C string: its prefix letter was blanked as code).
            out.push(' ');
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' && i + 1 < s.len() {
                    out.push(s[i]);
                    i += 1;
                }
                out.push(s[i]);
                i += 1;
            }
            if i < s.len() {
                out.push(' ');
                i += 1;
            }
        } else if let Some(hashes) = raw_string_start(&s, i) {
            // A raw string `r#"…"#`: kept up to the quote followed by as many `#`.
            for _ in 0..hashes + 2 {
                out.push(' ');
            }
            i += hashes + 2;
            while i < s.len() {
                if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                out.push(s[i]);
                i += 1;
            }
        } else if c == '\'' {
            // A char literal (`'"'`, `'\''`) is blanked whole; a lifetime only its quote.
            let end = if next == Some('\\') {
                (i + 3..s.len().min(i + 12)).find(|&k| s[k] == '\'')
            } else if s.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            let end = end.unwrap_or(i);
            for &ch in &s[i..=end] {
                blank(ch, &mut out);
            }
            i = end + 1;
        } else {
            blank(c, &mut out);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string starting at `i` (`r"`, `r#"`, `br"`, `cr#"`), if one does.
fn raw_string_start(s: &[char], i: usize) -> Option<usize> {
    if s[i] != 'r' {
        return None;
    }
    let before = |k: usize| k.checked_sub(1).and_then(|k| s.get(k)).copied();
    let starts_token = match before(i) {
        Some('b' | 'c') => !before(i - 1).is_some_and(is_word),
        Some(p) => !is_word(p),
        None => true,
    };
    if !starts_token {
        return None;
    }
    let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
    (s.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// The rule id that starts at `chars[i]`, and where it ends, if a whole word starts there.
fn id_at(chars: &[char], i: usize) -> Option<(RuleId, usize)> {
    let group = chars[i];
    if !LETTERS.contains(group) || (i > 0 && is_word(chars[i - 1])) {
        return None;
    }
    let digits = chars[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let end = i + 1 + digits;
    if !(1..=2).contains(&digits) || chars.get(end).is_some_and(|&c| is_word(c)) {
        return None;
    }
    // Rules are numbered from 1: `A0`, `E01` are something else (a hex byte, say).
    if chars[i + 1] == '0' {
        return None;
    }
    // A hex escape in a string: `\x{A1}`, `\u{E9}`.
    if i >= 2 && chars[i - 1] == '{' && matches!(chars[i - 2], 'x' | 'u') {
        return None;
    }
    // A time of day: `T10:00`.
    if chars.get(end) == Some(&':') && chars.get(end + 1).is_some_and(char::is_ascii_digit) {
        return None;
    }
    let word: String = chars[i..end].iter().collect();
    if NOT_RULES.contains(&word.as_str()) {
        return None;
    }
    let number = word[1..].parse().ok()?;
    Some((RuleId { group, number }, end))
}

/// The ids cited on one line, a range `A4–A7` (en dash or hyphen) giving every id in it.
fn ids_in_line(line: &str) -> Vec<RuleId> {
    let chars: Vec<char> = line.chars().collect();
    let mut ids = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let Some((id, end)) = id_at(&chars, i) else {
            i += 1;
            continue;
        };
        ids.push(id);
        i = end;
        if matches!(chars.get(end), Some('–' | '-'))
            && end + 1 < chars.len()
            && let Some((last, after)) = id_at(&chars, end + 1)
            && last.group == id.group
            && last.number > id.number
        {
            ids.extend((id.number + 1..=last.number).map(|number| RuleId {
                group: id.group,
                number,
            }));
            i = after;
        }
    }
    ids
}

/// A scanned file: where it is, whether it is a test, and its text to search.
struct Scanned {
    site: String,
    is_test: bool,
    prose: String,
}

/// The members listed in the workspace's `Cargo.toml` (`members = ["…", …]`), so that a crate
/// added to the workspace is scanned too.
fn workspace_members(root: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let list = &manifest[start..];
    let list = match (list.find('['), list.find(']')) {
        (Some(open), Some(close)) if open < close => &list[open + 1..close],
        _ => return Vec::new(),
    };
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty() && !m.contains('*'))
        .collect()
}

fn scanned_files(root: &Path) -> Vec<Scanned> {
    let mut dirs: BTreeSet<String> = SOURCE_DIRS.iter().map(|d| (*d).to_owned()).collect();
    dirs.extend(workspace_members(root));
    let mut rust = Vec::new();
    for dir in &dirs {
        rust_files(&root.join(dir), &mut rust);
    }
    let mut docs = Vec::new();
    for dir in DOC_DIRS {
        markdown_files(&root.join(dir), &mut docs);
    }
    let relative = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut files = Vec::new();
    // This file quotes ids as examples: it cites none.
    let this_file = Path::new(file!()).file_name();
    for path in rust {
        if path.file_name() == this_file {
            continue;
        }
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let site = relative(&path);
        let is_test = site.split('/').any(|part| part == "tests")
            || site.ends_with("tests.rs")
            || text.contains("#[test]")
            || text.contains("#[tokio::test");
        files.push(Scanned {
            site,
            is_test,
            prose: rust_prose(&text),
        });
    }
    for path in docs {
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        files.push(Scanned {
            site: relative(&path),
            is_test: false,
            prose: text,
        });
    }
    files
}

/// Every cited id, with the sites that cite it.
fn citations(files: &[Scanned]) -> BTreeMap<RuleId, Vec<(Site, bool)>> {
    let mut cited: BTreeMap<RuleId, Vec<(Site, bool)>> = BTreeMap::new();
    for file in files {
        for (n, line) in file.prose.lines().enumerate() {
            for id in ids_in_line(line) {
                let site = Site {
                    path: file.site.clone(),
                    line: n + 1,
                };
                cited.entry(id).or_default().push((site, file.is_test));
            }
        }
    }
    cited
}

/// A rule as `docs/contract.md` defines it.
struct Definition {
    line: usize,
    planned: bool,
}

/// The rules of the contract: each line that starts with `**<id>**`, planned when its text
/// goes on with `(planned)`.
fn definitions(contract: &str) -> (BTreeMap<RuleId, Definition>, Vec<String>) {
    let mut defined = BTreeMap::new();
    let mut problems = Vec::new();
    for (n, line) in contract.lines().enumerate() {
        let Some(rest) = line.strip_prefix("**") else {
            continue;
        };
        let Some((head, text)) = rest.split_once("**") else {
            continue;
        };
        let chars: Vec<char> = head.chars().collect();
        let Some((id, end)) = (!chars.is_empty()).then(|| id_at(&chars, 0)).flatten() else {
            continue;
        };
        if end != chars.len() {
            continue;
        }
        let definition = Definition {
            line: n + 1,
            planned: text.trim_start().starts_with("(planned)"),
        };
        if let Some(earlier) = defined.insert(id, definition) {
            problems.push(format!(
                "docs/contract.md:{}: {id} is defined again (first at line {})",
                n + 1,
                earlier.line
            ));
        }
    }
    (defined, problems)
}

#[test]
fn scanner_tells_ids_from_lookalikes() {
    let ids = |line: &str| -> Vec<String> {
        ids_in_line(line)
            .into_iter()
            .map(|id| id.to_string())
            .collect()
    };
    assert_eq!(ids("re-checked (A4), see S2."), ["A4", "S2"]);
    assert_eq!(
        ids("A4–A7 and P1-P3"),
        ["A4", "A5", "A6", "A7", "P1", "P2", "P3"]
    );
    assert_eq!(ids("**R5** The model's arguments"), ["R5"]);
    assert!(ids("error[E0308]: mismatched types").is_empty());
    assert!(ids("V8_DEVIATIONS T1x xT1 T1_ _A4 0xA4 A0 \\x{A1} T10:00:00Z V8").is_empty());
    assert!(ids("A123 E1a").is_empty());

    let prose = rust_prose(
        "nest!(L1, L2); // S2\nlet c = '\"'; let s = \"A4\";\nfn f<'a>(x: &'a str) /* E3 */ {}\nlet r = r#\"P1 \"q\"\"#; type T1 = u8;",
    );
    let found: Vec<Vec<String>> = prose.lines().map(ids).collect();
    assert_eq!(found, [vec!["S2"], vec!["A4"], vec!["E3"], vec!["P1"]]);
}

#[test]
fn every_cited_rule_id_is_defined_in_the_contract() {
    let root = workspace_root();
    let contract_path = root.join("docs").join("contract.md");
    let contract = fs::read_to_string(&contract_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", contract_path.display()));
    let (defined, mut problems) = definitions(&contract);
    assert!(
        !defined.is_empty(),
        "docs/contract.md defines no rule (a rule starts a line with its id in bold: `**A4**`)"
    );

    let files = scanned_files(&root);
    let cited = citations(&files);
    for (id, sites) in &cited {
        if !defined.contains_key(id) {
            for (site, _) in sites {
                problems.push(format!(
                    "{site}: {id} is cited but not defined in docs/contract.md"
                ));
            }
        }
    }
    problems.sort();
    assert!(
        problems.is_empty(),
        "{} problem(s) with rule ids:\n{}\nDefine the rule in docs/contract.md (a line starting \
         with `**<id>**`), or fix the citation; a word that only looks like an id goes in \
         NOT_RULES, with its reason.",
        problems.len(),
        problems.join("\n")
    );

    let outside: BTreeMap<RuleId, usize> = cited
        .iter()
        .map(|(id, sites)| {
            let n = sites
                .iter()
                .filter(|(site, _)| site.path != "docs/contract.md")
                .count();
            (*id, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    println!(
        "{} rules defined in docs/contract.md; outside it, {} distinct ids are cited at {} sites \
         in {} scanned files, and all resolve",
        defined.len(),
        outside.len(),
        outside.values().sum::<usize>(),
        files.len(),
    );

    // Implemented rules that no test cites: reported, not failed.
    let untested: BTreeSet<String> = defined
        .iter()
        .filter(|(_, d)| !d.planned)
        .filter(|(id, _)| {
            !cited
                .get(id)
                .is_some_and(|sites| sites.iter().any(|(_, is_test)| *is_test))
        })
        .map(|(id, _)| id.to_string())
        .collect();
    if untested.is_empty() {
        println!("every implemented rule is cited by a test");
    } else {
        println!(
            "implemented rules that no test cites: {}",
            untested.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
}
