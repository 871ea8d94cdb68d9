//! One OTLP/HTTP export request, judged and decoded without any I/O: its path names the
//! signal, its `content-type` the encoding, its `content-encoding` whether it is gzipped.
//! The answer is what the OTLP/HTTP specification asks of a receiver: 200 with the empty
//! `Export*ServiceResponse` in the request's encoding, 400 for a body that does not decode,
//! 404 for another path, 405 for another method, 413 past the body cap, 415 for an encoding
//! it does not speak. A reason never quotes the body (it may hold a secret).

use std::io::Read as _;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use serde_json::Value;

use super::normalise;

/// The most bytes a request body may have, also once gunzipped.
pub const BODY_CAP: usize = 4 * 1024 * 1024;

/// The two OTLP/HTTP encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json` (OTLP/JSON).
    Json,
}

impl Encoding {
    /// The name the case and `OTEL_EXPORTER_OTLP_PROTOCOL` use.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Protobuf => "http/protobuf",
            Encoding::Json => "http/json",
        }
    }

    /// The media type of a body in this encoding.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }

    /// The encoding of a `content-type` header value (parameters ignored), if one of the two.
    pub fn of(content_type: &str) -> Option<Encoding> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        if media.eq_ignore_ascii_case("application/x-protobuf") {
            Some(Encoding::Protobuf)
        } else if media.eq_ignore_ascii_case("application/json") {
            Some(Encoding::Json)
        } else {
            None
        }
    }

    /// The empty export response, the same for every signal: no field set.
    fn empty_response(self) -> Vec<u8> {
        match self {
            Encoding::Protobuf => Vec::new(),
            Encoding::Json => b"{}".to_vec(),
        }
    }
}

/// The signal a path exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `/v1/traces`.
    Traces,
    /// `/v1/metrics`.
    Metrics,
    /// `/v1/logs`: taken and dropped.
    Logs,
}

impl Signal {
    /// The signal of a request path, if it names one.
    pub fn of(path: &str) -> Option<Signal> {
        match path {
            "/v1/traces" => Some(Signal::Traces),
            "/v1/metrics" => Some(Signal::Metrics),
            "/v1/logs" => Some(Signal::Logs),
            _ => None,
        }
    }
}

/// What a request brought.
#[derive(Debug, Default)]
pub struct Taken {
    /// Normalised spans.
    pub spans: Vec<Value>,
    /// Normalised metric data points.
    pub metrics: Vec<Value>,
    /// Why it was refused (`"POST /v1/traces: …"`), if it was.
    pub rejected: Option<String>,
}

/// The answer to a request: status, content type and body.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body's media type.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    fn refuse(status: u16, reason: String) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: reason.into_bytes(),
        }
    }
}

/// The request's head, as far as the receiver reads it.
pub struct Head<'a> {
    /// The method.
    pub method: &'a str,
    /// The path (no query).
    pub path: &'a str,
    /// The `content-type` header, if any.
    pub content_type: Option<&'a str>,
    /// The `content-encoding` header, if any.
    pub content_encoding: Option<&'a str>,
}

/// Whether the head alone already decides the answer (a wrong path, method or encoding),
/// before any body is read.
pub fn refuse_head(head: &Head<'_>) -> Option<(Answer, Option<String>)> {
    let Some(_) = Signal::of(head.path) else {
        return Some((Answer::refuse(404, "no such OTLP path".into()), None));
    };
    if head.method != "POST" {
        return Some((Answer::refuse(405, "OTLP exports are POSTed".into()), None));
    }
    let note = |reason: String| format!("{} {}: {reason}", head.method, head.path);
    if Encoding::of(head.content_type.unwrap_or("")).is_none() {
        let reason = format!(
            "unsupported content-type {:?} (application/x-protobuf or application/json)",
            cut(head.content_type.unwrap_or("(none)"))
        );
        return Some((Answer::refuse(415, reason.clone()), Some(note(reason))));
    }
    match head.content_encoding.map(str::trim) {
        None | Some("") => None,
        Some(e) if e.eq_ignore_ascii_case("gzip") || e.eq_ignore_ascii_case("identity") => None,
        Some(e) => {
            let reason = format!("unsupported content-encoding {:?} (gzip)", cut(e));
            Some((Answer::refuse(415, reason.clone()), Some(note(reason))))
        }
    }
}

/// The answer to a body past [`BODY_CAP`], and its note.
pub fn too_large(head: &Head<'_>) -> (Answer, String) {
    let reason = format!("body over {BODY_CAP} bytes");
    let note = format!("{} {}: {reason}", head.method, head.path);
    (Answer::refuse(413, reason), note)
}

/// Decodes a request whose head passed [`refuse_head`], with its whole body.
pub fn take(head: &Head<'_>, body: &[u8]) -> (Answer, Taken) {
    let encoding = Encoding::of(head.content_type.unwrap_or("")).unwrap_or(Encoding::Protobuf);
    let signal = Signal::of(head.path).unwrap_or(Signal::Logs);
    let note = |reason: &str| format!("{} {}: {reason}", head.method, head.path);
    let gzipped = head
        .content_encoding
        .is_some_and(|e| e.trim().eq_ignore_ascii_case("gzip"));
    let plain;
    let body = if gzipped {
        match gunzip(body) {
            Ok(b) => {
                plain = b;
                &plain[..]
            }
            Err((status, reason)) => {
                let taken = Taken {
                    rejected: Some(note(&reason)),
                    ..Taken::default()
                };
                return (Answer::refuse(status, reason), taken);
            }
        }
    } else {
        body
    };
    let mut taken = Taken::default();
    let decoded = match signal {
        Signal::Traces => decode::<ExportTraceServiceRequest>(body, encoding)
            .map(|r| taken.spans = normalise::spans(&r, encoding.name())),
        Signal::Metrics => decode::<ExportMetricsServiceRequest>(body, encoding)
            .map(|r| taken.metrics = normalise::metric_points(&r, encoding.name())),
        // Logs are not judged: any body is taken, none is decoded.
        Signal::Logs => Ok(()),
    };
    match decoded {
        Ok(()) => {
            let answer = Answer {
                status: 200,
                content_type: encoding.content_type(),
                body: encoding.empty_response(),
            };
            (answer, taken)
        }
        Err(reason) => {
            taken.rejected = Some(note(&reason));
            (Answer::refuse(400, reason), taken)
        }
    }
}

/// A body in either encoding as `M`. The reason names where decoding failed, never a value
/// (serde_json's own messages quote the offending value).
fn decode<M>(body: &[u8], encoding: Encoding) -> Result<M, String>
where
    M: prost::Message + Default + serde::de::DeserializeOwned,
{
    match encoding {
        Encoding::Protobuf => {
            M::decode(body).map_err(|e| format!("not an OTLP protobuf message: {e}"))
        }
        Encoding::Json => serde_json::from_slice(body).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                    "not JSON"
                }
                _ => "not an OTLP/JSON message",
            };
            format!("{what} (line {}, column {})", e.line(), e.column())
        }),
    }
}

/// A gzipped body, unpacked up to [`BODY_CAP`] bytes.
fn gunzip(body: &[u8]) -> Result<Vec<u8>, (u16, String)> {
    let mut out = Vec::new();
    let mut reader = flate2::read::GzDecoder::new(body).take(BODY_CAP as u64 + 1);
    reader
        .read_to_end(&mut out)
        .map_err(|_| (400, "not a gzip stream".to_owned()))?;
    if out.len() > BODY_CAP {
        return Err((413, format!("gunzipped body over {BODY_CAP} bytes")));
    }
    Ok(out)
}

/// A header value cut short for a reason.
fn cut(s: &str) -> String {
    s.chars().take(60).collect()
}
