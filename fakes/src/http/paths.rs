//! Paths of the HTTP fake's origin other than the MCP endpoint that a script names: a `GET`
//! on one of `http.redirects` is answered with its redirect (an icon that moved), and
//! recorded like any request, so a check sees that it was asked for.

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use mcp_harness_scenarios::transcript::Event;

use super::Fake;
use super::headers;

/// The scripted redirect answering `parts`, recorded, if the script has one for its path.
pub(super) fn scripted(fake: &Fake, parts: &Parts) -> Option<Response> {
    if parts.method != Method::GET {
        return None;
    }
    let redirect = fake.scenario.server.http.redirects.get(parts.uri.path())?;
    let status = StatusCode::from_u16(redirect.status).ok()?;
    fake.recorder.record(Event::HttpRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        headers: headers::recorded(&parts.headers, fake.token.as_deref()),
        status: status.as_u16(),
        origin: None,
        endpoint: None,
        params: None,
    });
    Response::builder()
        .status(status)
        .header(header::LOCATION, redirect.to.location(fake.port))
        .body(Body::empty())
        .ok()
}
