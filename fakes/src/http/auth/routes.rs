//! Requests to the authorization paths of every origin of an authorization trial: which
//! endpoint a path is, its answer, and its `http_request` record (role, endpoint, labelled
//! parameters, the `Authorization` header as a label), written before the answer leaves.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use mcp_harness_scenarios::transcript::Event;
use serde_json::{Map, Value};

use super::grant::{Answer, Params};
use super::metadata::{is_as_metadata_path, is_prm_path};
use super::{Auth, CLIENT_METADATA_PATH, Role};
use crate::http::endpoint::Fake;
use crate::http::headers;

/// The largest body an authorization endpoint reads.
const MAX_BODY: usize = 64 * 1024;

/// The router of an authorization server's own origin (`as`, `as2`, `as_http`): every path
/// goes to [`handle`].
pub fn router(fake: Arc<Fake>, role: Role) -> Router {
    Router::new().fallback(on_request).with_state((fake, role))
}

async fn on_request(State((fake, role)): State<(Arc<Fake>, Role)>, request: Request) -> Response {
    match handle(&fake, role, request).await {
        Ok(response) => response,
        Err(_) => plain(404, "Not Found"),
    }
}

/// A request to the MCP origin outside the MCP endpoint: answered here when it is an
/// authorization path (PRM, the client metadata document, and the authorization server's
/// paths when it lives on the MCP origin); otherwise handed back.
pub async fn mcp_origin_request(fake: &Fake, request: Request) -> Result<Response, Request> {
    handle(fake, Role::Mcp, request).await
}

/// Which endpoint `path` is on an origin of `role`, if it is one of the authorization side.
fn endpoint_of(auth: &Auth, role: Role, path: &str) -> Option<&'static str> {
    let serves_as = auth.server_at(role).is_some();
    if role == Role::Mcp && is_prm_path(path) {
        return Some("prm");
    }
    if role == Role::Mcp && path == CLIENT_METADATA_PATH {
        return Some("client_metadata");
    }
    if !serves_as {
        return None;
    }
    if is_as_metadata_path(path) {
        return Some("as_metadata");
    }
    for name in ["authorize", "token", "register"] {
        if path.ends_with(&format!("/{name}")) {
            return Some(name);
        }
    }
    (role != Role::Mcp).then_some("other")
}

async fn handle(fake: &Fake, role: Role, request: Request) -> Result<Response, Request> {
    let Some(auth) = fake.auth.as_ref() else {
        return Err(request);
    };
    let path = request.uri().path().to_owned();
    let Some(endpoint) = endpoint_of(auth, role, &path) else {
        return Err(request);
    };
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let query: Params = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let server = auth.server_at(role);
    let get = parts.method == Method::GET;
    let post = parts.method == Method::POST;
    let mut auth_label = auth.authorization_label(&parts.headers);
    let missing = auth.script.missing_status.unwrap_or(404);
    // DPoP at the token endpoint: the proof is judged first; a refused one is answered
    // without a grant, with the nonce when that is what it lacks.
    let mut proof_label = None;
    let mut nonce = None;
    let mut bound_to = None;
    if endpoint == "token" && post && server.is_some() && auth.dpop() {
        let (verdict, label) = auth.token_proof(&parts.headers, role, &path);
        proof_label = Some(label);
        match verdict {
            Ok(jkt) => bound_to = Some(jkt),
            Err((answer, with_nonce)) => {
                nonce = with_nonce;
                let form: Params = form_urlencoded::parse(&body).into_owned().collect();
                let mut shown = Map::new();
                if let Some(grant) = form.iter().find(|(k, _)| k == "grant_type") {
                    shown.insert("grant_type".into(), Value::String(grant.1.clone()));
                }
                return Ok(finish(
                    fake,
                    role,
                    &parts,
                    path,
                    endpoint,
                    (answer, Some(shown)),
                    (auth_label, proof_label),
                    nonce,
                ));
            }
        }
    }
    let (answer, shown) = match (endpoint, server) {
        ("prm", _) if get => (document(auth.prm_document(&path), missing), None),
        ("client_metadata", _) if get && auth.script.client.metadata_document => {
            (document(Some(auth.client_metadata_document()), 404), None)
        }
        ("as_metadata", Some(server)) if get => (
            document(auth.as_metadata_document(role, server, &path), missing),
            None,
        ),
        ("authorize", Some(server)) if get => {
            let (answer, shown) = auth.authorize(server, &query);
            (answer, Some(shown))
        }
        ("token", Some(server)) if post => {
            let form: Params = form_urlencoded::parse(&body).into_owned().collect();
            let basic = parts
                .headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .filter(|v| v.len() > 6 && v[..6].eq_ignore_ascii_case("basic "));
            let (mut answer, mut shown, label) = auth.token(server, &form, basic);
            if let Some(jkt) = &bound_to {
                auth.bind(&mut answer, jkt);
            }
            if label.is_some() {
                auth_label = label;
            }
            extend(&mut shown, auth.labelled_query_params(&query));
            (answer, Some(shown))
        }
        ("register", Some(server)) if post => {
            let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (answer, shown) = auth.register(server, &json);
            (answer, Some(shown))
        }
        _ => (
            Answer {
                status: if matches!(endpoint, "other" | "prm" | "as_metadata") {
                    404
                } else {
                    405
                },
                json: None,
                text: "not served here",
                location: None,
            },
            None,
        ),
    };
    let shown = match shown {
        Some(shown) => Some(shown),
        None => auth.labelled_query_params(&query),
    };
    Ok(finish(
        fake,
        role,
        &parts,
        path,
        endpoint,
        (answer, shown),
        (auth_label, proof_label),
        nonce,
    ))
}

/// Records a request (its `Authorization` and `DPoP` headers as labels) and makes its
/// response, with a `DPoP-Nonce` header when `nonce` is given.
#[allow(clippy::too_many_arguments)]
fn finish(
    fake: &Fake,
    role: Role,
    parts: &axum::http::request::Parts,
    path: String,
    endpoint: &str,
    (answer, shown): (Answer, Option<Map<String, Value>>),
    (auth_label, proof_label): (Option<String>, Option<String>),
    nonce: Option<String>,
) -> Response {
    let mut recorded = headers::recorded(&parts.headers, None);
    if let Some(label) = auth_label {
        recorded.insert("authorization".into(), label);
    }
    if let Some(label) = proof_label {
        recorded.insert("dpop".into(), label);
    }
    fake.recorder.record(Event::HttpRequest {
        method: parts.method.as_str().to_owned(),
        path,
        headers: recorded,
        status: answer.status,
        origin: Some(role.as_str().to_owned()),
        endpoint: Some(endpoint.to_owned()),
        params: shown,
    });
    let mut response = respond(answer);
    if let Some(value) = nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
        response.headers_mut().insert("dpop-nonce", value);
    }
    response
}

fn extend(into: &mut Map<String, Value>, more: Option<Map<String, Value>>) {
    for (k, v) in more.into_iter().flatten() {
        into.entry(k).or_insert(v);
    }
}

impl Auth {
    /// A query's parameters labelled, if it has any.
    fn labelled_query_params(&self, query: &Params) -> Option<Map<String, Value>> {
        (!query.is_empty()).then(|| self.labelled(&self.state(), query))
    }
}

/// A metadata document's answer; `missing`: the status where none is served.
fn document(doc: Option<Value>, missing: u16) -> Answer {
    match doc {
        Some(doc) => Answer {
            status: 200,
            json: Some(doc),
            text: "",
            location: None,
        },
        None => Answer {
            status: missing,
            json: None,
            text: "no metadata here",
            location: None,
        },
    }
}

fn respond(answer: Answer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match &answer.json {
        Some(json) => {
            let mut r = Response::new(Body::from(json.to_string()));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        None => plain(answer.status, answer.text),
    };
    *response.status_mut() = status;
    // Token answers must not be cached (RFC 6749 §5.1); harmless elsewhere.
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(location) = answer.location
        && let Ok(value) = HeaderValue::from_str(&location)
    {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

fn plain(status: u16, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND);
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
