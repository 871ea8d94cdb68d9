//! The MCP endpoint as an OAuth protected resource: every request needs a bearer token that
//! the authorization server PRM currently names issued for this resource, not yet expired
//! (expiry counted in requests, so it is deterministic), with the scope a step-up tool
//! needs. Anything else is challenged: 401 with `resource_metadata` and `scope` as the case
//! says (and `error="invalid_token"` when a token was presented), or 403
//! `error="insufficient_scope"` naming the scopes the call needs.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use serde_json::Value;

use super::state::State;
use super::{Auth, Server};

/// What a presented bearer token is, for the decision and the transcript's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presented {
    /// No `Authorization: Bearer`.
    None,
    /// A value this trial never issued.
    Unknown,
    /// Issued by a server PRM does not name (now).
    OtherIssuer,
    /// Issued for another resource.
    OtherAudience,
    /// Used up (expired).
    Expired,
    /// Revoked with its grant.
    Revoked,
    /// Good; the index of the token.
    Valid(usize),
}

/// The token of `Authorization: Bearer <token>` or `Authorization: DPoP <token>`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop"))
        .then_some(token.trim())
}

/// Whether the `Authorization` scheme is `DPoP` (RFC 9449 §7.1).
fn dpop_scheme(headers: &HeaderMap) -> bool {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("dpop"))
}

impl Auth {
    fn presented(&self, state: &State, headers: &HeaderMap) -> Presented {
        let Some(token) = bearer(headers) else {
            return Presented::None;
        };
        let Some(index) = state.tokens.iter().position(|t| t.value == token) else {
            return Presented::Unknown;
        };
        let t = &state.tokens[index];
        let current = match state.migrated {
            true => Server::Second,
            false => Server::First,
        };
        if t.server != current {
            return Presented::OtherIssuer;
        }
        if t.revoked {
            return Presented::Revoked;
        }
        // Both name this resource: the identifier PRM published (which a client sends) and
        // the endpoint's URI (which a client without PRM sends); the `resource` a client
        // sends is judged by the cases' wire checks, not through a refused token.
        if t.audience != self.resource() && t.audience != self.published_resource() {
            return Presented::OtherAudience;
        }
        if self
            .script
            .tokens
            .valid_for_requests
            .is_some_and(|n| t.uses >= n)
        {
            return Presented::Expired;
        }
        Presented::Valid(index)
    }

    /// The transcript's label of a request's `Authorization` header, if it has one: on any
    /// origin, an access token is shown by what it is (`Bearer [valid]`, `Bearer [expired]`,
    /// `Bearer [other audience]`, `Bearer [other issuer]`, `Bearer [revoked]`), anything else
    /// `[invalid]`.
    pub fn authorization_label(&self, headers: &HeaderMap) -> Option<String> {
        headers.get(AUTHORIZATION)?;
        let state = self.state();
        let label = match self.presented(&state, headers) {
            Presented::Valid(_) => "Bearer [valid]",
            Presented::Expired => "Bearer [expired]",
            Presented::Revoked => "Bearer [revoked]",
            Presented::OtherAudience => "Bearer [other audience]",
            Presented::OtherIssuer => "Bearer [other issuer]",
            Presented::None | Presented::Unknown => "[invalid]",
        };
        // A token under the DPoP scheme is shown as such: `DPoP [valid]`.
        Some(match dpop_scheme(headers) {
            true => label.replacen("Bearer", "DPoP", 1),
            false => label.to_owned(),
        })
    }

    /// The transcript's label of an MCP endpoint request's `DPoP` header, if it has one and
    /// the case plays DPoP: the proof's verdict against the token the request presents.
    /// A token under the DPoP scheme without a proof is labelled too (`refused: none`).
    pub fn proof_label(&self, headers: &HeaderMap, method: &str) -> Option<String> {
        if !self.dpop() {
            return None;
        }
        if headers.get(super::dpop::HEADER).is_none() {
            return dpop_scheme(headers).then(|| "[dpop proof: refused: none]".to_owned());
        }
        let mut state = self.state();
        let Presented::Valid(index) = self.presented(&state, headers) else {
            return Some("[dpop proof: no valid token]".to_owned());
        };
        let token = state.tokens[index].value.clone();
        let Some(jkt) = state.tokens[index].jkt.clone() else {
            return Some("[dpop proof: token not bound]".to_owned());
        };
        let verdict = self.resource_proof(&mut state, headers, method, &token, &jkt, false);
        Some(super::dpop::label(&verdict))
    }

    /// A DPoP-bound token's admission (RFC 9449 §7): the `DPoP` scheme, then a proof by its
    /// key for this request and token. `Some` challenges the request.
    fn admit_bound(
        &self,
        state: &mut State,
        headers: &HeaderMap,
        method: &str,
        index: usize,
    ) -> Option<(u16, String)> {
        let challenge = |error: &str| format!("DPoP error=\"{error}\", algs=\"ES256\"");
        let Some(jkt) = state.tokens[index].jkt.clone() else {
            // A token issued without a proof, in a DPoP case: not usable as DPoP.
            return dpop_scheme(headers).then(|| (401, challenge("invalid_token")));
        };
        if !dpop_scheme(headers) {
            return Some((401, challenge("invalid_token")));
        }
        let token = state.tokens[index].value.clone();
        match self.resource_proof(state, headers, method, &token, &jkt, true) {
            Ok(_) => None,
            Err(refusal) => Some((401, challenge(refusal.error))),
        }
    }

    /// Judges an MCP endpoint request: `None` admits it (counting the token's use),
    /// `Some((status, WWW-Authenticate))` challenges it. `message` is the JSON-RPC body, if any.
    /// Only POSTs count as uses (of the token, towards a migration), and only POSTs are
    /// refused as expired: whether and when a client opens its standalone GET stream races
    /// its POSTs, and expiry must not.
    pub fn admit(
        &self,
        headers: &HeaderMap,
        method: &str,
        message: Option<&Value>,
    ) -> Option<(u16, String)> {
        let post = method == "POST";
        let mut state = self.state();
        if let Some(token) = bearer(headers) {
            state.received(token);
        }
        let presented = self.presented(&state, headers);
        let index = match presented {
            Presented::Valid(index) => index,
            // Expiry is counted in POSTs and judged on them alone, for the same reason.
            Presented::Expired if !post => return None,
            Presented::None => return Some((401, self.challenge(None))),
            _ => return Some((401, self.challenge(Some("invalid_token")))),
        };
        if self.dpop()
            && let Some(challenge) = self.admit_bound(&mut state, headers, method, index)
        {
            return Some(challenge);
        }
        if let Some(step_up) = &self.script.step_up {
            let calls_it = message.is_some_and(|m| {
                m.get("method").and_then(Value::as_str) == Some("tools/call")
                    && m.pointer("/params/name").and_then(Value::as_str)
                        == Some(step_up.tool.as_str())
            });
            let granted = &state.tokens[index].scopes;
            let enough = step_up
                .scope
                .split_whitespace()
                .all(|s| granted.iter().any(|g| g == s));
            if calls_it && (step_up.always || !enough) {
                let mut header = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                    step_up.scope
                );
                if let Some(url) = self.prm_url().filter(|_| self.script.prm.in_challenge) {
                    header.push_str(&format!(", resource_metadata=\"{url}\""));
                }
                return Some((403, header));
            }
        }
        if !post {
            return None;
        }
        state.tokens[index].uses += 1;
        if state.tokens[index].server == Server::First {
            state.first_server_uses += 1;
            if self
                .script
                .migrate_after_requests
                .is_some_and(|n| state.first_server_uses >= n)
            {
                state.migrated = true;
            }
        }
        None
    }

    /// The 401 challenge's `WWW-Authenticate` value.
    fn challenge(&self, error: Option<&str>) -> String {
        let mut params = Vec::new();
        if let Some(error) = error {
            params.push(format!("error=\"{error}\""));
        }
        if let Some(url) = self.prm_url().filter(|_| self.script.prm.in_challenge) {
            params.push(format!("resource_metadata=\"{url}\""));
        }
        if let Some(scope) = &self.script.challenge_scope {
            params.push(format!("scope=\"{scope}\""));
        }
        match params.is_empty() {
            true => "Bearer".to_owned(),
            false => format!("Bearer {}", params.join(", ")),
        }
    }

    /// The labelled query of an MCP endpoint request, if it has one (a token there is a
    /// leak the wire checks look for).
    pub fn labelled_query(&self, query: Option<&str>) -> Option<serde_json::Map<String, Value>> {
        let query = query.filter(|q| !q.is_empty())?;
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let mut state = self.state();
        for (name, value) in &pairs {
            if name == "access_token" {
                state.received(value);
            }
        }
        Some(self.labelled(&state, &pairs))
    }
}
