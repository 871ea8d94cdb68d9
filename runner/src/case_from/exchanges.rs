//! A recording as the exchanges a case can replay: each request the client sent, with the
//! server's answer to it and the messages the server started while it was open. Whatever
//! fits no exchange is kept as a note for the case's description.

use mcp_harness_scenarios::transcript::{Event, Record};
use serde_json::Value;

/// One request of the client and what the server did about it.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request, as the client sent it.
    pub request: Value,
    /// The server's answer: `Some(Ok(result))`, `Some(Err(error object))`, or `None` when
    /// none was recorded.
    pub answer: Option<Result<Value, Value>>,
    /// Messages the server sent on its own while the request was open (the last request
    /// opened before each), in order; those sent while no request was open (a `roots/list`
    /// once the client is initialized, say) come first, so that the replay sends them ahead
    /// of this answer, on both transports.
    pub server_messages: Vec<Value>,
}

impl Exchange {
    /// The request's method.
    pub fn method(&self) -> &str {
        self.request["method"].as_str().unwrap_or_default()
    }

    /// The request's params (`Null` when it has none).
    pub fn params(&self) -> &Value {
        &self.request["params"]
    }
}

/// What a recording holds, in the terms of a case.
#[derive(Debug, Default)]
pub struct Session {
    /// The client's requests, in the order they arrived.
    pub exchanges: Vec<Exchange>,
    /// Whether the recording is of Streamable HTTP (it has HTTP requests).
    pub https: bool,
    /// HTTP statuses other than success the server answered with, in order.
    pub http_errors: Vec<u16>,
    /// Whether the client sent an `authorization` header (recorded redacted).
    pub authorized: bool,
    /// Server messages that arrived after the last request was answered.
    pub unattributed: Vec<Value>,
    /// The client's answers to server requests, by the request's id (as JSON text).
    pub client_answers: Vec<(String, Result<Value, Value>)>,
}

impl Session {
    /// The client's answer to the server request with this `id`.
    pub fn client_answer(&self, id: &Value) -> Option<&Result<Value, Value>> {
        let id = id.to_string();
        self.client_answers
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, a)| a)
    }
}

/// Pairs the client's requests with the server's answers.
pub fn session(records: &[Record]) -> Session {
    let mut s = Session::default();
    // Indexes of exchanges still waiting for an answer, oldest first.
    let mut open: Vec<usize> = Vec::new();
    // Server messages sent while no request was open, for the next request.
    let mut pending: Vec<Value> = Vec::new();
    for record in records {
        match &record.event {
            Event::HttpRequest {
                status, headers, ..
            } => {
                s.https = true;
                s.authorized |= headers.contains_key("authorization");
                if !(200..300).contains(status) {
                    s.http_errors.push(*status);
                }
            }
            Event::Received { message } => {
                for m in messages(message) {
                    if m.get("method").is_none() {
                        if let Some(id) = m.get("id") {
                            let answer = match (m.get("result"), m.get("error")) {
                                (Some(result), _) => Ok(result.clone()),
                                (None, error) => Err(error.cloned().unwrap_or(Value::Null)),
                            };
                            s.client_answers.push((id.to_string(), answer));
                        }
                    } else if m.get("id").is_some() {
                        open.push(s.exchanges.len());
                        s.exchanges.push(Exchange {
                            request: m.clone(),
                            answer: None,
                            server_messages: std::mem::take(&mut pending),
                        });
                    }
                }
            }
            Event::Sent { message } => {
                for m in messages(message) {
                    if m.get("method").is_none() {
                        let Some(id) = m.get("id") else { continue };
                        let Some(at) = open
                            .iter()
                            .rposition(|&i| s.exchanges[i].request.get("id") == Some(id))
                        else {
                            continue;
                        };
                        let exchange = &mut s.exchanges[open.remove(at)];
                        exchange.answer = match (m.get("result"), m.get("error")) {
                            (Some(result), _) => Some(Ok(result.clone())),
                            (None, Some(error)) => Some(Err(error.clone())),
                            (None, None) => None,
                        };
                    } else if let Some(&i) = open.last() {
                        s.exchanges[i].server_messages.push(m.clone());
                    } else {
                        pending.push(m.clone());
                    }
                }
            }
            _ => {}
        }
    }
    s.unattributed = pending;
    s
}

/// A message, or each message of a batch.
fn messages(message: &Value) -> Vec<&Value> {
    match message {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(event: Event) -> Record {
        Record {
            pid: 1,
            at_ms: None,
            event,
        }
    }

    #[test]
    fn pairs_answers_by_id_and_attributes_server_messages_to_the_open_request() {
        let records = vec![
            rec(Event::Received {
                message: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}),
            }),
            rec(Event::Sent {
                message: json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
            }),
            rec(Event::Sent {
                message: json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}}),
            }),
            rec(Event::Sent {
                message: json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
            }),
            rec(Event::Received {
                message: json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            }),
        ];
        let s = session(&records);
        assert_eq!(s.exchanges.len(), 2);
        assert_eq!(s.exchanges[0].server_messages.len(), 1);
        assert!(matches!(&s.exchanges[0].answer, Some(Err(e)) if e["code"] == -32602));
        assert!(s.exchanges[1].answer.is_none());
        // The log message between the two goes out ahead of the next answer.
        assert_eq!(s.exchanges[1].server_messages.len(), 1);
        assert!(s.unattributed.is_empty());
        assert!(!s.https);
    }
}
