//! Preparing a served case the way a trial is prepared (`conformance/trial.rs`): the case
//! scaled by the machine's factor, the canary's origin written into its script, and for each
//! server (the main one and a case's `servers`) either a play file and the stdio fake's
//! command line for the host to launch, or the HTTPS fake started in-process on 127.0.0.1:0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_harness_fakes::cli::Play;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::servers::MAIN;
use mcp_harness_scenarios::model::{ServerScript, TimeScale, Transport};
use mcp_harness_scenarios::transcript::Record;

use crate::conformance::canary::{Canary, CanaryRun};
use crate::conformance::http_env::{HttpEnv, HttpTrial};
use crate::conformance::trial::Bins;

/// Each extra server's records, by name.
pub type Others = BTreeMap<String, Vec<Record>>;

/// How the host reaches one server.
#[derive(Debug, Clone)]
pub enum Reach {
    /// The argv of the stdio fake the host launches.
    Command(Vec<String>),
    /// The HTTPS fake's endpoint, with the CA file the host must trust.
    Url {
        /// The endpoint.
        url: String,
        /// The run's CA (PEM).
        ca_file: String,
    },
}

/// One server of a served case.
pub struct Server {
    /// `main`, or the extra server's name.
    pub name: String,
    /// The name the host's configuration gives it.
    pub entry: String,
    /// How the host reaches it.
    pub reach: Reach,
    /// Where its fake records.
    pub transcript: PathBuf,
}

/// A case served on one transport, its fakes ready.
pub struct Served<'h> {
    /// The case, scaled and with the canary's origin written in.
    pub case: Case,
    /// The transport it is served on.
    pub transport: Transport,
    /// The main server first, then the extra ones in name order.
    pub servers: Vec<Server>,
    http: Vec<HttpTrial<'h>>,
    canary: Option<Canary>,
    _dir: tempfile::TempDir,
}

impl<'h> Served<'h> {
    /// Prepares `case` on `transport`; `http` is the run's HTTPS side (made on first use).
    pub fn prepare(
        case: &Case,
        transport: Transport,
        scale: TimeScale,
        bins: &Bins,
        http: &'h std::sync::OnceLock<Result<HttpEnv, String>>,
    ) -> Result<Served<'h>, String> {
        let mut case = case.clone();
        case.scenario = case.scenario.scaled(scale);
        let canary = match case.scenario.server.uses_canary() {
            true => Some(Canary::start().map_err(|e| format!("cannot start the canary: {e}"))?),
            false => None,
        };
        if let Some(canary) = &canary {
            case.scenario.server = case.scenario.server.with_canary(canary.origin())?;
        }
        let dir = tempfile::Builder::new()
            .prefix("mcp-harness-serve-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        let slug: String = case
            .id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let mut scripts: Vec<(String, ServerScript)> =
            vec![(MAIN.to_owned(), case.scenario.server.clone())];
        scripts.extend(case.scenario.servers.clone());
        let mut served = Served {
            case,
            transport,
            servers: Vec::new(),
            http: Vec::new(),
            canary,
            _dir: dir,
        };
        for (name, script) in scripts {
            let mut one = served.case.clone();
            one.scenario.server = script;
            one.scenario.servers.clear();
            one.scenario.bearer_token = false;
            let (entry, file) = match name == MAIN {
                true => (slug.clone(), "transcript.jsonl".to_owned()),
                false => (format!("{slug}-{name}"), format!("transcript-{name}.jsonl")),
            };
            let transcript = served._dir.path().join(file);
            let reach = match transport {
                Transport::Stdio => {
                    let play = served._dir.path().join(format!("play-{name}.json"));
                    Play::of(&one).write(&play)?;
                    Reach::Command(bins.fake_argv(one.scenario.server.wrapped, &play, &transcript))
                }
                Transport::Https => {
                    let env = http
                        .get_or_init(HttpEnv::new)
                        .as_ref()
                        .map_err(Clone::clone)?;
                    let trial = env.start_trial(&one, &transcript, None, None, Vec::new())?;
                    let var = |k: &str| {
                        trial
                            .vars
                            .iter()
                            .find(|(name, _)| *name == k)
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default()
                    };
                    let reach = Reach::Url {
                        url: trial.url.clone(),
                        ca_file: var("MCP_HARNESS_CA_FILE"),
                    };
                    served.http.push(trial);
                    reach
                }
            };
            served.servers.push(Server {
                name,
                entry,
                reach,
                transcript,
            });
        }
        Ok(served)
    }

    /// What each server has recorded so far (complete lines only: a fake may be writing),
    /// the main one first.
    pub fn records(&self) -> Result<(Vec<Record>, Others), String> {
        let mut others = BTreeMap::new();
        let mut main = Vec::new();
        for server in &self.servers {
            let records = read_complete(&server.transcript)?;
            match server.name == MAIN {
                true => main = records,
                false => {
                    others.insert(server.name.clone(), records);
                }
            }
        }
        Ok((main, others))
    }

    /// Stops the HTTPS fakes and the canary; returns what the canary saw.
    pub fn stop(&mut self) -> Option<CanaryRun> {
        for fake in self.http.drain(..) {
            fake.stop();
        }
        self.canary.take().map(Canary::finish)
    }
}

/// The complete lines of a transcript that may still grow; a missing file is empty.
fn read_complete(path: &Path) -> Result<Vec<Record>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &[],
    };
    mcp_harness_scenarios::transcript::parse(&String::from_utf8_lossy(complete))
        .map_err(|e| format!("{}: {e}", path.display()))
}
