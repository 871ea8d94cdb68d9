//! The authorization server's endpoints: `/authorize` (scripted per attempt, answering with
//! a redirect the client's user agent would follow), `/token` (authorization code with PKCE
//! verified, exact redirect URI and resource checks, refresh with rotation or refusal, client
//! authentication checked against the registration), `/register` (dynamic registration) and
//! the client metadata document. Each returns its answer and the request's parameters with
//! every secret labelled, for the transcript.

use mcp_harness_scenarios::model::auth::{AuthorizeAttempt, ClientAuth, MachineAuth, RefreshMode};
use serde_json::{Map, Value, json};

use super::state::{Access, Client, Code, Refresh, State};
use super::{Auth, Server, secret};

/// An answer of an authorization endpoint.
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body, if any (else a short plain text).
    pub json: Option<Value>,
    /// The plain-text body when there is no JSON.
    pub text: &'static str,
    /// The `Location` of a redirect.
    pub location: Option<String>,
}

impl Answer {
    fn json(status: u16, body: Value) -> Answer {
        Answer {
            status,
            json: Some(body),
            text: "",
            location: None,
        }
    }

    pub(super) fn oauth_error(status: u16, error: &str, description: &str) -> Answer {
        Answer::json(
            status,
            json!({"error": error, "error_description": description}),
        )
    }

    fn bad_request(text: &'static str) -> Answer {
        Answer {
            status: 400,
            json: None,
            text,
            location: None,
        }
    }

    fn redirect(location: String) -> Answer {
        Answer {
            status: 302,
            json: None,
            text: "",
            location: Some(location),
        }
    }
}

/// Parameters as pairs (the first of a repeated name wins, as most servers do).
pub type Params = Vec<(String, String)>;

fn get<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn split_scopes(scope: Option<&str>) -> Vec<String> {
    scope
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

impl Auth {
    /// Labels a request's parameters for the transcript.
    pub fn labelled(&self, state: &State, params: &Params) -> Map<String, Value> {
        let mut out = Map::new();
        for (name, value) in params {
            if out.contains_key(name) {
                continue;
            }
            let shown = match name.as_str() {
                "state" => "[state]".to_owned(),
                "nonce" => "[nonce]".to_owned(),
                "code_challenge" => "[challenge]".to_owned(),
                "code_verifier" => "[verifier]".to_owned(),
                _ => state
                    .secret_label(value)
                    .unwrap_or_else(|| self.normalize(value)),
            };
            out.insert(name.clone(), Value::String(shown));
        }
        out
    }

    /// The client a request names at `server`: registered there, or the metadata document's
    /// URL where the server accepts it.
    fn find_client(&self, state: &State, server: Server, id: &str) -> Option<Client> {
        if let Some(client) = state.client(server, id) {
            return Some(client.clone());
        }
        let cimd = self.script.client.metadata_document
            && self.script.metadata.client_id_metadata_document_supported
            && id == self.client_metadata_url();
        cimd.then(|| Client {
            server,
            id: id.to_owned(),
            secret: None,
            method: ClientAuth::None,
            redirect_uris: vec![self.redirect_uri.clone()],
        })
    }

    /// `GET /authorize`.
    pub fn authorize(&self, server: Server, params: &Params) -> (Answer, Map<String, Value>) {
        let mut state = self.state();
        let shown = self.labelled(&state, params);
        let Some(client) =
            get(params, "client_id").and_then(|id| self.find_client(&state, server, id))
        else {
            return (
                Answer::bad_request("invalid_client: unknown client_id (no redirect)"),
                shown,
            );
        };
        let redirect = match get(params, "redirect_uri") {
            Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_owned(),
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            _ => {
                return (
                    Answer::bad_request(
                        "invalid_request: redirect_uri is not one registered for this client (no redirect)",
                    ),
                    shown,
                );
            }
        };
        let issuer = self.issuer(server);
        let request_state = get(params, "state");
        let advertised = self.script.metadata.iss_parameter_supported;
        let error_redirect = |error: &str, description: &str| {
            let mut pairs = vec![("error", error), ("error_description", description)];
            pairs.extend(request_state.map(|s| ("state", s)));
            if advertised {
                pairs.push(("iss", issuer.as_str()));
            }
            Answer::redirect(with_query(&redirect, &pairs))
        };
        if get(params, "response_type") != Some("code") {
            return (
                error_redirect("unsupported_response_type", "response_type must be code"),
                shown,
            );
        }
        let challenge = match (
            &self.script.metadata.code_challenge_methods_supported,
            get(params, "code_challenge"),
        ) {
            // No PKCE advertised: the server does not do PKCE, and ignores a challenge.
            (None, _) => None,
            (Some(_), None) => {
                return (
                    error_redirect("invalid_request", "code_challenge is required"),
                    shown,
                );
            }
            (Some(methods), Some(challenge)) => {
                let method = get(params, "code_challenge_method").unwrap_or("plain");
                if !methods.iter().any(|m| m == method) {
                    return (
                        error_redirect("invalid_request", "code_challenge_method is not supported"),
                        shown,
                    );
                }
                Some((challenge.to_owned(), method.to_owned()))
            }
        };
        if server == Server::First && state.migrated {
            return (
                error_redirect(
                    "invalid_target",
                    "this authorization server no longer serves the resource",
                ),
                shown,
            );
        }
        let index = match server {
            Server::First => 0,
            Server::Second => 1,
        };
        let attempt = self.script.attempt(state.authorizations[index]);
        state.authorizations[index] += 1;
        let iss = match attempt {
            AuthorizeAttempt::Approve
            | AuthorizeAttempt::WrongState
            | AuthorizeAttempt::WrongCode => advertised.then(|| issuer.clone()),
            AuthorizeAttempt::ApproveWithIss => Some(issuer.clone()),
            AuthorizeAttempt::ApproveWithoutIss => None,
            AuthorizeAttempt::ApproveWrongIss => Some(format!("{}/other-issuer", issuer)),
            AuthorizeAttempt::ApproveNormalizedIss => Some(format!("{issuer}/")),
            AuthorizeAttempt::Deny => {
                return (
                    error_redirect("access_denied", "the user denied the request"),
                    shown,
                );
            }
            AuthorizeAttempt::Error => {
                return (
                    error_redirect("server_error", "the authorization server failed"),
                    shown,
                );
            }
        };
        let code = secret::fresh("code-");
        state.secrets.push(code.clone());
        if attempt == AuthorizeAttempt::WrongCode {
            // Never stored: the token endpoint refuses it as it would an expired one.
            let mut pairs = vec![("code", code.as_str())];
            pairs.extend(request_state.map(|s| ("state", s)));
            pairs.extend(iss.as_deref().map(|i| ("iss", i)));
            return (Answer::redirect(with_query(&redirect, &pairs)), shown);
        }
        state.codes.push(Code {
            value: code.clone(),
            server,
            client_id: client.id.clone(),
            redirect_uri: get(params, "redirect_uri").map(str::to_owned),
            challenge,
            resource: get(params, "resource").map(str::to_owned),
            scopes: split_scopes(get(params, "scope")),
            used: false,
        });
        let wrong = "mcp-harness-wrong-state";
        let given_state = match attempt {
            AuthorizeAttempt::WrongState => Some(wrong),
            _ => request_state,
        };
        let mut pairs = vec![("code", code.as_str())];
        pairs.extend(given_state.map(|s| ("state", s)));
        pairs.extend(iss.as_deref().map(|i| ("iss", i)));
        (Answer::redirect(with_query(&redirect, &pairs)), shown)
    }

    /// `POST /token`; `basic` is the request's `Authorization` value, if any. Returns the
    /// answer, the labelled form, and the label of the `Authorization` header.
    pub fn token(
        &self,
        server: Server,
        form: &Params,
        basic: Option<&str>,
    ) -> (Answer, Map<String, Value>, Option<String>) {
        let mut state = self.state();
        for name in ["code_verifier", "client_secret"] {
            if let Some(value) = get(form, name) {
                state.received(value);
            }
        }
        let credentials = basic.and_then(secret::basic_credentials);
        if let Some((_, s)) = &credentials {
            state.received(s);
        }
        let mut shown = self.labelled(&state, form);
        let client_id = credentials
            .as_ref()
            .map(|(id, _)| id.as_str())
            .or_else(|| get(form, "client_id"));
        let client = client_id.and_then(|id| self.find_client(&state, server, id));
        let basic_label = basic.map(|_| match (&credentials, &client) {
            (Some((_, s)), Some(c)) if c.secret.as_deref() == Some(s.as_str()) => {
                format!("Basic [client credentials: {}]", c.id)
            }
            (Some(_), _) => "Basic [wrong]".to_owned(),
            (None, _) => "[invalid]".to_owned(),
        });
        if let Some(assertion) = get(form, "client_assertion") {
            state.received(assertion);
            let verdict = self.verify_assertion(server, form, assertion);
            let label = match &verdict {
                Ok(()) => "[assertion: verified]".to_owned(),
                Err(why) => format!("[assertion: refused: {why}]"),
            };
            shown.insert("client_assertion".into(), json!(label));
            return match verdict {
                Ok(()) => (
                    self.machine_grant(&mut state, server, form),
                    shown,
                    basic_label,
                ),
                Err(why) => (
                    Answer::oauth_error(401, "invalid_client", &why),
                    shown,
                    basic_label,
                ),
            };
        }
        let Some(client) = client else {
            return (
                Answer::oauth_error(401, "invalid_client", "unknown client"),
                shown,
                basic_label,
            );
        };
        // A confidential client authenticates with its secret by exactly one method (RFC
        // 6749 §2.3: never more than one per request): HTTP Basic, which an authorization
        // server must support, or the form, whichever it registered. What it registered is
        // judged by the cases' wire checks, at the level the text gives.
        let form_secret = get(form, "client_secret");
        let authenticated = match client.method {
            ClientAuth::Basic | ClientAuth::Post => match (&credentials, form_secret) {
                (Some((_, s)), None) => client.secret.as_deref() == Some(s.as_str()),
                (None, Some(s)) => client.secret.as_deref() == Some(s),
                _ => false,
            },
            ClientAuth::None => credentials.is_none() && form_secret.is_none(),
        };
        if !authenticated {
            return (
                Answer::oauth_error(
                    401,
                    "invalid_client",
                    "client authentication does not match the registered method",
                ),
                shown,
                basic_label,
            );
        }
        let answer = match get(form, "grant_type") {
            Some("authorization_code") => {
                self.redeem_code(&mut state, server, &client, form, &mut shown)
            }
            Some("refresh_token") => self.refresh(&mut state, server, &client, form),
            Some("client_credentials") if client.id == super::machine::MACHINE_ID => {
                self.machine_grant(&mut state, server, form)
            }
            _ => Answer::oauth_error(400, "unsupported_grant_type", "unsupported grant_type"),
        };
        (answer, shown, basic_label)
    }

    fn redeem_code(
        &self,
        state: &mut State,
        server: Server,
        client: &Client,
        form: &Params,
        shown: &mut Map<String, Value>,
    ) -> Answer {
        let code = get(form, "code").unwrap_or_default();
        let Some(index) = state.codes.iter().position(|c| {
            c.value == code && c.server == server && c.client_id == client.id && !c.used
        }) else {
            return Answer::oauth_error(400, "invalid_grant", "unknown, used or foreign code");
        };
        state.codes[index].used = true;
        let c = &state.codes[index];
        let verifier = get(form, "code_verifier");
        if let Some((challenge, method)) = &c.challenge {
            let matches = verifier.is_some_and(|v| secret::pkce_matches(method, challenge, v));
            if verifier.is_some() {
                let label = match matches {
                    true => "[verifier: matches]",
                    false => "[verifier: does not match]",
                };
                shown.insert("code_verifier".into(), json!(label));
            }
            if !matches {
                return Answer::oauth_error(400, "invalid_grant", "PKCE verification failed");
            }
        }
        if c.redirect_uri.is_some() && c.redirect_uri.as_deref() != get(form, "redirect_uri") {
            return Answer::oauth_error(
                400,
                "invalid_grant",
                "redirect_uri differs from the authorization request's",
            );
        }
        let resource = get(form, "resource").map(str::to_owned);
        if let (Some(asked), Some(given)) = (&c.resource, &resource)
            && asked != given
        {
            return Answer::oauth_error(
                400,
                "invalid_target",
                "resource differs from the authorization request's",
            );
        }
        let audience = resource
            .or_else(|| c.resource.clone())
            .unwrap_or_else(|| self.resource());
        let scopes = c.scopes.clone();
        let refresh = self.script.tokens.refresh != RefreshMode::None;
        self.issue(state, server, &client.id, audience, scopes, refresh)
    }

    fn refresh(&self, state: &mut State, server: Server, client: &Client, form: &Params) -> Answer {
        let given = get(form, "refresh_token").unwrap_or_default();
        let Some(index) = state.refresh.iter().position(|r| {
            r.value == given && r.server == server && r.client_id == client.id && r.valid
        }) else {
            let reused = state
                .refresh
                .iter()
                .any(|r| r.value == given && r.server == server && r.client_id == client.id);
            if reused && self.script.tokens.refresh == RefreshMode::Rotate {
                // Reuse of a rotated refresh token: the server cannot tell the client from a
                // thief, so it revokes the whole grant (RFC 9700 §4.14.2), access tokens too.
                for r in state.refresh.iter_mut() {
                    if r.server == server && r.client_id == client.id {
                        r.valid = false;
                    }
                }
                for t in state.tokens.iter_mut() {
                    if t.server == server && t.client_id == client.id {
                        t.revoked = true;
                    }
                }
                return Answer::oauth_error(
                    400,
                    "invalid_grant",
                    "a rotated refresh token was used again: the grant is revoked",
                );
            }
            return Answer::oauth_error(400, "invalid_grant", "unknown or used refresh token");
        };
        let mode = self.script.tokens.refresh;
        if mode == RefreshMode::Reject || (server == Server::First && state.migrated) {
            return Answer::oauth_error(400, "invalid_grant", "the refresh token was revoked");
        }
        let (audience, scopes) = {
            let r = &state.refresh[index];
            let audience = get(form, "resource").map_or_else(|| r.audience.clone(), str::to_owned);
            (audience, r.scopes.clone())
        };
        let rotate = mode == RefreshMode::Rotate;
        if rotate {
            state.refresh[index].valid = false;
        }
        self.issue(state, server, &client.id, audience, scopes, rotate)
    }

    fn issue(
        &self,
        state: &mut State,
        server: Server,
        client_id: &str,
        audience: String,
        scopes: Vec<String>,
        with_refresh: bool,
    ) -> Answer {
        let token = secret::fresh("at-");
        state.secrets.push(token.clone());
        let mut body = json!({
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.script.tokens.expires_in,
        });
        if !scopes.is_empty() {
            body["scope"] = json!(scopes.join(" "));
        }
        if with_refresh {
            let refresh = secret::fresh("rt-");
            state.secrets.push(refresh.clone());
            body["refresh_token"] = json!(refresh);
            state.refresh.push(Refresh {
                value: refresh,
                server,
                client_id: client_id.to_owned(),
                audience: audience.clone(),
                scopes: scopes.clone(),
                valid: true,
            });
        }
        state.tokens.push(Access {
            value: token,
            server,
            audience,
            scopes,
            uses: 0,
            client_id: client_id.to_owned(),
            revoked: false,
            jkt: None,
        });
        Answer::json(200, body)
    }

    /// A JWT client assertion (`private_key_jwt`), against the machine client's key: the
    /// assertion type, then the JWT (audience: the issuer or the token endpoint).
    fn verify_assertion(
        &self,
        server: Server,
        form: &Params,
        assertion: &str,
    ) -> Result<(), String> {
        let machine = self
            .machine
            .as_ref()
            .filter(|m| m.method == MachineAuth::PrivateKeyJwt)
            .ok_or("no client of this server authenticates with a JWT")?;
        if get(form, "client_assertion_type") != Some(super::machine::JWT_BEARER) {
            return Err(format!(
                "client_assertion_type is not {}",
                super::machine::JWT_BEARER
            ));
        }
        let issuer = self.issuer(server);
        let audiences = vec![issuer.clone(), format!("{issuer}/token")];
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        machine.verify(assertion, &audiences, now)
    }

    /// The `client_credentials` grant of the authenticated machine client: an access token
    /// for the form's `resource` (the MCP endpoint without one) and `scope`, no refresh token.
    fn machine_grant(&self, state: &mut State, server: Server, form: &Params) -> Answer {
        if get(form, "grant_type") != Some("client_credentials") {
            return Answer::oauth_error(
                400,
                "unauthorized_client",
                "this client may use the client_credentials grant only",
            );
        }
        let audience = get(form, "resource").map_or_else(|| self.resource(), str::to_owned);
        let scopes = split_scopes(get(form, "scope"));
        self.issue(
            state,
            server,
            super::machine::MACHINE_ID,
            audience,
            scopes,
            false,
        )
    }

    /// `POST /register` with a JSON body (RFC 7591).
    pub fn register(&self, server: Server, body: &Value) -> (Answer, Map<String, Value>) {
        let mut state = self.state();
        let mut shown = Map::new();
        for name in [
            "client_name",
            "redirect_uris",
            "grant_types",
            "response_types",
            "token_endpoint_auth_method",
            "scope",
            "application_type",
        ] {
            if let Some(v) = body.get(name) {
                let v = match v {
                    Value::String(s) => json!(self.normalize(s)),
                    Value::Array(items) => Value::Array(
                        items
                            .iter()
                            .map(|i| match i {
                                Value::String(s) => json!(self.normalize(s)),
                                other => other.clone(),
                            })
                            .collect(),
                    ),
                    other => other.clone(),
                };
                shown.insert(name.into(), v);
            }
        }
        if !self.script.metadata.registration {
            return (
                Answer::bad_request("this authorization server has no dynamic registration"),
                shown,
            );
        }
        let redirect_uris: Vec<String> = body
            .get("redirect_uris")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if redirect_uris.is_empty() {
            return (
                Answer::oauth_error(400, "invalid_redirect_uri", "redirect_uris is required"),
                shown,
            );
        }
        // Without a list the server takes any of the three methods the client asks for
        // (RFC 7591's default, `client_secret_basic`, when it names none).
        let supported: Vec<String> = self
            .script
            .metadata
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| {
                ["client_secret_basic", "client_secret_post", "none"]
                    .map(str::to_owned)
                    .to_vec()
            });
        let asked = body
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .unwrap_or("client_secret_basic");
        let name = match supported.iter().any(|m| m == asked) {
            true => asked.to_owned(),
            false => supported.first().cloned().unwrap_or_else(|| "none".into()),
        };
        let method = ClientAuth::from_name(&name).unwrap_or(ClientAuth::None);
        let index = match server {
            Server::First => 0,
            Server::Second => 1,
        };
        state.registrations[index] += 1;
        let prefix = match server {
            Server::First => "client",
            Server::Second => "as2-client",
        };
        let id = format!("{prefix}-{}", state.registrations[index]);
        let secret = (method != ClientAuth::None).then(|| secret::fresh("cs-"));
        state.secrets.extend(secret.clone());
        let mut answer = json!({
            "client_id": id,
            "client_id_issued_at": 0,
            "redirect_uris": redirect_uris,
            "grant_types": body.get("grant_types").cloned().unwrap_or(json!(["authorization_code", "refresh_token"])),
            "response_types": ["code"],
            "token_endpoint_auth_method": name,
        });
        if let Some(s) = &secret {
            answer["client_secret"] = json!(s);
            answer["client_secret_expires_at"] = json!(0);
        }
        state.clients.push(Client {
            server,
            id,
            secret,
            method,
            redirect_uris,
        });
        (Answer::json(201, answer), shown)
    }

    /// The client metadata document served at [`super::CLIENT_METADATA_PATH`].
    pub fn client_metadata_document(&self) -> Value {
        json!({
            "client_id": self.client_metadata_url(),
            "client_name": "mcp-harness client under test",
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        })
    }
}

/// `base` with `pairs` appended to its query, form-urlencoded.
fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        query.append_pair(k, v);
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{}", query.finish())
}
