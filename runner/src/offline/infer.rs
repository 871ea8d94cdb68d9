//! What a recording says of itself: its transport, the revision it speaks, the client's era
//! and whether the server issued HTTP sessions. These fill the few members of the synthetic
//! case the wire rules read (see `checks::evaluate_wire_only`).

use serde_json::Value;

use mcp_harness_scenarios::model::{Transport, era};
use mcp_harness_scenarios::transcript::{Event, Record};

/// Where the revision came from, for the report's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionSource {
    /// `--revision`.
    Given,
    /// The first `initialize` result.
    Settled,
    /// The first `initialize` request (no result recorded).
    Offered,
    /// A 2026-07-28 request's `_meta` protocol version.
    Meta,
    /// Nothing in the recording: the harness's default legacy revision.
    Assumed,
}

impl RevisionSource {
    /// How the report says it.
    pub fn as_str(self) -> &'static str {
        match self {
            RevisionSource::Given => "given with --revision",
            RevisionSource::Settled => "the initialize result",
            RevisionSource::Offered => "the initialize request",
            RevisionSource::Meta => "the _meta protocol version",
            RevisionSource::Assumed => "assumed: the recording names none",
        }
    }
}

/// HTTPS when the recording holds an HTTP request or connection (only the HTTP side writes
/// them), else stdio.
pub fn transport(records: &[Record]) -> Transport {
    let http = records
        .iter()
        .any(|r| matches!(r.event, Event::HttpRequest { .. } | Event::Connected));
    match http {
        true => Transport::Https,
        false => Transport::Stdio,
    }
}

/// The revision in force where the recording names none itself: `given`, else the first
/// `initialize` result, else its request, else the first `_meta` version the client sent.
pub fn revision(records: &[Record], given: Option<&str>) -> (String, RevisionSource) {
    if let Some(given) = given {
        return (given.to_owned(), RevisionSource::Given);
    }
    let received = records.iter().filter_map(|r| match &r.event {
        Event::Received { message } => Some(message),
        _ => None,
    });
    let initialize = received.clone().find(|m| {
        m.get("method").and_then(Value::as_str) == Some("initialize") && m.get("id").is_some()
    });
    if let Some(init) = initialize {
        let settled = records.iter().find_map(|r| match &r.event {
            Event::Sent { message }
                if message.get("method").is_none() && message.get("id") == init.get("id") =>
            {
                message.pointer("/result/protocolVersion")?.as_str()
            }
            _ => None,
        });
        if let Some(v) = settled {
            return (v.to_owned(), RevisionSource::Settled);
        }
        if let Some(v) = init
            .pointer("/params/protocolVersion")
            .and_then(Value::as_str)
        {
            return (v.to_owned(), RevisionSource::Offered);
        }
    }
    if let Some(v) = received
        .clone()
        .find_map(|m| era::meta_version(m.get("params")))
    {
        return (v.to_owned(), RevisionSource::Meta);
    }
    (
        era::default_protocol_version(None).to_owned(),
        RevisionSource::Assumed,
    )
}

/// Whether the server issued an HTTP session: a transcript keeps the client's headers, not
/// the server's, so a session shows as a request carrying `Mcp-Session-Id`. A client that
/// never sent one cannot be told from a server without sessions: HTTP-06 is then not
/// observed.
pub fn sessions(records: &[Record]) -> bool {
    records.iter().any(|r| {
        matches!(&r.event, Event::HttpRequest { headers, .. } if headers.contains_key("mcp-session-id"))
    })
}

/// The records with the MCP endpoint's path written as the fakes' (`/mcp`, which the HTTP
/// rules judge): a recording through a proxy keeps the path the client used, whatever the
/// server's. The endpoint is the path of the first POST whose body held a message;
/// authorization requests (`endpoint`) and other paths are left as they are.
pub fn at_mcp_path(records: &[Record]) -> Vec<Record> {
    use mcp_harness_fakes::http::MCP_PATH;
    let endpoint = records
        .windows(2)
        .find_map(|pair| match (&pair[0].event, &pair[1].event) {
            (
                Event::HttpRequest {
                    method,
                    path,
                    endpoint: None,
                    ..
                },
                Event::Received { .. },
            ) if method == "POST" => Some(path.clone()),
            _ => None,
        });
    let mut out = records.to_vec();
    let Some(endpoint) = endpoint.filter(|p| p != MCP_PATH) else {
        return out;
    };
    for r in &mut out {
        if let Event::HttpRequest {
            path,
            endpoint: None,
            ..
        } = &mut r.event
            && *path == endpoint
        {
            *path = MCP_PATH.to_owned();
        }
    }
    out
}
