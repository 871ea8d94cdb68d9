//! JSON-RPC batches: an array of messages in one stdio line or one POST body.
//!
//! Up to 2025-03-26 a receiver must accept them ("MCP implementations MAY support sending
//! JSON-RPC batches, but MUST support receiving JSON-RPC batches", `basic/index.mdx`
//! § Batching); 2025-06-18 removed them (its changelog, and `basic/transports.mdx`: a POST
//! body is a single message, a stdio line an individual message). `initialize` is never part
//! of one (2025-03-26 `basic/lifecycle.mdx` § Initialization).
//!
//! Both fakes record a batch as a note followed by each of its messages, so every check sees
//! the messages one by one and the base rules still see that they came as a batch. Their
//! answer is one batch too, noted the same way. The transcript format has no record of its
//! own for a batch, so the note is a `SentRaw` line in the `[note, not sent: …]` form the
//! storm notes use; [`received_size`] reads it back for the runner.

use mcp_harness_scenarios::model::era;
use mcp_harness_scenarios::model::{Reply, ServerEra};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;

use crate::jsonrpc::{self, Incoming};
use crate::script::Answer;

/// The first revision without batches.
pub const REMOVED_IN: &str = "2025-06-18";

/// JSON-RPC code for a message that is not a valid request (also a batch refused).
pub const INVALID_REQUEST: i64 = -32600;

const RECEIVED_PREFIX: &str = "[note, not sent: the next ";
const RECEIVED_SUFFIX: &str = " messages came in one JSON-RPC batch]";

/// Whether a fake of `era` accepts a batch when the version in force is `version` (the one
/// it negotiated, else the revision it plays; with neither, it accepts).
pub fn allowed(era: ServerEra, version: Option<&str>) -> bool {
    era != ServerEra::Modern && version.is_none_or(|v| v < REMOVED_IN && !era::is_modern(v))
}

/// The note recorded ahead of the `count` messages of a batch the client sent.
pub fn received_note(count: usize) -> Event {
    Event::SentRaw {
        line: format!("{RECEIVED_PREFIX}{count}{RECEIVED_SUFFIX}"),
    }
}

/// The size of the batch that `event` announces, if it is a [`received_note`].
pub fn received_size(event: &Event) -> Option<usize> {
    let Event::SentRaw { line } = event else {
        return None;
    };
    line.strip_prefix(RECEIVED_PREFIX)?
        .strip_suffix(RECEIVED_SUFFIX)?
        .parse()
        .ok()
}

/// The note recorded ahead of the `count` responses the fake sent as one batch.
pub fn sent_note(count: usize) -> Event {
    Event::SentRaw {
        line: format!("[note, not sent: the next {count} messages went out as one JSON-RPC batch]"),
    }
}

/// The records of a batch the client sent: the note, then each message.
pub fn received_records(items: &[Value]) -> Vec<Event> {
    std::iter::once(received_note(items.len()))
        .chain(items.iter().map(|message| Event::Received {
            message: message.clone(),
        }))
        .collect()
}

/// The records of the fake's batched answer: the note, then each response.
pub fn sent_records(responses: &[Value]) -> Vec<Event> {
    std::iter::once(sent_note(responses.len()))
        .chain(responses.iter().map(|message| Event::Sent {
            message: message.clone(),
        }))
        .collect()
}

/// The error answering a whole batch the fake refuses (null id, as JSON-RPC answers a
/// request it cannot read).
pub fn refusal(message: &str) -> Value {
    invalid_request(&Value::Null, message)
}

/// An Invalid Request error answering `id`.
pub fn invalid_request(id: &Value, message: &str) -> Value {
    jsonrpc::error(
        id,
        &mcp_harness_scenarios::model::RpcError {
            code: INVALID_REQUEST,
            message: message.to_owned(),
            data: None,
        },
    )
}

/// Why a batch is refused as a whole, if it is: not allowed at `version`, empty, or
/// holding `initialize`.
pub fn refused(items: &[Value], era: ServerEra, version: Option<&str>) -> Option<&'static str> {
    if !allowed(era, version) {
        return Some(
            "Invalid Request: JSON-RPC batches are not supported at this protocol version",
        );
    }
    if items.is_empty() {
        return Some("Invalid Request: an empty batch");
    }
    let initialize = items
        .iter()
        .any(|m| m.get("method").and_then(Value::as_str) == Some("initialize"));
    initialize.then_some("Invalid Request: initialize must not be part of a JSON-RPC batch")
}

/// One message of an accepted batch, as far as the answer goes.
#[derive(Debug, Clone)]
pub enum Item {
    /// A request, and what the script does with it.
    Answer {
        /// The request's id.
        id: Value,
        /// The script's answer.
        answer: Box<Answer>,
    },
    /// A message that is not valid JSON-RPC: answered with this error.
    Error(Value),
}

/// What the items of an accepted batch need: one [`Item`] per request (its answer from
/// `decide`, given the id, method and params) and per invalid message; notifications and
/// responses need nothing.
pub fn plan(items: &[Value], decide: impl Fn(&str, Option<&Value>) -> Answer) -> Vec<Item> {
    items
        .iter()
        .filter_map(|item| match jsonrpc::classify(item) {
            Incoming::Request { id, method, params } => Some(Item::Answer {
                id: id.clone(),
                answer: Box::new(decide(method, params)),
            }),
            Incoming::Notification => None,
            Incoming::Other if jsonrpc::is_response(item) => None,
            Incoming::Other => Some(Item::Error(invalid_request(
                &Value::Null,
                "Invalid Request: not a JSON-RPC request, notification or response",
            ))),
        })
        .collect()
}

/// What playing a batch's items came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Played {
    /// The responses, in the order of the requests (none when every request hangs).
    Responses(Vec<Value>),
    /// A scripted crash: the server goes away with this status, answering nothing.
    Exit(i32),
}

/// Plays the items of a batch: each answer after its handler's delay, counted from now, all
/// gathered into one batch (JSON-RPC answers a batch once every request is processed). In a
/// batch a handler's reply is played plainly: a result or an error is answered; a hang or a
/// raw line gets no answer; an exit ends the server; `faults` and `http` shapes belong to
/// single requests and are not played.
pub async fn play(items: Vec<Item>) -> Played {
    let start = tokio::time::Instant::now();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| match &items[i] {
        Item::Answer { answer, .. } => answer.delay_ms,
        Item::Error(_) => 0,
    });
    let mut responses: Vec<Option<Value>> = vec![None; items.len()];
    for i in order {
        responses[i] = match &items[i] {
            Item::Error(error) => Some(error.clone()),
            Item::Answer { id, answer } => {
                let delay = std::time::Duration::from_millis(answer.delay_ms);
                tokio::time::sleep_until(start + delay).await;
                match &answer.reply {
                    Reply::Result(result) => Some(jsonrpc::result(id, result.clone())),
                    Reply::Error(error) => Some(jsonrpc::error(id, error)),
                    Reply::Hang | Reply::RawLine(_) => None,
                    Reply::Exit(code) => return Played::Exit(*code),
                }
            }
        };
    }
    Played::Responses(responses.into_iter().flatten().collect())
}

/// Whether an answer `decide` gave is a scripted exit, which a batch plays as a crash.
pub fn exits(items: &[Item]) -> bool {
    items.iter().any(|item| {
        matches!(item, Item::Answer { answer, .. } if matches!(answer.reply, Reply::Exit(_)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn allowed_up_to_2025_03_26_only() {
        assert!(allowed(ServerEra::Legacy, Some("2025-03-26")));
        assert!(allowed(ServerEra::Legacy, Some("2024-11-05")));
        assert!(allowed(ServerEra::Legacy, None));
        assert!(allowed(ServerEra::Dual, Some("2025-03-26")));
        assert!(!allowed(ServerEra::Legacy, Some("2025-06-18")));
        assert!(!allowed(ServerEra::Legacy, Some("2025-11-25")));
        assert!(!allowed(ServerEra::Legacy, Some("2026-07-28")));
        assert!(!allowed(ServerEra::Modern, None));
    }

    #[test]
    fn the_note_reads_back() {
        assert_eq!(received_size(&received_note(3)), Some(3));
        assert_eq!(received_size(&received_note(0)), Some(0));
        assert_eq!(received_size(&sent_note(3)), None);
        assert_eq!(
            received_size(&Event::SentRaw {
                line: "the next 3 messages came in one JSON-RPC batch".into()
            }),
            None
        );
        let records = received_records(&[json!(1), json!(2)]);
        assert_eq!(records.len(), 3);
        assert_eq!(received_size(&records[0]), Some(2));
    }

    #[test]
    fn refusals() {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize"});
        let legacy = ServerEra::Legacy;
        assert_eq!(
            refused(std::slice::from_ref(&ping), legacy, Some("2025-03-26")),
            None
        );
        assert!(refused(std::slice::from_ref(&ping), legacy, Some("2025-06-18")).is_some());
        assert!(refused(&[], legacy, None).is_some());
        assert!(refused(&[ping, init], legacy, None).is_some_and(|why| why.contains("initialize")));
        assert_eq!(refusal("x")["error"]["code"], json!(INVALID_REQUEST));
        assert_eq!(refusal("x")["id"], Value::Null);
    }

    fn answer(delay_ms: u64, reply: Reply) -> Answer {
        Answer {
            delay_ms,
            reply,
            http: None,
            faults: None,
            sends: Vec::new(),
            listen: None,
            task: None,
        }
    }

    #[tokio::test]
    async fn a_batch_is_answered_once_in_request_order() {
        let items = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "slow"}),
            json!({"jsonrpc": "2.0", "method": "notifications/x"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "fast"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "hang"}),
            json!(7),
            json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
        ];
        let planned = plan(&items, |method, _| match method {
            "slow" => answer(30, Reply::Result(json!({"n": 1}))),
            "fast" => answer(0, Reply::Result(json!({"n": 2}))),
            _ => answer(0, Reply::Hang),
        });
        assert_eq!(planned.len(), 4, "{planned:?}");
        assert!(!exits(&planned));
        let Played::Responses(responses) = play(planned).await else {
            panic!("no exit was scripted");
        };
        let ids: Vec<&Value> = responses.iter().map(|r| &r["id"]).collect();
        assert_eq!(ids, [&json!(1), &json!(2), &Value::Null]);
        assert_eq!(responses[2]["error"]["code"], json!(INVALID_REQUEST));

        let crash = plan(&items[..1], |_, _| answer(0, Reply::Exit(3)));
        assert!(exits(&crash));
        assert_eq!(play(crash).await, Played::Exit(3));
    }
}
