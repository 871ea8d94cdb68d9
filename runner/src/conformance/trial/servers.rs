//! A trial's extra servers (a case's `servers`): each played by a fake of its own on the
//! trial's transport, recording into a transcript of its own, so every check that names no
//! server keeps seeing the main server alone. Over stdio each extra gets its own play file and
//! argv, over https its own in-process fake on 127.0.0.1:0. The client is told about every
//! server in `MCP_HARNESS_SERVERS` (name → `{"argv": […]}` or `{"url": …}`), the main one
//! as `main`; the variable is set only where a case has extra servers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_harness_fakes::cli::Play;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::model::servers::MAIN;
use mcp_harness_scenarios::transcript::Record;
use serde_json::{Map, Value, json};

use super::super::http_env::HttpTrial;
use super::Harness;

/// The variable naming every server of a trial with extra servers.
pub const VAR: &str = "MCP_HARNESS_SERVERS";

/// The extra servers of one trial, started (https) or ready to be launched (stdio).
#[derive(Default)]
pub(super) struct Extras<'h> {
    /// Each extra server's name and transcript, in name order.
    transcripts: Vec<(String, PathBuf)>,
    /// The https fakes, to stop once the client has ended.
    fakes: Vec<HttpTrial<'h>>,
}

/// The case an extra server plays: the trial's case with that script as its server, and
/// no extra servers, authorization or fresh bearer token of its own.
fn case_of(case: &Case, script: &mcp_harness_scenarios::model::ServerScript) -> Case {
    let mut one = case.clone();
    one.scenario.server = script.clone();
    one.scenario.servers.clear();
    one.scenario.bearer_token = false;
    one
}

/// Prepares every extra server of `case` in `dir` and tells the client about all of them
/// (`main` is how the main server is reached: its argv or URL); does nothing for a case
/// without extra servers, whose client sees no new variable.
pub(super) fn prepare<'h>(
    case: &Case,
    transport: Transport,
    harness: &'h Harness,
    dir: &Path,
    main: Value,
    cmd: &mut Command,
) -> Result<Extras<'h>, String> {
    let mut extras = Extras::default();
    if !case.scenario.has_extra_servers() {
        return Ok(extras);
    }
    let mut all = Map::new();
    all.insert(MAIN.into(), main);
    for (name, script) in &case.scenario.servers {
        let one = case_of(case, script);
        let transcript = dir.join(format!("transcript-{name}.jsonl"));
        let entry = match transport {
            Transport::Stdio => {
                let play = dir.join(format!("play-{name}.json"));
                Play::of(&one).write(&play)?;
                json!({"argv": harness.fake_argv(&play, &transcript)})
            }
            Transport::Https => {
                let token = harness.bearer_token.as_deref();
                let trial =
                    harness
                        .http()?
                        .start_trial(&one, &transcript, token, None, Vec::new())?;
                let url = trial.url.clone();
                extras.fakes.push(trial);
                json!({"url": url})
            }
        };
        all.insert(name.clone(), entry);
        extras.transcripts.push((name.clone(), transcript));
    }
    cmd.env(VAR, Value::Object(all).to_string());
    Ok(extras)
}

impl Extras<'_> {
    /// Stops the https fakes (nothing for stdio, whose fakes the client launched).
    pub(super) fn stop(&mut self) {
        for fake in self.fakes.drain(..) {
            fake.stop();
        }
    }

    /// What each extra server recorded, by name, read as the main transcript is.
    pub(super) fn records(
        &self,
        secrets: &[String],
    ) -> BTreeMap<String, Result<Vec<Record>, String>> {
        self.transcripts
            .iter()
            .map(|(name, path)| (name.clone(), super::read_transcript(path, secrets)))
            .collect()
    }

    /// The transcript each extra server's pids are checked against (its own path is on
    /// its command line).
    pub(super) fn transcript(&self, name: &str) -> Option<&Path> {
        self.transcripts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.as_path())
    }
}
