//! The requirements catalogue (`scenarios/requirements.json`): every requirement a check can
//! cite, once, with its level, its text and where it is written. Cases cite entries by id;
//! a check's level is always its requirement's, so one requirement grades the same
//! everywhere.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Level, Transport};

/// One requirement of the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// The id cases cite, e.g. `PROF-TOOLS-3` (unique in the catalogue).
    pub id: String,
    /// How binding it is: `must`, `should`, `profile` or `advisory`.
    pub level: Level,
    /// The one transport the requirement is about, when it is about one (`stdio` or
    /// `https`); left out, it concerns both. `cargo xtask requirements` counts a
    /// requirement as covered once checks cite it on every transport it concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// The requirement sentence, in the words of its source or a close paraphrase.
    pub text: String,
    /// Where it comes from: a seed 000 section (`seed 000 § Tools`) or a specification path
    /// (`docs/specification/2025-11-25/basic/lifecycle.mdx § Initialization`).
    pub source: String,
    /// The protocol revisions whose text states it, when not every revision's does (e.g.
    /// `["2025-11-25", "2026-07-28"]` for a sentence 2025-11-25 added). A check citing it is
    /// not made in a trial whose `initialize` settled on another revision; left out, it
    /// applies to every revision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<String>,
    /// Why no check can judge this requirement from what a client shows (its wire, its
    /// outcome lines, its processes), e.g. a rule that binds the server, or a decision made
    /// inside the client that no message reveals. Such an entry counts as accounted for in
    /// `cargo xtask requirements`, listed apart with this reason; no check may cite it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_observable: Option<String>,
}

impl Requirement {
    /// Whether the requirement's text is that of protocol revision `version`.
    pub fn applies_to(&self, version: &str) -> bool {
        self.revisions.is_empty() || self.revisions.iter().any(|r| r == version)
    }

    /// Whether the catalogue marks it as not observable (see `not_observable`).
    pub fn is_observable(&self) -> bool {
        self.not_observable.is_none()
    }
}

/// The catalogue, by id.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    entries: Vec<Requirement>,
    by_id: HashMap<String, usize>,
}

impl Catalogue {
    /// Builds the catalogue; an empty or duplicate id, or an empty `not_observable` reason, is
    /// an error naming the entry's index.
    pub fn new(entries: Vec<Requirement>) -> Result<Catalogue, (String, String)> {
        let mut by_id = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            if entry.id.trim().is_empty() {
                return Err((format!("[{i}].id"), "expected a non-empty id".into()));
            }
            if entry
                .not_observable
                .as_deref()
                .is_some_and(|r| r.trim().is_empty())
            {
                return Err((
                    format!("[{i}].not_observable"),
                    "expected the reason no check can observe it (a non-empty sentence), or no field".into(),
                ));
            }
            if let Some(first) = by_id.insert(entry.id.clone(), i) {
                return Err((
                    format!("[{i}].id"),
                    format!(
                        "the id {:?} is already used by entry [{first}]; expected each id once",
                        entry.id
                    ),
                ));
            }
        }
        Ok(Catalogue { entries, by_id })
    }

    /// The entry with this id.
    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[Requirement] {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirement_applies_to_the_revisions_it_names() {
        let mut r = Requirement {
            id: "X-1".into(),
            level: Level::Must,
            transport: None,
            text: String::new(),
            source: String::new(),
            revisions: Vec::new(),
            not_observable: None,
        };
        assert!(r.applies_to("2025-03-26"));
        r.revisions = vec!["2025-11-25".into(), "2026-07-28".into()];
        assert!(r.applies_to("2025-11-25") && !r.applies_to("2025-03-26"));
    }
}
