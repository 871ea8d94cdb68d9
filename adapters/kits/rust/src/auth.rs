//! Authorization trials (CLIENTS.md, "Authorization"): the OAuth variables, the kit's registry
//! of secrets, and the headless authorization step.
//!
//! Why here: every adapter of an OAuth-capable library needs the same three things around its
//! library's OAuth client: read and check `MCP_HARNESS_AUTH_*`, keep every secret it sees out
//! of what it prints (the harness fails a trial whose output shows one), and do the user's
//! part without a browser. The GET of that step needs TLS, so it is behind the `auth` feature
//! (reqwest and rustls with ring, which an HTTP adapter already builds); the rest is plain.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use crate::env::EnvError;
use crate::error::{Kind, StepError};

/// An authorization trial's OAuth client settings; present only when
/// `MCP_HARNESS_AUTH_REDIRECT_URI` is set: configure the library as an OAuth client then, and
/// only then.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// `MCP_HARNESS_AUTH_REDIRECT_URI`: the redirect URI registered for the client.
    pub redirect_uri: String,
    /// `MCP_HARNESS_AUTH_CLIENT_ID`: a pre-registered client id.
    pub client_id: Option<String>,
    /// `MCP_HARNESS_AUTH_CLIENT_SECRET`: its secret (registered with [`secret`]; never printed).
    pub client_secret: Option<String>,
    /// `MCP_HARNESS_AUTH_CLIENT_METADATA_URL`: the client's metadata document URL (CIMD).
    pub client_metadata_url: Option<String>,
    /// `MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD`: how the pre-registered client authenticates at
    /// the token endpoint, as registered (one of [`CLIENT_AUTH_METHODS`]).
    pub client_auth_method: Option<String>,
    /// `MCP_HARNESS_AUTH_CLIENT_ISSUER`: the issuer of the authorization server the
    /// pre-registered client belongs to, for a library that binds credentials to an issuer.
    pub client_issuer: Option<String>,
}

/// The token endpoint authentication methods a pre-registered client may be registered with.
pub const CLIENT_AUTH_METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[secret]"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_auth_method", &self.client_auth_method)
            .field("client_issuer", &self.client_issuer)
            .finish()
    }
}

/// The scheme and host of an absolute URL (`None` when `text` is not one).
fn scheme_and_host(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    (!scheme.is_empty() && !host.is_empty() && !host.starts_with(':')).then_some((scheme, rest))
}

fn absolute_url(
    var: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    schemes: &[&str],
) -> Result<Option<String>, EnvError> {
    let Some(text) = var(name) else {
        return Ok(None);
    };
    match scheme_and_host(&text) {
        Some((scheme, _)) if schemes.contains(&scheme) => Ok(Some(text)),
        _ => Err(EnvError {
            variable: name,
            problem: format!(
                "expected an absolute {} URL, got {text:?}",
                schemes.join("/")
            ),
        }),
    }
}

/// How a machine client authenticates (`MCP_HARNESS_CLIENT_CREDENTIALS`'s `method`).
pub const MACHINE_METHODS: [&str; 3] = [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];

/// Reads `MCP_HARNESS_CLIENT_CREDENTIALS` through `var`: a JSON object with `client_id`,
/// `method`, and the `client_secret` or `private_key_pem` it needs, which is registered for
/// redaction. `None` when unset.
pub(crate) fn read_client_credentials(
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Option<serde_json::Value>, EnvError> {
    let Some(text) = var("MCP_HARNESS_CLIENT_CREDENTIALS") else {
        return Ok(None);
    };
    let bad = |problem: String| EnvError {
        variable: "MCP_HARNESS_CLIENT_CREDENTIALS",
        problem,
    };
    let creds: serde_json::Value = serde_json::from_str(&text)
        .map_err(|_| bad("is not JSON (expected an object with client_id and method)".into()))?;
    if !creds
        .get("client_id")
        .is_some_and(serde_json::Value::is_string)
    {
        return Err(bad("has no string client_id".into()));
    }
    let method = creds.get("method").and_then(serde_json::Value::as_str);
    let Some(method) = method.filter(|m| MACHINE_METHODS.contains(m)) else {
        return Err(bad(format!(
            "has method {:?} (expected one of {})",
            creds.get("method"),
            MACHINE_METHODS.join(", ")
        )));
    };
    let needs = match method {
        "private_key_jwt" => "private_key_pem",
        _ => "client_secret",
    };
    match creds.get(needs).and_then(serde_json::Value::as_str) {
        Some(value) if !value.is_empty() => secret(value),
        _ => return Err(bad(format!("{method} needs a string {needs}"))),
    }
    if creds.get("dpop").is_some_and(|d| !d.is_boolean()) {
        return Err(bad("has dpop that is not true or false".into()));
    }
    Ok(Some(creds))
}

/// Reads the authorization variables through `var` (empty counts as unset).
pub(crate) fn read_auth(
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Option<AuthConfig>, EnvError> {
    let redirect_uri = absolute_url(var, "MCP_HARNESS_AUTH_REDIRECT_URI", &["http", "https"])?;
    let client_metadata_url =
        absolute_url(var, "MCP_HARNESS_AUTH_CLIENT_METADATA_URL", &["https"])?;
    let client_id = var("MCP_HARNESS_AUTH_CLIENT_ID");
    let client_secret = var("MCP_HARNESS_AUTH_CLIENT_SECRET");
    let client_auth_method = var("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD");
    let client_issuer = absolute_url(var, "MCP_HARNESS_AUTH_CLIENT_ISSUER", &["https"])?;
    if client_issuer.is_some() && client_id.is_none() {
        return Err(EnvError {
            variable: "MCP_HARNESS_AUTH_CLIENT_ISSUER",
            problem: "is set without MCP_HARNESS_AUTH_CLIENT_ID (expected the issuer of a pre-registered client)".into(),
        });
    }
    if let Some(method) = &client_auth_method {
        if !CLIENT_AUTH_METHODS.contains(&method.as_str()) {
            return Err(EnvError {
                variable: "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
                problem: format!(
                    "expected one of {}, got {method:?}",
                    CLIENT_AUTH_METHODS.join(", ")
                ),
            });
        }
        if client_id.is_none() {
            return Err(EnvError {
                variable: "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
                problem: "is set without MCP_HARNESS_AUTH_CLIENT_ID (expected the method of a pre-registered client)".into(),
            });
        }
    }
    let Some(redirect_uri) = redirect_uri else {
        let extra = [
            ("MCP_HARNESS_AUTH_CLIENT_ID", client_id.is_some()),
            ("MCP_HARNESS_AUTH_CLIENT_SECRET", client_secret.is_some()),
            (
                "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
                client_metadata_url.is_some(),
            ),
        ];
        return match extra.iter().find(|(_, set)| *set) {
            Some((variable, _)) => Err(EnvError {
                variable,
                problem: "is set without MCP_HARNESS_AUTH_REDIRECT_URI (expected both on an authorization trial)".into(),
            }),
            None => Ok(None),
        };
    };
    if client_secret.is_some() && client_id.is_none() {
        return Err(EnvError {
            variable: "MCP_HARNESS_AUTH_CLIENT_SECRET",
            problem: "is set without MCP_HARNESS_AUTH_CLIENT_ID (expected the id with its secret)"
                .into(),
        });
    }
    if let Some(value) = &client_secret {
        secret(value);
    }
    Ok(Some(AuthConfig {
        redirect_uri,
        client_id,
        client_secret,
        client_metadata_url,
        client_auth_method,
        client_issuer,
    }))
}

/// Reads `MCP_HARNESS_LOCAL_ORIGINS`: space-separated origins (`https://localhost:8443`).
pub(crate) fn read_local_origins(
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, EnvError> {
    let raw = var("MCP_HARNESS_LOCAL_ORIGINS").unwrap_or_default();
    raw.split_whitespace()
        .map(|origin| {
            let trimmed = origin.strip_suffix('/').unwrap_or(origin);
            match scheme_and_host(trimmed) {
                Some(("http" | "https", rest)) if !rest.contains(['/', '?', '#']) => {
                    Ok(trimmed.to_owned())
                }
                _ => Err(EnvError {
                    variable: "MCP_HARNESS_LOCAL_ORIGINS",
                    problem: format!(
                        "expected space-separated origins such as https://localhost:8443, got {origin:?}"
                    ),
                }),
            }
        })
        .collect()
}

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Registers `value` as a secret: from now on it is blanked out of every outcome line and of
/// [`crate::redact`]'s output. Hand the kit every token, code or client secret your library
/// lets you see; the harness fails a trial whose output shows one. Empty values are ignored.
pub fn secret(value: &str) {
    if value.is_empty() {
        return;
    }
    let mut secrets = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| s == value) {
        secrets.push(value.to_owned());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` with every registered secret replaced by `[secret]`.
pub(crate) fn redact_registered(text: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = text.to_owned();
    for value in secrets.iter() {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), "[secret]");
        }
    }
    out
}

/// The URL a browser would go to after the authorization endpoint answered `status` with
/// `location`: the `Location` of a 3xx, made absolute against `url`. Anything else is
/// `auth_failed` (a non-redirect answer, or a redirect without a `Location`).
pub fn authorization_redirect(
    url: &str,
    status: u16,
    location: Option<&str>,
) -> Result<String, StepError> {
    if !(300..=399).contains(&status) {
        return Err(StepError::new(
            Kind::AuthFailed,
            format!("the authorization endpoint answered {status}, not a redirect"),
        ));
    }
    let Some(location) = location.filter(|l| !l.is_empty()) else {
        return Err(StepError::new(
            Kind::AuthFailed,
            format!("the authorization endpoint answered {status} without a Location"),
        ));
    };
    Ok(resolve(url, location))
}

/// `location` made absolute against `base` (absolute, scheme-relative, absolute-path and
/// relative-path references).
fn resolve(base: &str, location: &str) -> String {
    if scheme_and_host(location).is_some() {
        return location.to_owned();
    }
    let (scheme, rest) = base.split_once("://").unwrap_or(("https", base));
    if let Some(net) = location.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    if location.starts_with('/') {
        return format!("{scheme}://{authority}{location}");
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    format!("{scheme}://{authority}{dir}{location}")
}

/// The query parameters of a redirect (`code`, `state`, `iss`, or `error`,
/// `error_description`, `state`), percent-decoded, first value of each. Parsing only: nothing
/// is checked.
pub fn callback_params(location: &str) -> BTreeMap<String, String> {
    let query = location
        .split_once('?')
        .map_or("", |(_, q)| q.split('#').next().unwrap_or(""));
    let mut params = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        params
            .entry(form_decode(name))
            .or_insert_with(|| form_decode(value));
    }
    params
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space; a bad escape is kept as is).
fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The user's part of an authorization without a browser: GETs the authorization URL
/// (trusting `ca_file`, the run's CA, when given), never follows a redirect, and returns the
/// redirect's `Location`, the URL a browser would have been sent to. Hand it to the library's
/// callback handling as is: the library, not the adapter, checks `state` and `iss`. A
/// non-redirect answer or an unreachable endpoint is `auth_failed`. Call it within a Tokio
/// runtime (reqwest's).
#[cfg(feature = "auth")]
pub async fn headless_authorize(
    url: &str,
    ca_file: Option<&str>,
    timeout: std::time::Duration,
) -> Result<String, StepError> {
    let failed = |what: String| StepError::new(Kind::AuthFailed, what);
    let mut roots = rustls::RootCertStore::empty();
    if let Some(path) = ca_file {
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        for cert in CertificateDer::pem_file_iter(path)
            .map_err(|e| failed(format!("cannot read the CA file {path}: {e}")))?
        {
            let cert = cert.map_err(|e| failed(format!("a bad certificate in {path}: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| failed(format!("a certificate in {path} was refused: {e}")))?;
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| failed(format!("TLS set-up failed: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .map_err(|e| failed(format!("the HTTP client could not be built: {e}")))?;
    let response = client
        .get(url)
        .header("accept", "text/html")
        .send()
        .await
        .map_err(|e| {
            failed(format!(
                "the authorization endpoint could not be reached: {}",
                crate::chain_text(&e)
            ))
        })?;
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    authorization_redirect(url, response.status().as_u16(), location.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        let pairs = pairs.to_vec();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    const REDIRECT: (&str, &str) = (
        "MCP_HARNESS_AUTH_REDIRECT_URI",
        "http://127.0.0.1:9/callback",
    );

    #[test]
    fn the_variables_read_and_the_secret_is_registered() {
        assert_eq!(read_auth(&vars(&[])).unwrap(), None);
        let auth = read_auth(&vars(&[
            REDIRECT,
            ("MCP_HARNESS_AUTH_CLIENT_ID", "pre"),
            ("MCP_HARNESS_AUTH_CLIENT_SECRET", "client-s3cret"),
            (
                "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
                "https://localhost:2/client.json",
            ),
            ("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD", "none"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(auth.client_id.as_deref(), Some("pre"));
        assert_eq!(auth.client_auth_method.as_deref(), Some("none"));
        assert!(!format!("{auth:?}").contains("client-s3cret"));
        assert_eq!(redact_registered("is client-s3cret"), "is [secret]");
        let origins = vars(&[(
            "MCP_HARNESS_LOCAL_ORIGINS",
            " https://localhost:3  https://localhost:4/ ",
        )]);
        assert_eq!(
            read_local_origins(&origins).unwrap(),
            ["https://localhost:3", "https://localhost:4"]
        );
    }

    #[test]
    fn each_mistake_names_its_variable() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("MCP_HARNESS_AUTH_REDIRECT_URI", "/callback")],
                "MCP_HARNESS_AUTH_REDIRECT_URI",
            ),
            (
                &[
                    REDIRECT,
                    ("MCP_HARNESS_AUTH_CLIENT_METADATA_URL", "http://x/c.json"),
                ],
                "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
            ),
            (
                &[REDIRECT, ("MCP_HARNESS_AUTH_CLIENT_SECRET", "x")],
                "MCP_HARNESS_AUTH_CLIENT_SECRET",
            ),
            (
                &[("MCP_HARNESS_AUTH_CLIENT_ID", "orphan")],
                "MCP_HARNESS_AUTH_CLIENT_ID",
            ),
            (
                &[
                    REDIRECT,
                    ("MCP_HARNESS_AUTH_CLIENT_ID", "pre"),
                    ("MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD", "private_key_jwt"),
                ],
                "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
            ),
            (
                &[
                    REDIRECT,
                    ("MCP_HARNESS_AUTH_CLIENT_ISSUER", "https://localhost:5"),
                ],
                "MCP_HARNESS_AUTH_CLIENT_ISSUER",
            ),
        ];
        for (pairs, variable) in cases {
            assert_eq!(
                read_auth(&vars(pairs)).unwrap_err().variable,
                *variable,
                "{pairs:?}"
            );
        }
        let bad = vars(&[("MCP_HARNESS_LOCAL_ORIGINS", "https://localhost:3/path")]);
        assert_eq!(
            read_local_origins(&bad).unwrap_err().variable,
            "MCP_HARNESS_LOCAL_ORIGINS"
        );
    }

    #[test]
    fn only_a_redirect_with_a_location_is_the_users_answer() {
        let url = "https://localhost:5/oauth/authorize?state=abc";
        assert_eq!(
            authorization_redirect(url, 302, Some("http://127.0.0.1:9/callback?code=c")).unwrap(),
            "http://127.0.0.1:9/callback?code=c"
        );
        assert_eq!(
            authorization_redirect(url, 303, Some("/cb?code=c")).unwrap(),
            "https://localhost:5/cb?code=c"
        );
        assert_eq!(
            authorization_redirect(url, 302, Some("cb?x=1")).unwrap(),
            "https://localhost:5/oauth/cb?x=1"
        );
        for (status, location) in [(200, None), (400, None), (302, None), (302, Some(""))] {
            let error = authorization_redirect(url, status, location).unwrap_err();
            assert_eq!(error.kind, Kind::AuthFailed, "{status} {location:?}");
        }
    }

    #[test]
    fn callback_params_decode_and_check_nothing() {
        let params = callback_params(
            "http://127.0.0.1:9/callback?code=c%2B1&state=s&iss=https%3A%2F%2Fas&state=x&e=a+b#f",
        );
        assert_eq!(params["code"], "c+1");
        assert_eq!(params["state"], "s");
        assert_eq!(params["iss"], "https://as");
        assert_eq!(params["e"], "a b");
    }

    /// A one-request plain-HTTP authorization endpoint on loopback; its URL and the request
    /// line it saw.
    #[cfg(feature = "auth")]
    fn endpoint(answer: &'static str) -> (String, std::thread::JoinHandle<String>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/authorize?state=abc",
            listener.local_addr().unwrap()
        );
        let seen = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 2 {
                line.clear();
            }
            (&stream).write_all(answer.as_bytes()).unwrap();
            first.trim_end().to_owned()
        });
        (url, seen)
    }

    #[cfg(feature = "auth")]
    #[test]
    fn the_headless_step_takes_the_location_without_following_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let run = |answer| {
            let (url, seen) = endpoint(answer);
            let got = runtime.block_on(headless_authorize(
                &url,
                None,
                std::time::Duration::from_secs(5),
            ));
            (got, seen.join().unwrap())
        };
        let (got, seen) = run(
            "HTTP/1.1 302 Found\r\nLocation: /callback?code=c1&state=abc\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(got.unwrap().ends_with("/callback?code=c1&state=abc"));
        assert_eq!(seen, "GET /authorize?state=abc HTTP/1.1");
        let (got, _) = run("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(got.unwrap_err().kind, Kind::AuthFailed);
        let unreachable = runtime.block_on(headless_authorize(
            "http://127.0.0.1:9/authorize",
            None,
            std::time::Duration::from_secs(2),
        ));
        assert_eq!(unreachable.unwrap_err().kind, Kind::AuthFailed);
    }
}
