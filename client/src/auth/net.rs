//! The authorization side's own HTTP: GETs of metadata documents and POSTs to the token and
//! registration endpoints, each judged before it is sent.
//!
//! - Every URL is checked before connecting: `https` only (RFC 9728 / OAuth 2.1 §1.5: every
//!   authorization server endpoint is served over TLS), then the destination policy of
//!   [`check_discovered_url`] (private, loopback, link-local and metadata addresses refused
//!   unless the caller's local policy lists the origin; the MCP server's own origin always
//!   allowed). Either refusal is `insecure_url`, before any traffic.
//! - These requests never carry the MCP access token: it is for the MCP server alone.
//! - Bodies are capped ([`MAX_BODY`]) and must be JSON objects; each request is bounded by the
//!   request timeout. Redirects are those of the MCP client (same-origin 307/308 only), so a
//!   metadata document cannot send the client elsewhere.
//! - Errors say which document or endpoint and why, never a secret: the bodies sent are not
//!   quoted, and the bodies received only as far as their `error` and `error_description`.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{self, HeaderValue};
use reqwest::{RequestBuilder, Url};
use serde_json::{Map, Value};

use super::Secret;
use crate::error::{Error, ErrorKind};
use crate::seams::Seams;
use crate::seams::wire::Wire;
use crate::transport::http::security::{self, DestinationPolicy, check_discovered_url};

/// The largest metadata document or endpoint answer read, in bytes.
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// An `auth_failed` error.
pub(crate) fn failed(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::AuthFailed, message)
}

/// What a request brought back: its status and, for a JSON object body, the object.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) json: Option<Map<String, Value>>,
    /// The `DPoP-Nonce` header, if the answer has one (RFC 9449 §8).
    pub(crate) dpop_nonce: Option<String>,
}

impl Answer {
    /// `error` and `error_description` of an OAuth error answer, for messages.
    pub(crate) fn oauth_error(&self) -> String {
        let get = |k: &str| {
            self.json
                .as_ref()
                .and_then(|o| o.get(k))
                .and_then(Value::as_str)
                .map(crate::error::excerpt)
        };
        match (get("error"), get("error_description")) {
            (Some(e), Some(d)) => format!("HTTP {}, error {e:?}: {d}", self.status),
            (Some(e), None) => format!("HTTP {}, error {e:?}", self.status),
            _ => format!("HTTP {}", self.status),
        }
    }
}

/// How to authenticate the client at the token endpoint (RFC 6749 §2.3.1).
pub(crate) enum ClientAuth<'a> {
    /// `client_secret_basic`: `Authorization: Basic` of the form-encoded id and secret.
    Basic(&'a str, &'a Secret),
    /// Nothing in headers (`client_secret_post` puts the secret in the form; `none` sends
    /// only `client_id`).
    InForm,
}

/// The authorization side's HTTP client.
pub(crate) struct Net {
    pub(crate) client: reqwest::Client,
    pub(crate) policy: DestinationPolicy,
    pub(crate) seams: Seams,
    pub(crate) timeout: Duration,
    /// Sent as `MCP-Protocol-Version` on metadata requests (2025-03-26 asks for it there).
    pub(crate) protocol_version: Option<HeaderValue>,
}

impl Net {
    /// Checks `url` before any connection: https only (unless a defect allows http), then the
    /// destination policy. `what` names the URL for the message.
    pub(crate) fn check(&self, url: &Url, what: &str) -> Result<(), Error> {
        let scheme_ok = self.seams.auth_scheme_allowed(url.scheme() == "https", url);
        if !scheme_ok {
            return Err(Error::new(
                ErrorKind::InsecureUrl,
                format!(
                    "refusing {what} {url}: authorization endpoints and metadata must be \
                     https:// (OAuth 2.1 §1.5)"
                ),
            ));
        }
        if self.seams.auth_skips_destination_check(url) {
            return Ok(());
        }
        check_discovered_url(url, &self.policy)
            .map_err(|e| Error::new(e.kind, format!("{what}: {}", e.message)))
    }

    /// GETs a JSON document. A status other than 200 is returned as such (the caller may try
    /// the next location); a 200 whose body is not a JSON object fails.
    pub(crate) async fn get_json(
        &self,
        url: &Url,
        what: &str,
        bearer: Option<&Secret>,
    ) -> Result<Answer, Error> {
        self.check(url, what)?;
        let mut request = self
            .client
            .get(url.clone())
            .header(header::ACCEPT, "application/json");
        if let Some(version) = &self.protocol_version {
            request = request.header("mcp-protocol-version", version.clone());
        }
        self.execute(request, url, what, bearer).await
    }

    /// POSTs a form (`application/x-www-form-urlencoded`) to a token endpoint, with a DPoP
    /// proof header when given.
    pub(crate) async fn post_form_proved(
        &self,
        url: &Url,
        what: &str,
        form: &[(&str, &str)],
        auth: ClientAuth<'_>,
        bearer: Option<&Secret>,
        proof: Option<HeaderValue>,
    ) -> Result<Answer, Error> {
        self.check(url, what)?;
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut request = self
            .client
            .post(url.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(body);
        if let Some(proof) = proof {
            request = request.header(super::dpop::HEADER, proof);
        }
        if let ClientAuth::Basic(id, secret) = auth {
            // RFC 6749 §2.3.1: both parts form-encoded before base64.
            let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(id), enc(secret.expose()));
            let mut value = HeaderValue::try_from(format!(
                "Basic {}",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pair)
            ))
            .map_err(|_| failed("the client credentials cannot be put in a header"))?;
            value.set_sensitive(true);
            request = request.header(header::AUTHORIZATION, value);
        }
        self.execute(request, url, what, bearer).await
    }

    /// POSTs a JSON body (dynamic client registration).
    pub(crate) async fn post_json(
        &self,
        url: &Url,
        what: &str,
        body: &Value,
        bearer: Option<&Secret>,
    ) -> Result<Answer, Error> {
        self.check(url, what)?;
        let request = self
            .client
            .post(url.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json")
            .body(body.to_string());
        self.execute(request, url, what, bearer).await
    }

    async fn execute(
        &self,
        mut request: RequestBuilder,
        url: &Url,
        what: &str,
        bearer: Option<&Secret>,
    ) -> Result<Answer, Error> {
        // A correct client never sends the MCP access token here (a defect may).
        if let Some(token) = bearer.filter(|_| self.seams.auth_token_to_any_origin())
            && let Ok(mut value) = HeaderValue::try_from(format!("Bearer {}", token.expose()))
        {
            value.set_sensitive(true);
            request = request.header(header::AUTHORIZATION, value);
        }
        let what = format!("{what} ({url})");
        let reply = request
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| transport_error(&e, &what))?;
        let status = reply.status().as_u16();
        let dpop_nonce = reply
            .headers()
            .get(super::dpop::NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let json_type = reply
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|essence| {
                let essence = essence.trim().to_ascii_lowercase();
                essence == "application/json" || essence.ends_with("+json")
            });
        if reply.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(failed(format!(
                "{what} answered with more than {MAX_BODY} bytes"
            )));
        }
        let mut body = Vec::new();
        let mut chunks = reply.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| transport_error(&e, &what))?;
            if chunk.len() > MAX_BODY - body.len() {
                return Err(failed(format!(
                    "{what} answered with more than {MAX_BODY} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let json = match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        };
        if (200..300).contains(&status) && (json.is_none() || !json_type) {
            return Err(failed(format!(
                "{what} answered HTTP {status} without a JSON object (application/json)"
            )));
        }
        Ok(Answer {
            status,
            json,
            dpop_nonce,
        })
    }
}

/// A request that could not be carried out: a refused redirect stays `insecure_url` and a
/// refused certificate `tls`; anything else means authorization could not be obtained.
fn transport_error(e: &reqwest::Error, what: &str) -> Error {
    let error = security::send_error(e, what);
    match error.kind {
        ErrorKind::InsecureUrl | ErrorKind::Tls => error,
        _ => failed(error.message),
    }
}
