//! What may be reached and how it is trusted: the URL policy, the TLS set-up, and telling a
//! TLS failure apart from other connection failures.
//!
//! - The URL is judged before any traffic (no DNS lookup either): it must parse and be
//!   `http` or `https`, and plain `http` is only for loopback hosts (127.0.0.0/8, `::1`,
//!   `localhost`), since anything else would carry the session and the token in clear.
//! - Certificates are always verified, against the system roots plus the caller's CA files,
//!   with ring as the one crypto provider. There is deliberately no way to switch verification
//!   off: trust is added by handing over a CA, never by skipping checks.
//! - Redirects: only a 307 or 308 to the same origin (scheme, host and port) is followed, at
//!   most [`MAX_REDIRECTS`] times; those keep the method and the body, so the message arrives
//!   whole, and the token stays with the server it was meant for. A redirect to another origin
//!   (another host, or a downgrade to plain `http://`) is refused as `insecure_url` before any
//!   connection, so a server cannot send the client, its session or its token somewhere the
//!   URL policy did not approve. A same-origin 301, 302 or 303 (which would turn the POST into
//!   a GET and lose the message) is not followed: it is reported as `http_status`. Proxies from
//!   the environment are not used either.

mod destination;

#[cfg(feature = "defects")]
pub(crate) use destination::resolve_and_judge;
// The entry points of the authorization side's discovery (`crate::auth`), which judges every
// URL it discovers with `check_discovered_url` and fetches through `auth_client`, whose
// resolver is the policy's; public at the crate root for other callers that fetch URLs a
// server names.
pub use destination::{DestinationPolicy, GuardedResolver, check_discovered_url, is_internal};

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use reqwest::Url;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::error::{Error, ErrorKind};
use crate::seams::Seams;
use crate::seams::wire::Wire;

/// How many same-origin 307/308 redirects one request may follow.
pub(super) const MAX_REDIRECTS: usize = 3;

/// Why a redirect was refused; found again in the error chain by [`send_error`].
#[derive(Debug)]
struct RedirectRefused {
    status: u16,
    location: String,
    why: &'static str,
}

impl std::fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused a {} redirect to {}: {}",
            self.status, self.location, self.why
        )
    }
}

impl std::error::Error for RedirectRefused {}

/// The redirect policy (see the module doc): follow a same-origin 307/308, stop (leaving the
/// 3xx to be reported as `http_status`) at a same-origin 301/302/303 or after too many hops,
/// refuse any other origin.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let status = attempt.status().as_u16();
        let origin = attempt.previous().first().map(Url::origin);
        let refused = |why| RedirectRefused {
            status,
            location: attempt.url().to_string(),
            why,
        };
        if origin.as_ref() != Some(&attempt.url().origin()) {
            let why = match attempt.url().scheme() {
                "https" => "another origin; redirects are only followed on the same origin",
                _ => "not https on the same origin; the session and token must not leave it",
            };
            let error = refused(why);
            return attempt.error(error);
        }
        if !matches!(status, 307 | 308) || attempt.previous().len() > MAX_REDIRECTS {
            return attempt.stop();
        }
        attempt.follow()
    })
}

/// Parses `text` and applies the URL policy (see the module doc).
pub(super) fn check_url(text: &str) -> Result<Url, Error> {
    let insecure = |why: String| Error::new(ErrorKind::InsecureUrl, why);
    let url = Url::parse(text)
        .map_err(|e| insecure(format!("the server URL {text:?} does not parse: {e}")))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(insecure(format!(
            "refusing plain http:// to {:?}: only loopback hosts (127.0.0.0/8, ::1, localhost) \
             may be reached without TLS; use https://",
            url.host_str().unwrap_or("")
        ))),
        other => Err(insecure(format!(
            "the server URL {text:?} has the scheme {other:?}; expected http or https"
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// The HTTP clients for `url`: HTTP/1.1, same-origin 307/308 redirects only, no proxy, and for
/// `https` a TLS configuration trusting the system roots plus `ca_files`. Two clients with the
/// same settings and one TLS configuration (so one session-resumption store): one for the
/// POSTs and the DELETE, one for the standalone GET stream. Each has its own connection pool,
/// so the long-lived GET never takes the idle connection a POST was about to reuse (which
/// would make that POST wait for a new TLS handshake).
pub(super) fn http_clients(
    url: &Url,
    ca_files: &[PathBuf],
    seams: &Seams,
) -> Result<(reqwest::Client, reqwest::Client), Error> {
    let tls = tls_config(url, ca_files)?;
    let client = || build_client(&tls, redirects(seams), None);
    Ok((client()?, client()?))
}

/// The TLS configuration for `url`: for `https`, the system roots plus `ca_files`.
fn tls_config(url: &Url, ca_files: &[PathBuf]) -> Result<rustls::ClientConfig, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Tls, format!("could not set up TLS: {e}")))?;
    // Plain loopback HTTP never meets a certificate, so it does not need the roots loaded.
    let tls = match (url.scheme(), ca_files.is_empty()) {
        ("https", true) => builder.with_root_certificates(system_roots()),
        ("https", false) => {
            let verifier = Layered::new(ca_roots(ca_files)?, provider)?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
        }
        _ => builder.with_root_certificates(rustls::RootCertStore::empty()),
    }
    .with_no_client_auth();
    Ok(tls)
}

/// The redirect policy with the seams' defects applied.
fn redirects(seams: &Seams) -> reqwest::redirect::Policy {
    seams.ssrf_redirects(seams.redirects(redirect_policy()))
}

/// An HTTP/1.1 client with `tls`, `redirect`, no proxy, and `policy`'s resolver if given.
fn build_client(
    tls: &rustls::ClientConfig,
    redirect: reqwest::redirect::Policy,
    policy: Option<&DestinationPolicy>,
) -> Result<reqwest::Client, Error> {
    let builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls.clone())
        .redirect(redirect)
        .no_proxy()
        .user_agent(concat!("mcp-harness-client/", env!("CARGO_PKG_VERSION")));
    match policy {
        Some(policy) => builder.dns_resolver(policy.resolver()),
        None => builder,
    }
    .build()
    .map_err(|e| Error::closed(format!("could not set up the HTTP client: {}", chain(&e))))
}

/// The client of the authorization side (`crate::auth`): https with the system roots plus
/// `ca_files`, the same redirect policy as the MCP requests, and `policy`'s resolver, so a
/// discovered name connects only to addresses the policy passed (see `destination`).
pub(crate) fn auth_client(
    ca_files: &[PathBuf],
    seams: &Seams,
    policy: &DestinationPolicy,
) -> Result<reqwest::Client, Error> {
    let https = Url::parse("https://localhost/").map_err(|e| Error::closed(e.to_string()))?;
    build_client(
        &tls_config(&https, ca_files)?,
        redirects(seams),
        Some(policy),
    )
}

/// A client that follows no redirect at all, for a caller acting as the user's browser (the
/// driver's headless authorization step reads the `Location` itself).
pub(crate) fn no_redirect_client(ca_files: &[PathBuf]) -> Result<reqwest::Client, Error> {
    let https = Url::parse("https://localhost/").map_err(|e| Error::closed(e.to_string()))?;
    build_client(
        &tls_config(&https, ca_files)?,
        reqwest::redirect::Policy::none(),
        None,
    )
}

/// The system's roots. Unreadable system locations only shrink the set.
fn system_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    roots
}

/// Verifies a server's certificate against the system roots plus the caller's CA files, but
/// tries the CA files alone first: reading and parsing the system's roots costs milliseconds
/// (every file of `SSL_CERT_DIR`), and a server whose chain ends at one of the caller's CAs
/// never needs them. Any failure is decided again by the full set, so the certificates
/// accepted, and the error of one refused, are those of the full set: a chain that verifies
/// against a subset of the roots verifies against all of them. The signature checks do not
/// depend on the roots.
#[derive(Debug)]
struct Layered {
    /// The caller's CA files alone.
    first: Arc<rustls::client::WebPkiServerVerifier>,
    ca_roots: rustls::RootCertStore,
    provider: Arc<rustls::crypto::CryptoProvider>,
    /// The system roots plus the CA files, made on first need.
    full: std::sync::OnceLock<Arc<dyn rustls::client::danger::ServerCertVerifier>>,
}

impl Layered {
    fn new(
        ca_roots: rustls::RootCertStore,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Self, Error> {
        let first = verifier(ca_roots.clone(), &provider)
            .map_err(|e| Error::new(ErrorKind::Tls, format!("could not set up TLS: {e}")))?;
        Ok(Layered {
            first,
            ca_roots,
            provider,
            full: std::sync::OnceLock::new(),
        })
    }

    fn full(&self) -> &Arc<dyn rustls::client::danger::ServerCertVerifier> {
        self.full.get_or_init(|| {
            let mut roots = system_roots();
            roots.roots.extend(self.ca_roots.roots.iter().cloned());
            // The CA roots alone already built a verifier, so this one cannot fail; if it
            // somehow did, the CA-only verifier is the strictest fallback.
            match verifier(roots, &self.provider) {
                Ok(full) => full,
                Err(_) => Arc::clone(&self.first) as _,
            }
        })
    }
}

fn verifier(
    roots: rustls::RootCertStore,
    provider: &Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<rustls::client::WebPkiServerVerifier>, rustls::client::VerifierBuilderError> {
    rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::clone(provider),
    )
    .build()
}

impl rustls::client::danger::ServerCertVerifier for Layered {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let verify = |v: &dyn rustls::client::danger::ServerCertVerifier| {
            v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        };
        verify(self.first.as_ref()).or_else(|_| verify(self.full().as_ref()))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.first.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.first.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.first.supported_verify_schemes()
    }
}

/// The roots in the caller's CA files (each must hold at least one usable certificate).
fn ca_roots(ca_files: &[PathBuf]) -> Result<rustls::RootCertStore, Error> {
    let mut roots = rustls::RootCertStore::empty();
    for path in ca_files {
        let tls = |why: String| Error::new(ErrorKind::Tls, why);
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect())
            .map_err(|e| {
                tls(format!(
                    "could not read the CA file {}: {e}",
                    path.display()
                ))
            })?;
        if certs.is_empty() {
            return Err(tls(format!(
                "the CA file {} holds no PEM certificate",
                path.display()
            )));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| tls(format!("the CA file {} is not usable: {e}", path.display())))?;
        }
    }
    Ok(roots)
}

/// Maps a failed exchange to `insecure_url` for a refused redirect, to `tls` when a TLS error
/// is anywhere in its causes, else to `transport_closed` (refused, reset, unreachable, or a
/// stream cut short).
pub(crate) fn send_error(e: &reqwest::Error, what: &str) -> Error {
    if let Some(refused) = cause::<RedirectRefused>(e) {
        return Error::new(ErrorKind::InsecureUrl, format!("{what}: {refused}"));
    }
    if let Some(refused) = cause::<destination::DestinationRefused>(e) {
        return Error::new(ErrorKind::InsecureUrl, format!("{what}: {refused}"));
    }
    match tls_cause(e) {
        Some(tls) => Error::new(
            ErrorKind::Tls,
            format!(
                "TLS failed for {what}: {tls}. Certificates are verified against the system \
                 roots plus the configured CA files"
            ),
        ),
        None if e.is_connect() => {
            Error::closed(format!("could not connect for {what}: {}", chain(e)))
        }
        None => Error::closed(format!("{what} failed: {}", chain(e))),
    }
}

/// The first `rustls::Error` among the causes of `e`.
fn tls_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    cause::<rustls::Error>(e)
}

/// The first cause of `e` (itself included) of type `T`. An `io::Error` does not list the
/// error it wraps as its source (and io errors get wrapped in io errors), so the walk steps
/// into them.
fn cause<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut next = Some(e);
    while let Some(cause) = next {
        if let Some(found) = cause.downcast_ref::<T>() {
            return Some(found);
        }
        next = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => cause.source(),
        };
    }
    None
}

/// An error and its causes, joined with ": ".
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CertificateError;

    #[test]
    fn the_url_policy_is_applied_without_traffic() {
        for ok in [
            "https://example.invalid/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://127.9.9.9/mcp",
            "http://[::1]:9/mcp",
            "http://localhost:1/mcp",
            "http://LocalHost/mcp",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.invalid/mcp",
            "http://10.0.0.1/mcp",
            "http://[::2]/mcp",
            "http://localhost.example.invalid/mcp",
            "ftp://127.0.0.1/mcp",
            "file:///tmp/x",
            "not a url",
            "",
        ] {
            let e = check_url(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InsecureUrl, "{bad}");
        }
    }

    #[test]
    fn a_certificate_error_is_found_inside_io_errors() {
        let unknown = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, unknown.clone());
        let outer = std::io::Error::other(io);
        assert_eq!(tls_cause(&outer), Some(&unknown));
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(tls_cause(&refused), None);
    }

    #[test]
    fn a_name_resolving_only_to_internal_addresses_is_refused_as_insecure_url() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = Url::parse("https://example.invalid/mcp").unwrap();
        let policy = DestinationPolicy::new(&server, &[]);
        let client = auth_client(&[], &Seams::default(), &policy).unwrap();
        let e = rt
            .block_on(client.get("https://localhost:1/.well-known/x").send())
            .unwrap_err();
        let e = send_error(&e, "the metadata");
        assert_eq!(e.kind, ErrorKind::InsecureUrl, "{}", e.message);
        assert!(e.message.contains("localhost"), "{}", e.message);
    }

    #[test]
    fn a_missing_ca_file_is_a_tls_error() {
        let e = ca_roots(&["/nonexistent/ca.pem".into()]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Tls);
        assert!(e.message.contains("/nonexistent/ca.pem"), "{}", e.message);
    }
}
