//! The requirements the always-on checks cite, read from the catalogue compiled into the
//! harness (`scenarios/requirements.json`): the checks are code, so the text they answer to
//! ships with them, and one requirement still has one level everywhere.

use std::sync::OnceLock;

use mcp_harness_scenarios::model::{Catalogue, Requirement};

const CATALOGUE: &str = include_str!("../../../../scenarios/requirements.json");

fn catalogue() -> &'static Catalogue {
    static PARSED: OnceLock<Catalogue> = OnceLock::new();
    PARSED.get_or_init(|| {
        serde_json::from_str::<Vec<Requirement>>(CATALOGUE)
            .ok()
            .and_then(|entries| Catalogue::new(entries).ok())
            .unwrap_or_default()
    })
}

/// The catalogue entry `id`, if the compiled-in catalogue has it.
pub(super) fn requirement(id: &str) -> Option<&'static Requirement> {
    catalogue().get(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id an always-on check cites, as written in `mod.rs` and `rules.rs`.
    fn cited() -> Vec<String> {
        let sources = [include_str!("mod.rs"), include_str!("rules.rs")];
        let mut ids = Vec::new();
        for text in sources {
            for piece in text.split('"').skip(1).step_by(2) {
                let looks_like_id = piece.contains('-')
                    && piece
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "-ab".contains(c))
                    && piece.starts_with(|c: char| c.is_ascii_uppercase());
                if looks_like_id {
                    ids.push(piece.to_owned());
                }
            }
        }
        ids
    }

    #[test]
    fn the_compiled_in_catalogue_parses() {
        assert!(!catalogue().entries().is_empty());
    }

    #[test]
    fn every_id_an_always_on_check_cites_is_in_the_catalogue() {
        let ids = cited();
        assert!(ids.len() >= 15, "found only {ids:?}");
        for id in ids {
            assert!(
                requirement(&id).is_some(),
                "{id} is not in scenarios/requirements.json"
            );
        }
    }
}
