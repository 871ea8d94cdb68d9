//! Every message the client sent, judged against the published JSON Schema of the revision in
//! force for it (always on; the schemas and what each message is judged against:
//! [`spec_schema`](super::spec_schema)).
//!
//! - **Which revision.** The one [`Versions`] follows for the base rules: per server
//!   process, the version an `initialize` offered, then the one its result settled on; a
//!   modern request's own `_meta` version; before any, the version the trial handed over.
//!   A message at a version the harness has no schema for is not judged here.
//! - **What is judged.** Requests and notifications (SCHEMA-01) against the definition of
//!   their method and the JSON-RPC envelope; responses to server requests (SCHEMA-02): a
//!   result against the result definition of the request it answers (found by id among the
//!   requests the server sent that process), an error against the JSON-RPC error definition.
//!   `_meta` is judged wherever the schema defines it.
//! - **What is not.** A response at 2026-07-28, where a client answers no server request
//!   (JSON-14 judges one that does). A method the revision's schema does not define (a method of another
//!   revision, a made-up one): other checks judge whether it may be sent at all. Lines that
//!   are not JSON-RPC messages: the base rules judge those. Messages past a trial's first
//!   [`MESSAGES_JUDGED`] (a flood is the hostile cases' business).
//! - **Where the schema and the text differ**, the text's level wins: [`EXEMPT`] lists each
//!   case, with its reason, and the catalogue entries say so.

use serde_json::Value;

use mcp_harness_scenarios::model::era;
use mcp_harness_scenarios::transcript::{Event, Record};

use super::Checker;
use super::rules::Versions;
use super::spec_schema::{self, Definition, Envelope, Leaf, Revision};
use crate::conformance::trial::TrialRun;

/// How many schema errors one message shows, and how many failing messages a check shows.
const ERRORS_SHOWN: usize = 3;
const MESSAGES_SHOWN: usize = 2;
/// How many messages a trial has judged at most: a client flooding its server is the hostile
/// cases' business, and a trial's own messages number in the tens.
const MESSAGES_JUDGED: usize = 10_000;

/// A place where the schema refuses what the text allows: errors there do not fail the check.
pub(super) struct Exemption {
    /// A short name, for people and the tests.
    pub(super) name: &'static str,
    /// The revisions it applies to.
    pub(super) revisions: &'static [&'static str],
    /// The definitions judged (`ElicitResult`, `JSONRPCError`, …); empty: any.
    pub(super) definitions: &'static [&'static str],
    /// The instance path, `*` standing for any one segment; `None`: anywhere.
    pub(super) at: Option<&'static str>,
    /// The schema keyword that failed.
    pub(super) keyword: &'static str,
    /// Whether the refused value is one the text allows.
    pub(super) value: fn(&Value) -> bool,
    /// Why the text's level wins there (for people; the tests hold every one to a case).
    #[allow(dead_code)]
    pub(super) reason: &'static str,
}

/// Where the schema and the text part, the text's level wins (SCHEMA-01, SCHEMA-02).
pub(super) const EXEMPT: &[Exemption] = &[
    Exemption {
        name: "format is an annotation",
        revisions: &["2024-11-05", "2025-03-26", "2025-06-18"],
        definitions: &[],
        at: None,
        keyword: "format",
        value: |_| true,
        reason: "schema.ts, the source of truth, only tags strings with `@format` in a doc \
            comment; draft-07 validators assert `format`, 2020-12 (the later revisions) leaves \
            it an annotation, and the text lets the server interpret a resource URI (\"it is up \
            to the server how to interpret it\"): a client passing on the caller's URI breaks \
            nothing the text asks",
    },
    Exemption {
        name: "elicitation numbers may be fractional",
        revisions: &["2025-06-18", "2025-11-25", "2026-07-28"],
        definitions: &["ElicitResult"],
        at: Some("/result/content/*"),
        keyword: "type",
        value: |v| v.is_f64(),
        reason: "schema.json types a form value as string, integer or boolean, but schema.ts \
            says `string | number | boolean`, and elicitation.mdx's number schema (`type: \
            \"number\"`) asks for any number: an answer of 7.5 to a number field is right",
    },
    Exemption {
        name: "an unreadable id is answered with null",
        revisions: &[
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28",
        ],
        definitions: &["JSONRPCError", "JSONRPCErrorResponse"],
        at: Some("/id"),
        keyword: "type",
        value: Value::is_null,
        reason: "every message MUST follow JSON-RPC 2.0, whose error answering a request whose \
            id could not be detected MUST carry `\"id\": null`; the schema's RequestId is only \
            a string or an integer (2025-11-25 lets the id be left out, but never null). Only \
            an error response's null id is excused: a request with one fails here and JSON-01",
    },
];

fn matches_path(pattern: &str, at: &str) -> bool {
    let (mut p, mut a) = (pattern.split('/'), at.split('/'));
    loop {
        match (p.next(), a.next()) {
            (None, None) => return true,
            (Some(want), Some(got)) if want == "*" || want == got => {}
            _ => return false,
        }
    }
}

/// The exemption that excuses `leaf` of `message`, judged by `definition` at `revision`.
fn exempt(revision: &str, definition: &str, leaf: &Leaf, message: &Value) -> Option<&'static str> {
    let value = message.pointer(&leaf.at).unwrap_or(&Value::Null);
    EXEMPT
        .iter()
        .find(|x| {
            x.revisions.contains(&revision)
                && (x.definitions.is_empty() || x.definitions.contains(&definition))
                && x.at.is_none_or(|p| matches_path(p, &leaf.at))
                && x.keyword == leaf.keyword
                && (x.value)(value)
        })
        .map(|x| x.name)
}

/// One message the schema refused.
struct Refused {
    what: String,
    revision: String,
    definition: String,
    leaves: Vec<Leaf>,
}

impl Refused {
    fn show(&self) -> String {
        let shown: Vec<String> = self
            .leaves
            .iter()
            .take(ERRORS_SHOWN)
            .map(|l| {
                let at = if l.at.is_empty() {
                    "(the message)"
                } else {
                    &l.at
                };
                format!("{at}: {}: {}", l.keyword, l.message)
            })
            .collect();
        let more = match self.leaves.len().saturating_sub(ERRORS_SHOWN) {
            0 => String::new(),
            n => format!("; {n} more"),
        };
        format!(
            "{} at {} refused by {}: {}{more}",
            self.what,
            self.revision,
            self.definition,
            shown.join("; ")
        )
    }
}

/// What the check found on one side: the messages judged and those refused.
#[derive(Default)]
struct Findings {
    judged: usize,
    refused: Vec<Refused>,
}

impl Findings {
    fn outcome(&self, what: &str) -> Result<(), (String, String)> {
        if self.refused.is_empty() {
            return Ok(());
        }
        let revisions: Vec<&str> = {
            let mut r: Vec<&str> = self.refused.iter().map(|x| x.revision.as_str()).collect();
            r.dedup();
            r
        };
        let files: Vec<String> = revisions
            .iter()
            .map(|r| format!("{}/{r}.schema.json", spec_schema::DIR))
            .collect();
        let mut actual: Vec<String> = self
            .refused
            .iter()
            .take(MESSAGES_SHOWN)
            .map(Refused::show)
            .collect();
        if self.refused.len() > MESSAGES_SHOWN {
            actual.push(format!(
                "and {} more of the {} judged",
                self.refused.len() - MESSAGES_SHOWN,
                self.judged
            ));
        }
        Err((
            format!(
                "{what} valid against the published schema of the revision in force ({})",
                files.join(", ")
            ),
            actual.join(" | "),
        ))
    }
}

/// A server request the client may answer: its method and whether it asked for a task.
struct Asked {
    pid: u32,
    id: Value,
    method: String,
    task: bool,
}

pub(super) fn schema_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    let mut versions = Versions::new(c.case.versions().protocol);
    let mut asked: Vec<Asked> = Vec::new();
    let (mut sent, mut answers) = (Findings::default(), Findings::default());
    for r in records {
        versions.follow(r);
        let message = match &r.event {
            Event::Sent { message } => {
                if let (Some(method), Some(id)) = (
                    message.get("method").and_then(Value::as_str),
                    message.get("id"),
                ) {
                    asked.push(Asked {
                        pid: r.pid,
                        id: id.clone(),
                        method: method.to_owned(),
                        task: message.pointer("/params/task").is_some(),
                    });
                }
                continue;
            }
            Event::Received { message } => message,
            _ => continue,
        };
        if sent.judged + answers.judged >= MESSAGES_JUDGED {
            break;
        }
        let version = versions.at(r.pid, Some(message));
        if era::is_modern(&version) && message.get("method").is_none() {
            // At 2026-07-28 a client answers no server request (its answers travel in the
            // retried request's `inputResponses`): a response is JSON-14's business alone.
            continue;
        }
        let Some(Ok(revision)) = spec_schema::revision(&version) else {
            continue;
        };
        let question = |id: &Value| asked.iter().rev().find(|a| a.pid == r.pid && a.id == *id);
        let (side, judged) = match judge(revision, message, question) {
            Some((Side::Sent, j)) => (&mut sent, j),
            Some((Side::Answer, j)) => (&mut answers, j),
            None => continue,
        };
        side.judged += 1;
        let leaves: Vec<Leaf> = judged
            .leaves
            .into_iter()
            .filter(|(definition, leaf)| exempt(&version, definition, leaf, message).is_none())
            .map(|(_, leaf)| leaf)
            .collect();
        if !leaves.is_empty() {
            side.refused.push(Refused {
                what: judged.what,
                revision: version,
                definition: judged.definition,
                leaves,
            });
        }
    }
    c.cite_on(
        "every request and notification the client sent is valid against its revision's published schema",
        "SCHEMA-01",
        sent.judged > 0,
        sent.outcome("every request and notification"),
    );
    c.cite_on(
        "every response the client sent to a server request is valid against its revision's published schema",
        "SCHEMA-02",
        answers.judged > 0,
        answers.outcome("every response to a server request"),
    );
}

enum Side {
    Sent,
    Answer,
}

/// One message judged: what it is, the definition named, and each refusal with the
/// definition it came from.
struct Judged {
    what: String,
    definition: String,
    leaves: Vec<(String, Leaf)>,
}

/// Judges `message` at `revision`; `None` when it is not this check's business.
fn judge<'a>(
    revision: &Revision,
    message: &Value,
    question: impl Fn(&Value) -> Option<&'a Asked>,
) -> Option<(Side, Judged)> {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id");
    let shown_id = |id: Option<&Value>| id.map_or(String::new(), |i| format!(" (id {i})"));
    let mut leaves = Vec::new();
    let mut against = |def: &Definition, instance: &Value, prefix: &str| {
        for mut leaf in revision.validate(def, instance) {
            leaf.at = format!("{prefix}{}", leaf.at);
            leaves.push((def.name.clone(), leaf));
        }
    };
    match (method, id) {
        (Some(method), id) => {
            let (def, envelope) = match id {
                Some(_) => (revision.request(method)?, Envelope::Request),
                None => (revision.notification(method)?, Envelope::Notification),
            };
            against(revision.envelope(envelope), message, "");
            against(def, message, "");
            let definition = def.name.clone();
            Some((
                Side::Sent,
                Judged {
                    what: format!("{method}{}", shown_id(id)),
                    definition,
                    leaves,
                },
            ))
        }
        (None, _) if message.get("error").is_some() => {
            let envelope = revision.envelope(Envelope::Error);
            against(envelope, message, "");
            let what = match id.and_then(&question) {
                Some(a) => format!("the error answering {}", a.method),
                None => "an error response".to_owned(),
            };
            Some((
                Side::Answer,
                Judged {
                    what: format!("{what}{}", shown_id(id)),
                    definition: envelope.name.clone(),
                    leaves,
                },
            ))
        }
        (None, Some(id)) if message.get("result").is_some() => {
            let asked = question(id)?;
            let envelope = revision.envelope(Envelope::Result);
            against(envelope, message, "");
            let mut definition = envelope.name.clone();
            // A receiver that does not take the task answers plainly (the task is then
            // ignored): the task's result only when it made one.
            let made_task = asked.task && message.pointer("/result/task").is_some();
            if let Some(def) = revision.result(&asked.method, made_task) {
                against(def, &message["result"], "/result");
                definition = def.name.clone();
            }
            Some((
                Side::Answer,
                Judged {
                    what: format!("the result answering {} (id {id})", asked.method),
                    definition,
                    leaves,
                },
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asked(method: &str) -> Asked {
        Asked {
            pid: 1,
            id: json!(0),
            method: method.to_owned(),
            task: false,
        }
    }

    fn rev(name: &str) -> &'static Revision {
        spec_schema::revision(name).unwrap().as_ref().unwrap()
    }

    #[test]
    fn a_result_is_judged_against_the_result_of_the_request_it_answers() {
        let roots = asked("roots/list");
        let answer = json!({"jsonrpc":"2.0","id":0,"result":{"roots":{}}});
        let (_, judged) = judge(rev("2025-06-18"), &answer, |_| Some(&roots)).unwrap();
        assert_eq!(judged.definition, "ListRootsResult");
        assert_eq!(judged.leaves[0].1.at, "/result/roots");
        assert_eq!(judged.leaves[0].1.keyword, "type");
        let fine = json!({"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///a"}]}});
        let (_, judged) = judge(rev("2025-06-18"), &fine, |_| Some(&roots)).unwrap();
        assert!(judged.leaves.is_empty());
        // A result nobody asked for is not this check's business.
        assert!(judge(rev("2025-06-18"), &fine, |_| None).is_none());
    }

    #[test]
    fn an_error_is_judged_against_the_error_envelope() {
        let bad = json!({"jsonrpc":"2.0","id":0,"error":{"code":"-32601","message":"no"}});
        let (_, judged) = judge(rev("2024-11-05"), &bad, |_| None).unwrap();
        assert_eq!(judged.definition, "JSONRPCError");
        assert_eq!(judged.leaves[0].1.at, "/error/code");
        let (_, judged) = judge(rev("2025-11-25"), &bad, |_| None).unwrap();
        assert_eq!(judged.definition, "JSONRPCErrorResponse");
        assert!(!judged.leaves.is_empty());
    }

    #[test]
    fn a_method_the_revision_does_not_define_is_not_judged() {
        let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}});
        assert!(judge(rev("2025-11-25"), &discover, |_| None).is_none());
        let made_up = json!({"jsonrpc":"2.0","method":"notifications/whatever"});
        assert!(judge(rev("2025-11-25"), &made_up, |_| None).is_none());
    }

    #[test]
    fn a_refusal_shows_the_message_the_path_and_the_keyword() {
        let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"echo","arguments":"x"}});
        let (_, judged) = judge(rev("2025-03-26"), &call, |_| None).unwrap();
        let refused = Refused {
            what: judged.what,
            revision: "2025-03-26".into(),
            definition: judged.definition,
            leaves: judged.leaves.into_iter().map(|l| l.1).collect(),
        };
        let shown = refused.show();
        assert!(shown.starts_with("tools/call (id 3) at 2025-03-26 refused by CallToolRequest: /params/arguments: type: "), "{shown}");
    }

    /// The leaves of `message` at `revision` that no exemption excuses.
    fn unexcused(revision: &str, message: &Value, asked: &Asked) -> Vec<Leaf> {
        let (_, judged) = judge(rev(revision), message, |_| Some(asked)).unwrap();
        judged
            .leaves
            .into_iter()
            .filter(|(def, leaf)| exempt(revision, def, leaf, message).is_none())
            .map(|(_, leaf)| leaf)
            .collect()
    }

    #[test]
    fn each_exemption_excuses_what_the_text_allows_and_no_more() {
        for x in EXEMPT {
            assert!(x.reason.len() > 40, "{}: say why", x.name);
        }
        // A fractional answer to a number field: schema.json says integer, schema.ts number.
        let elicit = asked("elicitation/create");
        let answer = |v: Value| json!({"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"score":v}}});
        for revision in ["2025-06-18", "2025-11-25"] {
            let (_, judged) = judge(rev(revision), &answer(json!(7.5)), |_| Some(&elicit)).unwrap();
            assert!(
                !judged.leaves.is_empty(),
                "the schema refuses 7.5 at {revision}"
            );
            assert!(unexcused(revision, &answer(json!(7.5)), &elicit).is_empty());
            assert!(!unexcused(revision, &answer(json!({"a": 1})), &elicit).is_empty());
        }
        // A URI as the caller gave it: format is not judged at any revision.
        let read = json!({"jsonrpc":"2.0","id":2,"method":"resources/read",
            "params":{"uri":"not a uri"}});
        let none = asked("none");
        for revision in ["2025-03-26", "2025-11-25"] {
            assert!(unexcused(revision, &read, &none).is_empty(), "{revision}");
        }
        let no_uri = json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":7}});
        assert!(!unexcused("2025-03-26", &no_uri, &none).is_empty());
        // An error answering a request whose id could not be read: JSON-RPC's null id.
        let unreadable = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}});
        let request = json!({"jsonrpc":"2.0","id":null,"method":"ping"});
        for revision in ["2024-11-05", "2025-11-25", "2026-07-28"] {
            let (_, judged) = judge(rev(revision), &unreadable, |_| None).unwrap();
            assert!(
                !judged.leaves.is_empty(),
                "the schema refuses a null id at {revision}"
            );
            assert!(
                unexcused(revision, &unreadable, &none).is_empty(),
                "{revision}"
            );
        }
        assert!(!unexcused("2025-11-25", &request, &none).is_empty());
        assert!(matches_path("/result/content/*", "/result/content/score"));
        assert!(!matches_path(
            "/result/content/*",
            "/result/content/score/0"
        ));
    }

    #[test]
    fn a_task_result_is_judged_only_when_the_client_made_a_task() {
        let mut sample = asked("sampling/createMessage");
        sample.task = true;
        let plain = json!({"jsonrpc":"2.0","id":0,"result":{"role":"assistant","model":"m",
            "content":{"type":"text","text":"hi"}}});
        let (_, judged) = judge(rev("2025-11-25"), &plain, |_| Some(&sample)).unwrap();
        assert_eq!(judged.definition, "CreateMessageResult");
        assert!(judged.leaves.is_empty(), "{:?}", judged.leaves);
        let created = json!({"jsonrpc":"2.0","id":0,"result":{"task":{"taskId":"t"}}});
        let (_, judged) = judge(rev("2025-11-25"), &created, |_| Some(&sample)).unwrap();
        assert_eq!(judged.definition, "CreateTaskResult");
        assert!(judged.leaves.iter().any(|(_, l)| l.keyword == "required"));
    }
}
