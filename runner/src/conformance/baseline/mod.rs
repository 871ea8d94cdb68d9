//! The expected-failures baseline of one client: strict both ways, and per check.
//!
//! An entry names trials and the failing checks it expects in them, with a reason:
//!
//! ```text
//! auth/pkce-s256@* [AUTH-20]: the SDK sends no code_challenge_method
//! calls/a@stdio calls/b@* [CONTRACT-8, "the list is asked again"]: why, in a line
//! era/modern/x@* [unimplemented]: the library speaks only the handshake era
//! streams/y@https [HTTP-12]: flaky: why it changes between runs
//! ```
//!
//! Trials are named as `--list` prints them; `*` in a name stands for any run of characters
//! (`case@*` is every transport and revision of a case). Inside the brackets, a check is
//! named by the requirement id it cites; by its name in double quotes (JSON string syntax),
//! or the first words of its name, where a trial has several checks citing one id; or as
//! `unimplemented`: the trial grades `unimplemented` (its client answered `unsupported_op`),
//! whichever of its checks fail.
//!
//! [`judge`] decides a trial: it meets its baseline when exactly the named checks fail. A
//! failing check no entry names fails the run ("new failure in a baselined trial"); a named
//! check that ran and now holds is stale, and fails the run too. An entry that names no check
//! of any trial it matches is reported once the run is over ([`Baseline::unused`]).
//!
//! A known-flaky mark (`: flaky: <reason>`) says the named checks may change from one run to
//! the next: under `--retries N` a trial whose attempts differ only in marked checks is
//! reported flaky without failing the run; a mark is never stale.
//!
//! The format before checks were named, `<trial>: <reason>`, still loads: such an entry
//! expects the whole trial to fail (any of its checks), and loading warns. [`write`] turns a
//! run into the per-check form, keeping each reason, so `--baseline F --write-baseline F`
//! migrates a file.

pub mod judge;
pub mod write;

use std::path::Path;

pub use judge::{Judgement, judge};
pub use write::{header, one_line, render};

/// A parsed baseline, its entries in file order.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// Every entry, expected failures and known-flaky marks alike.
    pub entries: Vec<Entry>,
}

/// One line of a baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The line it is on (1-based).
    pub line: usize,
    /// The trial names or patterns it applies to.
    pub trials: Vec<String>,
    /// The checks it expects to fail; `None` for an old per-trial entry (any check).
    pub checks: Option<Vec<Key>>,
    /// Why (for a flaky mark, why it changes between runs).
    pub reason: String,
    /// A known-flaky mark rather than an expected failure.
    pub flaky: bool,
    /// The comment lines right above it (no blank line between), kept by a rewrite that
    /// keeps the entry.
    pub comment: Vec<String>,
}

/// How an entry names a check.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// Every check citing this requirement id.
    Requirement(String),
    /// The check with this name, or whose name starts with it and a space (`"step 1
    /// (call_tool)"` names `step 1 (call_tool) succeeds with {...}`).
    Name(String),
    /// The trial grades `unimplemented`: any of its checks.
    Unimplemented,
}

impl Key {
    /// The key as a baseline writes it.
    pub fn written(&self) -> String {
        match self {
            Key::Requirement(id) => id.clone(),
            Key::Name(name) => serde_json::to_string(name).unwrap_or_default(),
            Key::Unimplemented => "unimplemented".to_owned(),
        }
    }

    /// Whether this key names the check `name` citing `requirement_id`.
    pub fn names(&self, name: &str, requirement_id: &str) -> bool {
        match self {
            Key::Requirement(id) => id == requirement_id,
            Key::Name(n) => name
                .strip_prefix(n.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')),
            Key::Unimplemented => false,
        }
    }
}

impl Entry {
    /// Whether the entry applies to the trial called `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.trials.iter().any(|p| glob_matches(p, name))
    }

    /// ``line N, `<trials> [<keys>]` ``, for messages.
    pub fn describe(&self) -> String {
        let keys = match &self.checks {
            None => String::new(),
            Some(keys) => format!(
                " [{}]",
                keys.iter().map(Key::written).collect::<Vec<_>>().join(", ")
            ),
        };
        format!("line {}, `{}{keys}`", self.line, self.trials.join(" "))
    }
}

impl Baseline {
    /// Reads and validates a baseline file against the names of every known trial.
    pub fn load(path: &Path, known: &[String]) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the baseline: {e}", path.display()))?;
        Baseline::parse(&text, known).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses baseline text; errors name the line and what was expected.
    pub fn parse(text: &str, known: &[String]) -> Result<Baseline, String> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut comment: Vec<String> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() {
                comment.clear();
                continue;
            }
            if line.starts_with('#') {
                comment.push(line.to_owned());
                continue;
            }
            let mut entry =
                parse_entry(line, line_no).map_err(|e| format!("line {line_no}: {e}"))?;
            entry.comment = std::mem::take(&mut comment);
            for pattern in &entry.trials {
                if !known.iter().any(|k| glob_matches(pattern, k)) {
                    return Err(format!(
                        "line {line_no}: `{pattern}` names no trial; expected a name `cargo xtask conformance --list` prints, `*` standing for any run of characters"
                    ));
                }
            }
            if let Some(earlier) = entries.iter().find(|e| overlaps(e, &entry)) {
                return Err(format!(
                    "line {line_no}: `{}` is listed twice (also line {})",
                    entry.trials.join(" "),
                    earlier.line
                ));
            }
            entries.push(entry);
        }
        Ok(Baseline { entries })
    }

    /// The expected failures in the old per-trial form, which expect a whole trial to fail
    /// (a known-flaky mark of a whole trial is not one: it expects the trial to pass).
    pub fn per_trial(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|e| e.checks.is_none() && !e.flaky)
    }

    /// The expected-failure entries that apply to a trial.
    pub fn expected(&self, trial: &str) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| !e.flaky && e.applies_to(trial))
            .collect()
    }

    /// The known-flaky marks that apply to a trial.
    pub fn flaky(&self, trial: &str) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.flaky && e.applies_to(trial))
            .collect()
    }

    /// The expected-failure entries that, over the trials of a finished run, named no check
    /// at all, counted only where every trial an entry matches ran. `named` holds the lines
    /// of the entries that named a check of some trial (see [`Judgement::named`]).
    pub fn unused<'a>(
        &'a self,
        known: &[String],
        ran: &std::collections::HashSet<&str>,
        named: &std::collections::HashSet<usize>,
    ) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|e| !e.flaky && !named.contains(&e.line))
            .filter(|e| {
                let mut matched = known.iter().filter(|k| e.applies_to(k)).peekable();
                matched.peek().is_some() && matched.all(|k| ran.contains(k.as_str()))
            })
            .collect()
    }
}

/// Two entries of the same kind that name the same trials and a common check (or either
/// names every check): one would shadow the other.
fn overlaps(a: &Entry, b: &Entry) -> bool {
    if a.flaky != b.flaky || a.trials != b.trials {
        return false;
    }
    match (&a.checks, &b.checks) {
        (Some(x), Some(y)) => x.iter().any(|k| y.contains(k)),
        _ => true,
    }
}

/// One entry from one non-blank, non-comment line.
fn parse_entry(line: &str, line_no: usize) -> Result<Entry, String> {
    let colon = line.find(':');
    let bracket = line.find('[').filter(|b| colon.is_none_or(|c| *b < c));
    let (trials, checks, rest) = match bracket {
        Some(open) => {
            let (keys, after) = parse_keys(&line[open + 1..])?;
            let rest = after.trim_start().strip_prefix(':').ok_or_else(|| {
                format!("expected `:` and a reason after the checks' `]`, found {after:?}")
            })?;
            (&line[..open], Some(keys), rest)
        }
        None => match colon {
            Some(c) => (&line[..c], None, &line[c + 1..]),
            None => {
                return Err(format!(
                    "expected `<trial> [<requirement id>]: <reason>`, found {line:?}"
                ));
            }
        },
    };
    let trials: Vec<String> = trials.split_whitespace().map(str::to_owned).collect();
    if trials.is_empty() {
        return Err(
            "names no trial before the checks; expected `<trial> [<requirement id>]: <reason>`"
                .to_owned(),
        );
    }
    let shown = trials.join(" ");
    let rest = rest.trim();
    if rest.is_empty() {
        return Err(format!(
            "`{shown}` has no reason; expected the requirement the client misses after the colon"
        ));
    }
    let (flaky, reason) = match flaky_reason(rest) {
        None => (false, rest.to_owned()),
        Some(Some(why)) => (true, why.to_owned()),
        Some(None) => {
            return Err(format!(
                "`{shown}` is marked flaky without a reason; expected `{shown}: flaky: <why it changes grade between runs>`"
            ));
        }
    };
    Ok(Entry {
        line: line_no,
        trials,
        checks,
        reason,
        flaky,
        comment: Vec::new(),
    })
}

/// The keys inside `[...]` (`text` starts after the `[`), and what follows the `]`.
fn parse_keys(text: &str) -> Result<(Vec<Key>, &str), String> {
    let mut keys = Vec::new();
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            if keys.is_empty() {
                return Err("`[]` names no check; expected a requirement id, a quoted check name or `unimplemented`".to_owned());
            }
            return Ok((keys, after));
        }
        let (key, after) = match rest.starts_with('"') {
            true => {
                let mut stream =
                    serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
                let name = match stream.next() {
                    Some(Ok(serde_json::Value::String(s))) => s,
                    _ => {
                        return Err(format!(
                            "a check name in quotes is not a closed JSON string: {rest:?}"
                        ));
                    }
                };
                (Key::Name(name), &rest[stream.byte_offset()..])
            }
            false => {
                let end = rest
                    .find([',', ']'])
                    .ok_or_else(|| format!("expected `]` after the checks, found {rest:?}"))?;
                let word = rest[..end].trim();
                let key = match word {
                    "unimplemented" => Key::Unimplemented,
                    id if is_requirement_id(id) => Key::Requirement(id.to_owned()),
                    other => {
                        return Err(format!(
                            "`{other}` is not a check; expected a requirement id (as `AUTH-20`), a check name in double quotes, or `unimplemented`"
                        ));
                    }
                };
                (key, &rest[end..])
            }
        };
        keys.push(key);
        rest = after.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else if !rest.starts_with(']') {
            return Err(format!("expected `,` or `]` after a check, found {rest:?}"));
        }
    }
}

/// The shape of a catalogue id: letters, digits, `-`, `_` and `.`, starting with a letter.
fn is_requirement_id(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Whether an entry's text marks it known-flaky: `None` for an expected failure,
/// `Some(Some(reason))` for `flaky: <reason>`, `Some(None)` for a `flaky` mark with no reason.
fn flaky_reason(text: &str) -> Option<Option<&str>> {
    let rest = text.strip_prefix("flaky")?;
    if rest.trim().is_empty() {
        return Some(None);
    }
    let why = rest.trim_start().strip_prefix(':')?.trim();
    Some((!why.is_empty()).then_some(why))
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests;
