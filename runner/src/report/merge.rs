//! The runs of a matrix from `results.json` files (`mcp-harness matrix`, `cargo xtask sdk
//! all`). A client is the `client` name its results carry (`--client-name`, else `reference`
//! or the command line): files of the same client are shards of one run and merge into one
//! column; other clients go side by side, in the order first given. Within one client a trial
//! may come from one file only: a trial in two files is an error naming both, whether or not
//! they agree, since the matrix cannot tell which to show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{RunResults, TrialResult};

/// The `results.json` a path names: the file itself, or `DIR/results.json` for a report
/// directory.
pub fn results_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    }
}

/// Reads every file (see [`results_file`]) and merges them by client ([`merge`]).
pub fn load_runs(paths: &[PathBuf]) -> Result<Vec<RunResults>, String> {
    let mut loaded = Vec::with_capacity(paths.len());
    for path in paths {
        let file = results_file(path);
        let run = RunResults::load(&file)?;
        loaded.push((file, run));
    }
    merge(loaded)
}

/// Merges runs by client name, in the order each client first appears. A client's shards
/// must agree on the boundary profile; its wall time is its longest shard's (shards run side
/// by side), its time scale the first shard's (each trial keeps its own). The error names
/// both files of a trial run twice, or of a profile that differs.
pub fn merge(loaded: Vec<(PathBuf, RunResults)>) -> Result<Vec<RunResults>, String> {
    let mut clients: Vec<(PathBuf, RunResults, BTreeMap<String, PathBuf>)> = Vec::new();
    for (file, run) in loaded {
        let Some(at) = clients.iter().position(|(_, c, _)| c.client == run.client) else {
            let seen = run
                .trials
                .iter()
                .map(|t| (t.name.clone(), file.clone()))
                .collect();
            if let Some(name) = repeated(&run.trials) {
                return Err(listed_twice(&file, name));
            }
            clients.push((file, run, seen));
            continue;
        };
        let (first, merged, seen) = &mut clients[at];
        if merged.profile != run.profile {
            return Err(format!(
                "{} and {}: both are client {:?}, but one ran with the boundary profile and the other with --spec-only; a client's shards must run with the same flags",
                first.display(),
                file.display(),
                run.client
            ));
        }
        if let Some(name) = repeated(&run.trials) {
            return Err(listed_twice(&file, name));
        }
        for trial in &run.trials {
            if let Some(earlier) = seen.insert(trial.name.clone(), file.clone()) {
                return Err(twice(&run.client, &trial.name, &earlier, &file));
            }
        }
        merged.seconds = merged.seconds.max(run.seconds);
        merged.trials.extend(run.trials);
    }
    Ok(clients
        .into_iter()
        .map(|(_, mut run, _)| {
            run.trials.sort_by(|a, b| a.name.cmp(&b.name));
            run
        })
        .collect())
}

/// A trial name that one file lists twice.
fn repeated(trials: &[TrialResult]) -> Option<&str> {
    let mut names: Vec<&str> = trials.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

fn listed_twice(file: &Path, trial: &str) -> String {
    format!(
        "{}: trial {trial} is listed twice; expected each trial once, as a run writes it",
        file.display()
    )
}

fn twice(client: &str, trial: &str, a: &Path, b: &Path) -> String {
    format!(
        "trial {trial} of client {client:?} is in both {} and {}: a client's shards must not overlap (give each client its own --client-name)",
        a.display(),
        b.display()
    )
}

/// Writes `matrix.html` of the runs in `paths` to `out`; returns the merged runs.
pub fn write_matrix(paths: &[PathBuf], out: &Path) -> Result<Vec<RunResults>, String> {
    if paths.is_empty() {
        return Err("no results.json given".into());
    }
    let runs = load_runs(paths)?;
    std::fs::write(out, super::matrix::render(&runs))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(runs)
}
