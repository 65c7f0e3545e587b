//! The JSON pointer a [`ParseCx`] tracks while a value is parsed. Its innermost levels that
//! are declared fields (their keys escaped already) or array indices wait unwritten: entering
//! and leaving them costs a store and a count, and they are written out into the pointer's
//! text only when something needs it (a violation, a key entered, the path read). The
//! pointer is the same either way.

use std::sync::OnceLock;

use crate::violation::ParseCx;

/// How many levels may wait unwritten; past them, levels are written out as they are entered.
const PENDING: usize = 8;

/// One level of a pointer, not written out yet.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Level {
    /// A declared field: its key, escaped as a pointer segment already (`~` as `~0`, `/` as
    /// `~1`).
    Field(&'static str),
    /// An array item.
    Index(usize),
}

impl Default for Level {
    fn default() -> Self {
        Level::Index(0)
    }
}

impl Level {
    /// Appends this level's segment (without its `/`) to `out`.
    pub(crate) fn write(self, out: &mut String) {
        match self {
            Level::Field(segment) => out.push_str(segment),
            Level::Index(index) => push_index(out, index),
        }
    }
}

/// Appends the decimal digits of `index` to `out`, without going through `fmt`.
pub(crate) fn push_index(out: &mut String, index: usize) {
    if index < 10 {
        // A single digit.
        #[allow(clippy::cast_possible_truncation)]
        out.push(char::from(b'0' + index as u8));
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = index;
    loop {
        at -= 1;
        // A remainder by 10 is a digit.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        digits[at] = b'0' + digit;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let text = std::str::from_utf8(&digits[at..]).unwrap_or_default();
    out.push_str(text);
}

/// The levels entered and not written out, outermost first.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    levels: [Level; PENDING],
    len: usize,
}

impl Pending {
    /// How many levels wait.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `level` as the innermost; returns `false` (and adds nothing) when full.
    #[inline]
    pub(crate) fn push(&mut self, level: Level) -> bool {
        match self.levels.get_mut(self.len) {
            Some(slot) => {
                *slot = level;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Drops the innermost level; returns whether there was one.
    #[inline]
    pub(crate) fn pop(&mut self) -> bool {
        match self.len.checked_sub(1) {
            Some(len) => {
                self.len = len;
                true
            }
            None => false,
        }
    }

    /// The waiting level `at` (0 for the outermost).
    pub(crate) fn get(&self, at: usize) -> Option<Level> {
        self.levels.get(..self.len)?.get(at).copied()
    }

    /// Drops every waiting level.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// `prefix` followed by every waiting level: the whole pointer.
    pub(crate) fn render(&self, prefix: &str) -> String {
        let mut out = String::with_capacity(prefix.len() + 16 * self.len);
        out.push_str(prefix);
        for level in self.levels.iter().take(self.len) {
            out.push('/');
            level.write(&mut out);
        }
        out
    }
}

impl ParseCx {
    /// Enters the object member `key`.
    pub fn enter_key(&mut self, key: &str) {
        self.write_pending();
        self.open_segment();
        if !key.bytes().any(|b| b == b'~' || b == b'/') {
            self.path.push_str(key);
            return;
        }
        for c in key.chars() {
            match c {
                '~' => self.path.push_str("~0"),
                '/' => self.path.push_str("~1"),
                c => self.path.push(c),
            }
        }
    }

    /// Enters the array item `index`.
    #[inline]
    pub fn enter_index(&mut self, index: usize) {
        self.enter_level(Level::Index(index));
    }

    /// Enters the declared field whose key, escaped as a JSON pointer segment already, is
    /// `segment`: the level is written out only if something needs the pointer.
    #[inline]
    pub(crate) fn enter_field(&mut self, segment: &'static str) {
        self.enter_level(Level::Field(segment));
    }

    /// Enters `level`, pending while there is room.
    #[inline]
    fn enter_level(&mut self, level: Level) {
        if self.rendered.get().is_some() {
            self.forget_rendered();
        }
        if self.pending.push(level) {
            self.depth += 1;
        } else {
            self.enter_written(level);
        }
    }

    /// Enters `level` written out, with the pending ones before it: past the pending room.
    #[cold]
    #[inline(never)]
    fn enter_written(&mut self, level: Level) {
        self.write_pending();
        self.open_segment();
        level.write(&mut self.path);
    }

    /// Drops the pointer [`ParseCx::path`] made: a level was entered or left since.
    #[cold]
    #[inline(never)]
    fn forget_rendered(&mut self) {
        self.rendered = OnceLock::new();
    }

    /// Writes the pending levels out into `path`.
    pub(super) fn write_pending(&mut self) {
        if self.pending.len() == 0 {
            return;
        }
        if self.path.capacity() == 0 {
            // Room for most pointers at once (the path is empty: it has no capacity).
            self.path = String::with_capacity(64);
        }
        let len = self.pending.len();
        self.depth -= len;
        for at in 0..len {
            if let Some(level) = self.pending.get(at) {
                self.open_segment();
                level.write(&mut self.path);
            }
        }
        self.pending.clear();
    }

    /// Leaves the member or item last entered.
    #[inline]
    pub fn leave(&mut self) {
        if self.rendered.get().is_some() {
            self.forget_rendered();
        }
        if self.pending.pop() {
            self.depth -= 1;
            return;
        }
        self.leave_written();
    }

    /// Leaves the level last entered, written out in `path`.
    fn leave_written(&mut self) {
        let Some(depth) = self.depth.checked_sub(1) else {
            return;
        };
        self.depth = depth;
        let start = match self.starts.get(depth) {
            Some(&start) if start != u16::MAX => usize::from(start),
            _ => {
                let bytes = self.path.as_bytes();
                bytes.iter().rposition(|&b| b == b'/').unwrap_or(0)
            }
        };
        self.path.truncate(start);
    }

    /// Enters the member whose key, escaped as a JSON pointer segment already (`~` as `~0`,
    /// `/` as `~1`), is `segment`: what generated code passes for a declared field.
    #[doc(hidden)]
    pub fn enter_segment(&mut self, segment: &str) {
        self.write_pending();
        self.open_segment();
        self.path.push_str(segment);
    }

    /// Starts a segment: records where it starts and writes its `/`.
    fn open_segment(&mut self) {
        if let Some(start) = self.starts.get_mut(self.depth) {
            *start = u16::try_from(self.path.len()).unwrap_or(u16::MAX);
        }
        self.depth += 1;
        self.path.push('/');
    }

    /// The JSON pointer of the value being parsed.
    pub fn path(&self) -> &str {
        if self.pending.len() == 0 {
            return &self.path;
        }
        self.rendered
            .get_or_init(|| self.pending.render(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `index` as `fmt` writes it.
    fn formatted(index: usize) -> String {
        format!("{index}")
    }

    #[test]
    fn indices_are_written_as_fmt_writes_them() {
        for index in (0..2000).chain([9_999, 10_000, 123_456_789, usize::MAX - 1, usize::MAX]) {
            let mut out = String::from("x");
            push_index(&mut out, index);
            assert_eq!(out, format!("x{}", formatted(index)));
            let mut out = String::new();
            Level::Index(index).write(&mut out);
            assert_eq!(out, formatted(index));
        }
    }

    /// A parse context can still be shared and sent across threads.
    #[test]
    fn the_context_stays_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<ParseCx>();
    }

    #[test]
    fn pending_levels_fill_up_and_drain_in_order() {
        let mut pending = Pending::default();
        for i in 0..PENDING {
            assert!(pending.push(Level::Index(i)));
        }
        assert!(!pending.push(Level::Field("x")));
        assert_eq!(pending.render("/a"), "/a/0/1/2/3/4/5/6/7");
        assert!(pending.pop());
        let mut out = String::new();
        for at in 0..pending.len() {
            pending.get(at).expect("a level").write(&mut out);
        }
        assert_eq!(out, "0123456");
        assert!(pending.get(7).is_none());
        pending.clear();
        assert_eq!(pending.len(), 0);
        assert!(!pending.pop());
    }

    /// One step of a parse's walk over a pointer.
    #[derive(Debug, Clone)]
    enum Step {
        Key(String),
        Index(usize),
        Field(&'static str),
        Segment(&'static str),
        Leave,
        Violate,
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        const FIELDS: [&str; 3] = ["a", "b~1c", "t~0"];
        prop_oneof![
            "[ab/~é]{0,3}".prop_map(Step::Key),
            (0usize..1200).prop_map(Step::Index),
            (0..FIELDS.len()).prop_map(|i| Step::Field(FIELDS[i])),
            (0..FIELDS.len()).prop_map(|i| Step::Segment(FIELDS[i])),
            Just(Step::Leave),
            Just(Step::Leave),
            Just(Step::Violate),
        ]
    }

    proptest::proptest! {
        /// Pending levels change no pointer: after every step, the path read and the path a
        /// violation records are the segments entered, each escaped, as written out at once.
        #[test]
        fn pending_levels_give_the_pointer_written_out_at_once(
            steps in proptest::collection::vec(step(), 0..120),
        ) {
            let mut cx = ParseCx::new();
            let mut model: Vec<String> = Vec::new();
            let mut recorded = Vec::new();
            for step in steps {
                match step {
                    Step::Key(key) => {
                        cx.enter_key(&key);
                        model.push(key.replace('~', "~0").replace('/', "~1"));
                    }
                    Step::Index(index) => {
                        cx.enter_index(index);
                        model.push(index.to_string());
                    }
                    Step::Field(segment) => {
                        cx.enter_field(segment);
                        model.push(segment.to_owned());
                    }
                    Step::Segment(segment) => {
                        cx.enter_segment(segment);
                        model.push(segment.to_owned());
                    }
                    Step::Leave => {
                        cx.leave();
                        model.pop();
                    }
                    Step::Violate => {
                        cx.violate(crate::violation::Rule::Type, "x");
                        recorded.push(model.iter().map(|s| format!("/{s}")).collect::<String>());
                    }
                }
                let expected: String = model.iter().map(|s| format!("/{s}")).collect();
                proptest::prop_assert_eq!(cx.path(), expected.as_str());
            }
            let mut kept: Vec<String> =
                cx.violations().iter().map(|v| v.path.clone()).collect();
            kept.sort();
            recorded.sort();
            if kept.len() < crate::violation::MAX_VIOLATIONS {
                proptest::prop_assert_eq!(kept, recorded);
            }
        }
    }
}
