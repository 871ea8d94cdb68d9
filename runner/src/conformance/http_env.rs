//! The Streamable HTTP side of a run: one tokio runtime that hosts every trial's HTTPS fake
//! in-process, and the run's certificates, made once by rcgen, with the trusted CA written to
//! a file that clients are told to trust. Starting a fake is then a bind on 127.0.0.1:0, with
//! no process start and no key generation per trial.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_harness_fakes::http::{self as fake, HttpFakeConfig, RunningHttpFake};
use mcp_harness_fakes::tls::Pki;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Endpoint;

/// The reserved name used for the insecure-URL case: it never resolves, so nothing can leave.
pub const INSECURE_HOST: &str = "mcp-harness.invalid";

/// The run-wide HTTP environment.
pub struct HttpEnv {
    runtime: tokio::runtime::Runtime,
    pki: Pki,
    ca_file: PathBuf,
    _dir: tempfile::TempDir,
}

/// One trial's running fake and what the client must be told about it.
pub struct HttpTrial<'a> {
    env: &'a HttpEnv,
    fake: RunningHttpFake,
    /// Variables for the client's environment (URL, CA, token).
    pub vars: Vec<(&'static str, String)>,
    /// The endpoint URL, also passed as the client's last argument.
    pub url: String,
    /// The bearer token handed to the client, if the case asks for one.
    pub token: Option<String>,
}

impl HttpEnv {
    /// Makes the runtime (two worker threads) and the run's certificates.
    pub fn new() -> Result<HttpEnv, String> {
        HttpEnv::with_workers(2)
    }

    /// Makes the runtime with `workers` threads and the run's certificates. A run gives it one
    /// per trial it runs at once: on a busy machine each thread gets its share of the cores,
    /// and the fakes of every trial at once must not get less, together, than one client.
    pub fn with_workers(workers: usize) -> Result<HttpEnv, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
        let pki = Pki::generate()?;
        let dir = tempfile::Builder::new()
            .prefix("mcp-harness-run-")
            .tempdir()
            .map_err(|e| format!("cannot make the run directory: {e}"))?;
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, pki.ca_pem())
            .map_err(|e| format!("cannot write {}: {e}", ca_file.display()))?;
        Ok(HttpEnv {
            runtime,
            pki,
            ca_file,
            _dir: dir,
        })
    }

    /// Starts the fake for `case`, recording into `transcript`.
    pub fn start(&self, case: &Case, transcript: &Path) -> Result<HttpTrial<'_>, String> {
        self.start_with_token(case, transcript, None)
    }

    /// Starts the fake for `case`; with `run_token`, the client gets that bearer token and the
    /// fake requires it, whether or not the case asks for one.
    pub fn start_with_token(
        &self,
        case: &Case,
        transcript: &Path,
        run_token: Option<&str>,
    ) -> Result<HttpTrial<'_>, String> {
        self.start_trial(case, transcript, run_token, None, Vec::new())
    }

    /// Starts the fake for `case`, as [`HttpEnv::start_with_token`]; with `auth` (a case with
    /// `server.auth`), the fake plays its authorization side for a client registered with
    /// that redirect listener, and the client gets the authorization variables. With
    /// `listeners` (a trial's network namespace: `localhost:8443` first, then spare listeners
    /// on `127.0.0.1:0` for the authorization origins), the fake serves there.
    pub fn start_trial(
        &self,
        case: &Case,
        transcript: &Path,
        run_token: Option<&str>,
        auth: Option<&super::auth_env::AuthEnv>,
        listeners: Vec<std::net::TcpListener>,
    ) -> Result<HttpTrial<'_>, String> {
        let isolated = !listeners.is_empty();
        let endpoint = case.scenario.server.http.endpoint;
        // An authorization case's tokens come from its authorization server: a run-wide
        // token (`--bearer-token`) is not handed to its client.
        let token = match case.scenario.server.auth {
            Some(_) => None,
            None => run_token
                .map(str::to_owned)
                .or_else(|| case.scenario.bearer_token.then(secret_token)),
        };
        let config = HttpFakeConfig {
            scenario: Arc::new(case.scenario.clone()),
            transcript: transcript.to_owned(),
            tls: self.pki.server_config(endpoint),
            bearer_token: token.clone(),
            revision: case.revision.clone(),
            auth_redirect_uri: auth.map(|a| a.redirect_uri.clone()),
        };
        let fake = match isolated {
            false => self.runtime.block_on(fake::start(config)),
            true => {
                let mut listeners = listeners;
                let spare = listeners.split_off(listeners.len().min(2));
                self.runtime
                    .block_on(fake::start_on_std(config, listeners, spare))
            }
        }
        .map_err(|e| format!("cannot start the HTTPS fake: {e}"))?;
        let port = fake.addr.port();
        let url = match endpoint {
            Endpoint::Trusted | Endpoint::UntrustedCa | Endpoint::WrongName => {
                format!("https://localhost:{port}/mcp")
            }
            Endpoint::PlainLoopback => format!("http://127.0.0.1:{port}/mcp"),
            Endpoint::InsecureRemote => format!("http://{INSECURE_HOST}:{port}/mcp"),
        };
        let ca = self.ca_file.to_string_lossy().into_owned();
        let mut vars = vec![
            ("MCP_HARNESS_SERVER_URL", url.clone()),
            ("MCP_HARNESS_CA_FILE", ca.clone()),
            ("SSL_CERT_FILE", ca.clone()),
            ("NODE_EXTRA_CA_CERTS", ca),
        ];
        if let Some(token) = &token {
            vars.push(("MCP_HARNESS_BEARER_TOKEN", token.clone()));
        }
        if let Some(auth) = auth {
            vars.extend(auth.vars());
            vars.extend(fake.auth_vars());
        } else if isolated {
            // The user's local policy: only the server itself (always allowed anyway).
            vars.push((
                "MCP_HARNESS_LOCAL_ORIGINS",
                format!("https://localhost:{port}"),
            ));
        }
        Ok(HttpTrial {
            env: self,
            fake,
            vars,
            url,
            token,
        })
    }
}

impl HttpTrial<'_> {
    /// Stops the fake: no connection or hanging request survives the trial. Returns the
    /// secrets its authorization side made or received (none without one).
    pub fn stop(self) -> Vec<String> {
        self.env.runtime.block_on(self.fake.stop())
    }
}

/// A fresh, unguessable-enough token: 128 bits from the process's random hasher seeds.
fn secret_token() -> String {
    let word = || RandomState::new().build_hasher().finish();
    format!("mcp-harness-secret-{:016x}{:016x}", word(), word())
}
