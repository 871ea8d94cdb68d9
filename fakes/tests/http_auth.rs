//! Drives the authorization fake end to end over loopback TLS with a hand-written OAuth
//! client: the 401 challenge, PRM, authorization server metadata, dynamic registration,
//! `/authorize` with PKCE, `/token`, the bearer on the MCP endpoint, refresh with rotation,
//! step-up, and the transcript's labels (no secret in it).

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine;
use mcp_harness_fakes::http::{self, HttpFakeConfig, RunningHttpFake};
use mcp_harness_scenarios::model::{Endpoint, Scenario};
use mcp_harness_scenarios::transcript::{self, Event};
use rustls::ClientConfig;
use serde_json::{Value, json};
use support::trial::{ACCEPT_BOTH, INIT, WAIT, pki};
use support::{Reply, connect, request, trusting};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

struct Auth {
    fake: RunningHttpFake,
    tls: Arc<ClientConfig>,
    transcript: std::path::PathBuf,
}

impl Auth {
    async fn start(name: &str, auth: Value) -> Auth {
        let scenario = Scenario::serving(
            serde_json::from_value(json!({"auth": auth, "http": {"sessions": false}})).unwrap(),
        );
        let transcript =
            std::env::temp_dir().join(format!("mcp-fake-auth-{name}-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&transcript);
        let fake = http::start(HttpFakeConfig {
            scenario: Arc::new(scenario),
            transcript: transcript.clone(),
            tls: pki().server_config(Endpoint::Trusted),
            bearer_token: None,
            revision: None,
            auth_redirect_uri: Some(REDIRECT.to_owned()),
        })
        .await
        .unwrap();
        Auth {
            fake,
            tls: trusting(pki().ca_pem()),
            transcript,
        }
    }

    async fn call(&self, url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let rest = url
            .strip_prefix("https://localhost:")
            .expect("a harness URL");
        let (port, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut stream = connect(addr, Some(&self.tls)).await.unwrap();
        request(&mut stream, method, path, headers, body, WAIT).await
    }

    fn mcp(&self) -> String {
        format!("https://localhost:{}/mcp", self.fake.addr.port())
    }

    async fn post_mcp(&self, token: Option<&str>, body: &str) -> Reply {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT_BOTH),
        ];
        if let Some(b) = &bearer {
            headers.push(("Authorization", b));
        }
        self.call(&self.mcp(), "POST", &headers, body).await
    }

    async fn finish(self) -> (Vec<Event>, Vec<String>) {
        let secrets = self.fake.stop().await;
        let text = std::fs::read_to_string(&self.transcript).unwrap();
        let _ = std::fs::remove_file(&self.transcript);
        for s in &secrets {
            assert!(
                !text.contains(s.as_str()),
                "a secret reached the transcript"
            );
        }
        let events = transcript::parse(&text)
            .unwrap()
            .into_iter()
            .map(|r| r.event)
            .collect();
        (events, secrets)
    }
}

fn json_of(reply: &Reply) -> Value {
    serde_json::from_slice(&reply.body).unwrap_or(Value::Null)
}

fn quoted(header: &str, name: &str) -> Option<String> {
    let at = header.find(&format!("{name}=\""))? + name.len() + 2;
    Some(header[at..].split('"').next()?.to_owned())
}

fn query_of(location: &str) -> Vec<(String, String)> {
    let query = location.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

const VERIFIER: &str = "mcp-harness-test-verifier-0123456789abcdefghijklmnop";
const CHALLENGE: &str = "KHmI78xljVtWWA-SAl7RKL1_KXOPRrN-GjqCt_wwUPA";

/// Discovery, registration and one authorization; returns the token answer and the
/// registered client id.
async fn authorize(t: &Auth, scope: &str) -> (Value, String, String) {
    let challenge = t.post_mcp(None, INIT).await;
    assert_eq!(challenge.status, 401);
    let www = challenge.header("www-authenticate").unwrap().to_owned();
    let prm_url = quoted(&www, "resource_metadata").expect("resource_metadata");
    assert!(
        prm_url.ends_with("/.well-known/oauth-protected-resource/mcp"),
        "{www}"
    );
    let prm = json_of(&t.call(&prm_url, "GET", &[], "").await);
    assert_eq!(prm["resource"], json!(t.mcp()));
    let issuer = prm["authorization_servers"][0].as_str().unwrap().to_owned();
    let meta = json_of(
        &t.call(
            &format!("{issuer}/.well-known/oauth-authorization-server"),
            "GET",
            &[],
            "",
        )
        .await,
    );
    assert_eq!(meta["issuer"], json!(issuer));
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    let reg = t
        .call(
            meta["registration_endpoint"].as_str().unwrap(),
            "POST",
            &[("Content-Type", "application/json")],
            &json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "t"})
                .to_string(),
        )
        .await;
    assert_eq!(reg.status, 201, "{}", reg.text());
    let client_id = json_of(&reg)["client_id"].as_str().unwrap().to_owned();
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("state", "st-1")
        .append_pair("code_challenge", CHALLENGE)
        .append_pair("code_challenge_method", "S256")
        .append_pair("resource", &t.mcp())
        .append_pair("scope", scope)
        .finish();
    let authz = meta["authorization_endpoint"].as_str().unwrap();
    let redirect = t.call(&format!("{authz}?{query}"), "GET", &[], "").await;
    assert_eq!(redirect.status, 302, "{}", redirect.text());
    let location = redirect.header("location").unwrap().to_owned();
    assert!(location.starts_with(REDIRECT), "{location}");
    let back = query_of(&location);
    assert_eq!(param(&back, "state"), Some("st-1"));
    let code = param(&back, "code").unwrap().to_owned();
    let form = |verifier: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", &code)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("code_verifier", verifier)
            .append_pair("client_id", &client_id)
            .append_pair("resource", &t.mcp())
            .finish()
    };
    let token_url = meta["token_endpoint"].as_str().unwrap().to_owned();
    let form_type = [("Content-Type", "application/x-www-form-urlencoded")];
    let token = t
        .call(&token_url, "POST", &form_type, &form(VERIFIER))
        .await;
    assert_eq!(token.status, 200, "{}", token.text());
    let replay = t
        .call(&token_url, "POST", &form_type, &form(VERIFIER))
        .await;
    assert_eq!(replay.status, 400, "a code works once");
    (json_of(&token), client_id, token_url)
}

#[tokio::test]
async fn a_full_authorization_then_refresh_with_rotation() {
    let t = Auth::start(
        "full",
        json!({"challenge_scope": "mcp:read", "tokens": {"valid_for_requests": 2, "refresh": "rotate"}}),
    )
    .await;
    let (token, client_id, token_url) = authorize(&t, "mcp:read").await;
    let access = token["access_token"].as_str().unwrap();
    assert_eq!(token["scope"], json!("mcp:read"));
    let init = t.post_mcp(Some(access), INIT).await;
    assert_eq!(init.status, 200, "{}", init.text());
    let second = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    assert_eq!(t.post_mcp(Some(access), &second).await.status, 200);
    let expired = t.post_mcp(Some(access), &second).await;
    assert_eq!(expired.status, 401);
    assert!(
        expired
            .header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    let refresh = |rt: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "refresh_token")
            .append_pair("refresh_token", rt)
            .append_pair("client_id", &client_id)
            .finish()
    };
    let form_type = [("Content-Type", "application/x-www-form-urlencoded")];
    let first_rt = token["refresh_token"].as_str().unwrap();
    let renewed = t
        .call(&token_url, "POST", &form_type, &refresh(first_rt))
        .await;
    assert_eq!(renewed.status, 200, "{}", renewed.text());
    let renewed = json_of(&renewed);
    assert_ne!(renewed["refresh_token"], token["refresh_token"], "rotated");
    let access2 = renewed["access_token"].as_str().unwrap();
    assert_eq!(t.post_mcp(Some(access2), &second).await.status, 200);
    let old = t
        .call(&token_url, "POST", &form_type, &refresh(first_rt))
        .await;
    assert_eq!(
        old.status, 400,
        "the rotated-out refresh token no longer works"
    );
    // Its reuse revoked the whole grant: the new access token and refresh token too.
    assert_eq!(t.post_mcp(Some(access2), &second).await.status, 401);
    let second_rt = renewed["refresh_token"].as_str().unwrap();
    let revoked = t
        .call(&token_url, "POST", &form_type, &refresh(second_rt))
        .await;
    assert_eq!(revoked.status, 400, "{}", revoked.text());
    let (events, secrets) = t.finish().await;
    assert!(secrets.len() >= 6, "{}", secrets.len());
    let tokens: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            Event::HttpRequest {
                endpoint: Some(ep),
                params,
                headers,
                ..
            } if ep == "token" => {
                Some(json!({"params": params, "auth": headers.get("authorization")}))
            }
            _ => None,
        })
        .collect();
    assert_eq!(tokens[0]["params"]["code"], json!("[code 1]"));
    assert_eq!(
        tokens[0]["params"]["code_verifier"],
        json!("[verifier: matches]")
    );
    assert_eq!(tokens[0]["params"]["redirect_uri"], json!("[redirect uri]"));
    assert_eq!(tokens[0]["params"]["resource"], json!("https://{mcp}/mcp"));
    assert_eq!(tokens[2]["params"]["refresh_token"], json!("[refresh 1]"));
    let mcp: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::HttpRequest {
                origin: Some(o),
                endpoint: None,
                headers,
                ..
            } if o == "mcp" => Some(headers.get("authorization").cloned()),
            _ => None,
        })
        .collect();
    assert_eq!(
        mcp,
        vec![
            None,
            Some("Bearer [valid]".into()),
            Some("Bearer [valid]".into()),
            Some("Bearer [expired]".into()),
            Some("Bearer [valid]".into()),
            Some("Bearer [revoked]".into()),
        ]
    );
}

#[tokio::test]
async fn wrong_verifier_and_step_up() {
    let t = Auth::start(
        "stepup",
        json!({"step_up": {"tool": "write", "scope": "mcp:read mcp:write"}}),
    )
    .await;
    let (token, _, _) = authorize(&t, "mcp:read").await;
    let access = token["access_token"].as_str().unwrap();
    let call =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write"}});
    let refused = t.post_mcp(Some(access), &call.to_string()).await;
    assert_eq!(refused.status, 403);
    let www = refused.header("www-authenticate").unwrap();
    assert!(
        www.contains("insufficient_scope") && www.contains("scope=\"mcp:read mcp:write\""),
        "{www}"
    );
    let (token, _, _) = authorize(&t, "mcp:read mcp:write").await;
    let access = token["access_token"].as_str().unwrap();
    assert_eq!(
        t.post_mcp(Some(access), &call.to_string()).await.status,
        200
    );
    let _ = t.finish().await;
}

#[tokio::test]
async fn an_unregistered_redirect_uri_is_never_redirected_to() {
    let t = Auth::start("redirect", json!({"client": {"pre_registered": "basic"}})).await;
    let vars = t.fake.auth_vars();
    let secret = vars
        .iter()
        .find(|(k, _)| *k == "MCP_HARNESS_AUTH_CLIENT_SECRET")
        .map(|(_, v)| v.clone())
        .unwrap();
    let issuer_port = vars
        .iter()
        .find(|(k, _)| *k == "MCP_HARNESS_LOCAL_ORIGINS")
        .map(|(_, v)| v.split(' ').nth(1).unwrap().to_owned())
        .unwrap();
    let query = format!(
        "response_type=code&client_id=mcp-harness-client&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fother&code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    let refused = t
        .call(&format!("{issuer_port}/authorize?{query}"), "GET", &[], "")
        .await;
    assert_eq!(refused.status, 400);
    assert!(refused.header("location").is_none());
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("mcp-harness-client:{secret}"));
    let wrong = t
        .call(
            &format!("{issuer_port}/token"),
            "POST",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", &format!("Basic {basic}x")),
            ],
            "grant_type=authorization_code&code=nope",
        )
        .await;
    assert_eq!(wrong.status, 401);
    let (events, _) = t.finish().await;
    let shown = format!("{events:?}");
    assert!(!shown.contains(&secret));
}
