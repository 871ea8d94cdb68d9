//! The expected-failures baseline of one client: strict both ways. A trial that fails (or
//! is unimplemented) without an entry fails the run; an entry whose trial now passes fails
//! as stale; an entry naming no trial at all is an error before anything runs.
//!
//! Format, one entry a line: `<case-id>@<transport>: <reason>`, where the reason names the
//! requirement the client misses. Blank lines and lines starting with `#` are ignored.

use std::collections::BTreeMap;
use std::path::Path;

/// A parsed baseline: trial name → (line number, reason).
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    entries: BTreeMap<String, (usize, String)>,
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
        let mut entries = BTreeMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, reason)) = line.split_once(':') else {
                return Err(format!(
                    "line {line_no}: expected `<case-id>@<transport>: <reason>`, found {line:?}"
                ));
            };
            let (name, reason) = (name.trim(), reason.trim());
            if reason.is_empty() {
                return Err(format!(
                    "line {line_no}: `{name}` has no reason; expected the requirement the client misses after the colon"
                ));
            }
            if !known.iter().any(|k| k == name) {
                return Err(format!(
                    "line {line_no}: `{name}` names no trial; expected one of the names `cargo xtask conformance --list` prints"
                ));
            }
            if let Some((first, _)) = entries.insert(name.to_owned(), (line_no, reason.to_owned()))
            {
                return Err(format!(
                    "line {line_no}: `{name}` is listed twice (also line {first})"
                ));
            }
        }
        Ok(Baseline { entries })
    }

    /// The entry for a trial: its line number and reason.
    pub fn get(&self, trial: &str) -> Option<&(usize, String)> {
        self.entries.get(trial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        vec!["a/b@stdio".into(), "c@stdio".into()]
    }

    #[test]
    fn parses_entries_and_comments() {
        let b = Baseline::parse(
            "# comment\n\na/b@stdio: misses seed 000 § Tools\n",
            &known(),
        )
        .unwrap();
        assert_eq!(b.get("a/b@stdio").unwrap().0, 3);
        assert!(b.get("c@stdio").is_none());
    }

    #[test]
    fn bad_entries_name_their_line() {
        let e = Baseline::parse("c@stdio\n", &known()).unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        let e = Baseline::parse("c@stdio:\n", &known()).unwrap_err();
        assert!(e.contains("no reason"), "{e}");
        let e = Baseline::parse("x@stdio: r\n", &known()).unwrap_err();
        assert!(e.contains("names no trial"), "{e}");
        let e = Baseline::parse("c@stdio: r\nc@stdio: r\n", &known()).unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }
}
