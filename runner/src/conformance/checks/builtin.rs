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

/// Where an always-on check is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In every trial (for an id the code picks at run time, such as JSON-02 or JSON-03 by
    /// the trial's era: in every trial where it is the one picked).
    Every,
    /// In stdio trials.
    Stdio,
    /// In Streamable HTTP trials.
    Http,
    /// Only when the trial calls for it (a batch was sent, a token was given, a process
    /// escaped, the stdio server never started).
    When,
}

/// Every always-on check: its name, the requirement it cites, and where it is made (for
/// `cargo xtask requirements`; a test keeps this list in step with the code).
pub const ALWAYS_ON: &[(&str, &str, Scope)] = &[
    (
        "the client finished within the trial deadline",
        "CONTRACT-3",
        Scope::Every,
    ),
    (
        "the client exited with status 0 after carrying out the plan",
        "CONTRACT-1",
        Scope::Every,
    ),
    (
        "the client printed one outcome line per step, in order",
        "CONTRACT-2",
        Scope::Every,
    ),
    (
        "the client never printed its bearer token",
        "CONTRACT-6",
        Scope::When,
    ),
    (
        "the client never printed a secret of its authorization (token, code, refresh token, verifier, client secret)",
        "CONTRACT-6",
        Scope::When,
    ),
    (
        "the client never connected to its redirect URI (the headless authorization step)",
        "CONTRACT-21",
        Scope::When,
    ),
    (
        "the server process was not left running after the client exited",
        "PROF-STDIO-1",
        Scope::Stdio,
    ),
    (
        "the client left no process running outside its process group",
        "CONTRACT-5",
        Scope::When,
    ),
    (
        "the client launched the stdio server it was given",
        "CONTRACT-4",
        Scope::When,
    ),
    (
        "the client reached the server it was given",
        "CONTRACT-12",
        Scope::When,
    ),
    (
        "every line or POST body the client sent is one JSON-RPC 2.0 message (before 2025-06-18, or a batch of them)",
        "STDIO-02",
        Scope::Stdio,
    ),
    (
        "every line or POST body the client sent is one JSON-RPC 2.0 message (before 2025-06-18, or a batch of them)",
        "HTTP-01",
        Scope::Http,
    ),
    (
        "initialize is never part of a JSON-RPC batch",
        "JSON-10",
        Scope::When,
    ),
    (
        "request ids are strings or integers",
        "JSON-01",
        Scope::Every,
    ),
    (
        "request ids are never reused in a session",
        "JSON-02",
        Scope::Every,
    ),
    (
        "request ids are never reused in a session",
        "JSON-03",
        Scope::Every,
    ),
    ("notifications carry no id", "JSON-05", Scope::Every),
    (
        "every request and notification the client sent is valid against its revision's published schema",
        "SCHEMA-01",
        Scope::Every,
    ),
    (
        "every response the client sent to a server request is valid against its revision's published schema",
        "SCHEMA-02",
        Scope::Every,
    ),
    (
        "every POST accepts both application/json and text/event-stream",
        "HTTP-02",
        Scope::Http,
    ),
    (
        "every POST body is sent as application/json",
        "PROF-ERA-2",
        Scope::Http,
    ),
    (
        "every HTTP request carries the bearer token the client was given",
        "AUTH-08",
        Scope::When,
    ),
    (
        "every HTTP request other than initialize carries the session id the server issued",
        "HTTP-06",
        Scope::Http,
    ),
    (
        "every HTTP request after initialize carries MCP-Protocol-Version (from 2025-06-18)",
        "HTTP-09a",
        Scope::Http,
    ),
    (
        "MCP-Protocol-Version names the version negotiated at initialize",
        "HTTP-09b",
        Scope::Http,
    ),
    (
        "a traceparent or tracestate in _meta follows W3C Trace Context (2026-07-28)",
        "TRACE-01",
        Scope::When,
    ),
    (
        "a baggage in _meta follows W3C Baggage (2026-07-28)",
        "TRACE-02",
        Scope::When,
    ),
    (
        "the client exported a span per request it sent, with its method and id",
        "ADV-OTEL-1",
        Scope::When,
    ),
    (
        "each request's span is named and attributed by the OpenTelemetry MCP conventions",
        "ADV-OTEL-2",
        Scope::When,
    ),
    (
        "the trace context a request carries in _meta is its span's",
        "ADV-OTEL-3",
        Scope::When,
    ),
    (
        "a failed request's span carries error.type and the error code",
        "ADV-OTEL-4",
        Scope::When,
    ),
    (
        "nothing the client exported to the OTLP receiver holds a secret of the trial",
        "CONTRACT-33",
        Scope::When,
    ),
];

/// The catalogue entry `id`, if the compiled-in catalogue has it.
pub fn requirement(id: &str) -> Option<&'static Requirement> {
    catalogue().get(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id an always-on check cites, as written in `mod.rs`, `rules.rs`, `schema.rs` and
    /// `trace.rs` and `otel.rs`.
    fn cited() -> Vec<String> {
        let sources = [
            include_str!("mod.rs"),
            include_str!("rules.rs"),
            include_str!("schema.rs"),
            include_str!("trace.rs"),
            include_str!("otel.rs"),
        ];
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
    fn the_list_of_always_on_checks_names_every_id_the_code_cites() {
        let listed: std::collections::BTreeSet<&str> = ALWAYS_ON.iter().map(|c| c.1).collect();
        let cited: std::collections::BTreeSet<String> = cited().into_iter().collect();
        let cited: std::collections::BTreeSet<&str> = cited.iter().map(String::as_str).collect();
        assert_eq!(listed, cited);
        let sources = [
            include_str!("mod.rs"),
            include_str!("rules.rs"),
            include_str!("schema.rs"),
            include_str!("trace.rs"),
            include_str!("otel.rs"),
        ];
        for (name, id, _) in ALWAYS_ON {
            let quoted = format!("\"{name}\"");
            assert!(
                sources.iter().any(|s| s.contains(&quoted)),
                "{id}: no check in mod.rs, rules.rs or schema.rs is named {quoted}"
            );
        }
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
            let r = requirement(&id);
            assert!(r.is_some(), "{id} is not in scenarios/requirements.json");
            assert!(
                r.is_some_and(|r| r.is_observable()),
                "{id} is marked not_observable, yet an always-on check cites it"
            );
        }
    }
}
