//! The bench's results: a table for people, `bench.json` for machines, and the targets judged
//! against the figures (reported honestly, met or not).
//!
//! Client figures are compared as the ratio rmcp / reference; "ref ahead" reads the ratio the
//! right way round for each figure (lower is better for times and memory, higher for rates).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::Args;
use super::clients::{Batch, Figures, Outcome, Pair};
use super::fakes::Throughput;
use super::floor::Pipe;
use super::metrics::{METRICS, Metric, ahead};
use super::suite::Suite;

/// Everything one bench run measured.
pub struct Report {
    settings: Value,
    clients: Vec<Pair>,
    suite: Suite,
    fakes: Vec<(&'static str, Result<Throughput, String>)>,
    /// The bare pipe round trip to the echo server, when the floor was measured.
    pipe: Option<Result<Pipe, String>>,
}

/// One floor comparison: the batch, the pipe's figures, the reference client's.
type FloorRow = (&'static str, Batch, Batch);

/// How far above the floor the reference client may be, per call.
const FLOOR_FACTOR: f64 = 2.0;

impl Report {
    /// Gathers the measurements.
    pub fn new(
        args: &Args,
        clients: Vec<Pair>,
        suite: Suite,
        fakes: Vec<(&'static str, Result<Throughput, String>)>,
        pipe: Option<Result<Pipe, String>>,
    ) -> Report {
        let cpus = mcp_harness::conformance::cores();
        let settings = json!({
            "rounds": args.rounds, "calls": args.calls, "in_flight": args.in_flight,
            "fake_requests": args.fake_requests, "fake_connections": args.fake_connections,
            "cpus": cpus, "reference_runtime": "current-thread",
        });
        Report {
            settings,
            clients,
            suite,
            fakes,
            pipe,
        }
    }

    /// The targets, each `(what, met, detail)`; `None` when it could not be judged.
    fn targets(&self) -> Vec<(String, Option<bool>, String)> {
        let mut out = Vec::new();
        for pair in &self.clients {
            let what = format!(
                "reference ahead of rmcp on every figure ({})",
                pair.transport
            );
            out.push(match (&pair.reference, &pair.rmcp) {
                (Ok(ours), Ok(theirs)) => {
                    let behind: Vec<&str> = METRICS
                        .iter()
                        .filter(|m| !ahead(m, (m.get)(ours), (m.get)(theirs)))
                        .map(|m| m.key)
                        .collect();
                    let detail = match behind.is_empty() {
                        true => "ahead on all".to_owned(),
                        false => format!("behind on {}", behind.join(", ")),
                    };
                    (what, Some(behind.is_empty()), detail)
                }
                (Err(why), _) => (what, None, format!("reference: {why}")),
                (_, Err(why)) => (what, None, format!("rmcp unavailable: {why}")),
            });
        }
        out.extend(self.suite.targets());
        for (transport, fake) in &self.fakes {
            let fastest = self.fastest_client(transport);
            let what = format!("the {transport} fake is not the bottleneck");
            out.push(match (fake, fastest) {
                (Ok(fake), Some(client)) => {
                    let detail = format!(
                        "fake {:.0} req/s vs fastest client {client:.0} calls/s ({:.1}x headroom)",
                        fake.per_s,
                        fake.per_s / client
                    );
                    (what, Some(fake.per_s > client), detail)
                }
                (Err(why), _) => (what, None, why.clone()),
                (_, None) => (what, None, "no client figures".into()),
            });
        }
        out.extend(self.floor_targets());
        out
    }

    /// The reference client against the echo server, per call, over the bare pipe round trip
    /// to it: `(what, pipe, reference)` for the sequential and the in-flight batch.
    fn floor_rows(&self) -> Option<Result<[FloorRow; 2], String>> {
        let pipe = self.pipe.as_ref()?;
        let ours = self
            .clients
            .iter()
            .find(|p| p.transport == "floor")
            .map(|p| p.reference.clone())
            .unwrap_or_else(|| Err("the client was not run against the echo server".into()));
        Some(match (pipe, ours) {
            (Ok(pipe), Ok(ours)) => Ok([
                ("sequential", pipe.sequential.clone(), ours.sequential),
                ("in-flight", pipe.concurrent.clone(), ours.concurrent),
            ]),
            (Err(why), _) => Err(format!("pipe round trip: {why}")),
            (_, Err(why)) => Err(format!("reference: {why}")),
        })
    }

    fn floor_targets(&self) -> Vec<(String, Option<bool>, String)> {
        let what = |batch: &str| {
            format!("reference within {FLOOR_FACTOR}x of the floor per call ({batch})")
        };
        match self.floor_rows() {
            None => Vec::new(),
            Some(Err(why)) => vec![(what("floor"), None, why)],
            Some(Ok(rows)) => rows
                .iter()
                .map(|(batch, pipe, ours)| {
                    let ratio = ours.per_call_us() / pipe.per_call_us().max(1e-9);
                    let detail = format!(
                        "{:.1} us per call vs the pipe's {:.1} us ({ratio:.2}x)",
                        ours.per_call_us(),
                        pipe.per_call_us()
                    );
                    (what(batch), Some(ratio <= FLOOR_FACTOR), detail)
                })
                .collect(),
        }
    }

    /// The best calls/s any client reached over `transport`.
    fn fastest_client(&self, transport: &str) -> Option<f64> {
        let pair = self.clients.iter().find(|p| p.transport == transport)?;
        [&pair.reference, &pair.rmcp]
            .into_iter()
            .flatten()
            .map(|f| f.sequential.rate().max(f.concurrent.rate()))
            .reduce(f64::max)
    }

    /// The table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let s = &self.settings;
        let _ = writeln!(
            t,
            "\nclients: best of {} interleaved rounds; {} calls per batch; {} in flight",
            s["rounds"], s["calls"], s["in_flight"]
        );
        let _ = writeln!(
            t,
            "{:<6} {:<26} {:>12} {:>12} {:>9}  ref ahead",
            "", "figure", "reference", "rmcp", "rmcp/ref"
        );
        for pair in &self.clients {
            let Ok(ours) = &pair.reference else {
                let why = pair.reference.as_ref().err().map_or("", String::as_str);
                let _ = writeln!(t, "{:<6} reference failed: {why}", pair.transport);
                continue;
            };
            for m in &METRICS {
                let (a, cells) = ((m.get)(ours), rmcp_cells(m, ours, &pair.rmcp));
                let _ = writeln!(t, "{:<6} {:<26} {a:>12.1} {cells}", pair.transport, m.label);
            }
            if let Err(why) = &pair.rmcp {
                let _ = writeln!(t, "{:<6} rmcp: unavailable ({why})", pair.transport);
            }
        }
        t.push_str(&self.suite.table());
        let _ = writeln!(t, "\nfakes");
        for (transport, fake) in &self.fakes {
            match fake {
                Ok(f) => drop(writeln!(
                    t,
                    "{transport:<6} {:>9.0} req/s ({} requests in {:.2} s; {})",
                    f.per_s, f.requests, f.seconds, f.load
                )),
                Err(why) => drop(writeln!(t, "{transport:<6} failed: {why}")),
            }
        }
        if let Some(rows) = self.floor_rows() {
            let _ = writeln!(
                t,
                "\nfloor (stdio, a do-nothing echo server; the pipe row has no client at all)"
            );
            let _ = writeln!(
                t,
                "{:<11} {:<10} {:>12} {:>9} {:>9} {:>9}",
                "batch", "who", "us per call", "calls/s", "p50 us", "p99 us"
            );
            match rows {
                Ok(rows) => {
                    for (batch, pipe, ours) in rows {
                        for (who, b) in [("pipe", &pipe), ("reference", &ours)] {
                            let _ = writeln!(
                                t,
                                "{batch:<11} {who:<10} {:>12.1} {:>9.0} {:>9} {:>9}",
                                b.per_call_us(),
                                b.rate(),
                                b.p50_us,
                                b.p99_us
                            );
                        }
                    }
                }
                Err(why) => drop(writeln!(t, "floor failed: {why}")),
            }
        }
        let _ = writeln!(t, "\ntargets");
        for (what, met, detail) in self.targets() {
            let verdict = match met {
                Some(true) => "met",
                Some(false) => "NOT met",
                None => "not judged",
            };
            let _ = writeln!(t, "{verdict:<10} {what}: {detail}");
        }
        t
    }

    /// Writes `bench.json` (creating its directory).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let clients: serde_json::Map<String, Value> = self
            .clients
            .iter()
            .map(|pair| (pair.transport.to_owned(), client_json(pair)))
            .collect();
        let fakes: serde_json::Map<String, Value> = self
            .fakes
            .iter()
            .map(|(transport, fake)| ((*transport).to_owned(), outcome_json(fake)))
            .collect();
        let targets: Vec<Value> = self
            .targets()
            .into_iter()
            .map(|(what, met, detail)| json!({"target": what, "met": met, "detail": detail}))
            .collect();
        let floor = match &self.pipe {
            None => Value::Null,
            Some(pipe) => {
                let mut floor = json!({
                    "server": "xtask bench --serve-echo: canned answers, the id spliced in, no JSON parsing",
                    "pipe": outcome_json(pipe),
                });
                if let Some(Ok(rows)) = self.floor_rows() {
                    for (batch, pipe, ours) in rows {
                        floor["reference_over_pipe_per_call"][batch] =
                            json!(ours.per_call_us() / pipe.per_call_us().max(1e-9));
                    }
                }
                floor
            }
        };
        let doc = json!({
            "settings": self.settings,
            "clients": clients,
            "floor": floor,
            "suite": self.suite.json(),
            "fakes": fakes,
            "targets": targets,
        });
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The rmcp, ratio and verdict cells of one table row.
fn rmcp_cells(m: &Metric, ours: &Figures, theirs: &Outcome) -> String {
    match theirs {
        Ok(theirs) => {
            let (a, b) = ((m.get)(ours), (m.get)(theirs));
            let yes = if ahead(m, a, b) { "yes" } else { "NO" };
            format!("{b:>12.1} {:>9.2}  {yes}", b / a.max(1e-9))
        }
        Err(_) => format!("{:>12} {:>9}  -", "-", "-"),
    }
}

fn outcome_json<T: serde::Serialize>(outcome: &Result<T, String>) -> Value {
    match outcome {
        Ok(value) => serde_json::to_value(value).unwrap_or(Value::Null),
        Err(why) => json!({"unavailable": why}),
    }
}

/// A transport's entry: both clients' figures and the ratio rmcp / reference per figure.
fn client_json(pair: &Pair) -> Value {
    let ratios: serde_json::Map<String, Value> = match (&pair.reference, &pair.rmcp) {
        (Ok(ours), Ok(theirs)) => METRICS
            .iter()
            .map(|m| {
                (
                    m.key.to_owned(),
                    json!((m.get)(theirs) / (m.get)(ours).max(1e-9)),
                )
            })
            .collect(),
        _ => serde_json::Map::new(),
    };
    let with_rates = |outcome: &Outcome| match outcome {
        Ok(f) => {
            let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
            v["sequential"]["calls_per_s"] = json!(f.sequential.rate());
            v["concurrent"]["calls_per_s"] = json!(f.concurrent.rate());
            v
        }
        Err(why) => json!({"unavailable": why}),
    };
    json!({
        "reference": with_rates(&pair.reference),
        "rmcp": with_rates(&pair.rmcp),
        "ratio_rmcp_over_reference": ratios,
    })
}
