//! Finding and loading case files, with errors that name the file, the place in it and
//! what was expected there. A case that parses but cannot mean anything (an outcome for a
//! step that does not exist, a misspelt matcher operator, no check a do-nothing client
//! would fail) is rejected here, before any client runs.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::matcher;
use crate::model::era::{self, REVISIONS};
use crate::model::{ClientEra, Endpoint, Scenario, Step, Transport, WireStream};

/// A loaded case: its id (the path below the scenarios root, without `.json`) and its content.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case id, e.g. `tools/pagination-repeated-cursor`.
    pub id: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The parsed scenario.
    pub scenario: Scenario,
    /// The protocol revision this copy of the case runs at, for a case with `revisions`
    /// (see [`trials`]); `None` for a case without.
    pub revision: Option<String>,
}

impl Case {
    /// The trial name on `transport`: `<case-id>@<transport>`, plus `@<revision>` for a case
    /// that runs at several revisions.
    pub fn trial_name(&self, transport: Transport) -> String {
        match &self.revision {
            Some(rev) => format!("{}@{}@{rev}", self.id, transport.as_str()),
            None => format!("{}@{}", self.id, transport.as_str()),
        }
    }

    /// The contract's protocol versions for this case's trials.
    pub fn versions(&self) -> era::ContractVersions {
        era::contract_versions(&self.scenario, self.revision.as_deref())
    }
}

/// Every trial of `cases`: each case on each of its transports, and at each of its
/// revisions when it lists some (transport-major, so a case's trials stay together).
pub fn trials(cases: &[Case]) -> Vec<(Case, Transport)> {
    let mut out = Vec::new();
    for case in cases {
        for &transport in &case.scenario.transports {
            if case.scenario.revisions.is_empty() {
                out.push((case.clone(), transport));
            }
            for rev in &case.scenario.revisions {
                let mut at = case.clone();
                at.revision = Some(rev.clone());
                out.push((at, transport));
            }
        }
    }
    out
}

/// Why a case file could not be used.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// The offending file.
    pub path: PathBuf,
    /// Where in it: `line L column C` and/or a JSON path such as `expect.outcomes[2].step`.
    pub location: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.path.display(),
            self.location,
            self.message
        )
    }
}

impl std::error::Error for LoadError {}

/// Loads every `*.json` case below `root` (except the schema), sorted by id. Stops at nothing:
/// all errors are returned together, so one run shows every broken file.
pub fn load_dir(root: &Path) -> Result<Vec<Case>, Vec<LoadError>> {
    let mut files = Vec::new();
    if let Err(e) = collect(root, &mut files) {
        return Err(vec![LoadError {
            path: root.to_owned(),
            location: "directory".into(),
            message: format!("cannot read: {e}"),
        }]);
    }
    files.sort();
    let (mut cases, mut errors) = (Vec::new(), Vec::new());
    for file in files {
        match load_case(root, &file) {
            Ok(case) => cases.push(case),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json")
            && !path.to_string_lossy().ends_with(".schema.json")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads one case file; `root` is the scenarios directory its id is relative to.
pub fn load_case(root: &Path, path: &Path) -> Result<Case, LoadError> {
    let error = |location: String, message: String| LoadError {
        path: path.to_owned(),
        location,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error("file".into(), e.to_string()))?;
    parse_case(root, path, &text)
}

/// Loads one case from its text, as if read from `path` (the fuzz target's entry).
pub fn parse_case(root: &Path, path: &Path, text: &str) -> Result<Case, LoadError> {
    let error = |location: String, message: String| LoadError {
        path: path.to_owned(),
        location,
        message,
    };
    let id = case_id(root, path).map_err(|m| error("file name".into(), m))?;
    let mut de = serde_json::Deserializer::from_str(text);
    let scenario: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        let at = match e.path().to_string().as_str() {
            "." => String::new(),
            p => format!(", at {p}"),
        };
        error(
            format!("line {} column {}{at}", inner.line(), inner.column()),
            inner.to_string(),
        )
    })?;
    check_meaning(&scenario).map_err(|(at, m)| error(at, m))?;
    Ok(Case {
        id,
        path: path.to_owned(),
        scenario,
        revision: None,
    })
}

/// The id of a case file: its path below `root`, `/`-separated, without `.json`. Each part
/// must be kebab-case, since ids become trial names that people type in filters.
pub fn case_id(root: &Path, path: &Path) -> Result<String, String> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("is not below the scenarios directory {}", root.display()))?;
    let rel = rel.with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for part in &parts {
        let kebab = !part.is_empty()
            && !part.starts_with('-')
            && !part.ends_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !kebab {
            return Err(format!(
                "{part:?} is not kebab-case (expected lower-case letters, digits and single hyphens)"
            ));
        }
    }
    Ok(parts.join("/"))
}

fn check_meaning(s: &Scenario) -> Result<(), (String, String)> {
    if s.transports.is_empty() {
        return Err((
            "transports".into(),
            "expected at least one transport".into(),
        ));
    }
    if s.plan.is_empty() {
        return Err(("plan".into(), "expected at least one step".into()));
    }
    if s.deadline_ms == 0 || s.timeout_ms == 0 {
        return Err((
            "deadline_ms / timeout_ms".into(),
            "expected a positive number of milliseconds".into(),
        ));
    }
    check_revisions(s)?;
    for (i, h) in s.server.handlers.iter().enumerate() {
        if let Some(params) = &h.params {
            matcher::validate(params).map_err(|m| (format!("server.handlers[{i}].params"), m))?;
        }
        if let Some(faults) = &h.faults {
            for (j, emit) in faults.before.iter().enumerate() {
                if emit.payload().is_none() {
                    return Err((
                        format!("server.handlers[{i}].faults.before[{j}]"),
                        "expected exactly one of `message`, `raw` and `bytes`".into(),
                    ));
                }
            }
        }
        let redirect = h.http.as_ref().and_then(|r| r.redirect.as_ref());
        if let Some(r) = redirect.filter(|r| !(300..400).contains(&r.status)) {
            return Err((
                format!("server.handlers[{i}].http.redirect.status"),
                format!("expected a 3xx status, got {}", r.status),
            ));
        }
    }
    for (i, o) in s.expect.outcomes.iter().enumerate() {
        let at = format!("expect.outcomes[{i}]");
        if o.step >= s.plan.len() {
            return Err((
                format!("{at}.step"),
                format!(
                    "expected a step index below {} (the plan's length)",
                    s.plan.len()
                ),
            ));
        }
        match (&o.ok, &o.error) {
            (Some(ok), None) => matcher::validate(ok).map_err(|m| (format!("{at}.ok"), m))?,
            (None, Some(_)) => {}
            _ => return Err((at, "expected exactly one of `ok` and `error`".into())),
        }
    }
    for (i, w) in s.expect.wire.iter().enumerate() {
        let at = format!("expect.wire[{i}]");
        let given = [
            w.first.is_some(),
            w.sequence.is_some(),
            w.sent.is_some(),
            w.not_sent.is_some(),
            w.every.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err((
                at,
                "expected exactly one of `first`, `sequence`, `sent`, `not_sent` and `every`"
                    .into(),
            ));
        }
        if w.count.is_some() && w.sent.is_none() {
            return Err((format!("{at}.count"), "`count` goes with `sent`".into()));
        }
        if w.on == WireStream::HttpRequests && !s.transports.iter().all(|t| *t == Transport::Https)
        {
            return Err((
                format!("{at}.on"),
                "`http_requests` checks need `transports: [\"https\"]` only".into(),
            ));
        }
        let matchers = w
            .first
            .iter()
            .chain(&w.sequence)
            .flatten()
            .chain(&w.sent)
            .chain(&w.not_sent)
            .chain(&w.every)
            .chain(&w.filter);
        for m in matchers {
            matcher::validate(m).map_err(|msg| (at.clone(), msg))?;
        }
    }
    if !s.expect.lifecycle.is_empty() && s.transports.iter().any(|t| *t != Transport::Stdio) {
        return Err((
            "expect.lifecycle".into(),
            "lifecycle checks are about a stdio server process: expected `transports: [\"stdio\"]`"
                .into(),
        ));
    }
    // Where the right behaviour is to send nothing at all (a refused URL or certificate), the
    // outcome kind is what tells a careful client from an idle one.
    let refuses_before_sending = matches!(
        s.server.http.endpoint,
        Endpoint::InsecureRemote | Endpoint::UntrustedCa | Endpoint::WrongName
    );
    let observes_traffic = s
        .expect
        .wire
        .iter()
        .any(|w| w.not_sent.is_none() && w.revisions.is_empty())
        || !s.expect.lifecycle.is_empty()
        || (refuses_before_sending && !s.expect.outcomes.is_empty());
    if !observes_traffic {
        return Err((
            "expect".into(),
            "expected at least one `wire` check other than `not_sent`, or a `lifecycle` check: \
             outcome lines alone can be printed by a client that does nothing"
                .into(),
        ));
    }
    if !matches!(s.plan.first(), Some(Step::Connect)) {
        return Err((
            "plan[0]".into(),
            "expected the plan to start with `connect`".into(),
        ));
    }
    Ok(())
}

/// The revision dimension: known revisions, each once; wire checks restricted to revisions
/// the case runs at.
fn check_revisions(s: &Scenario) -> Result<(), (String, String)> {
    for (i, rev) in s.revisions.iter().enumerate() {
        if !REVISIONS.contains(&rev.as_str()) {
            return Err((
                format!("revisions[{i}]"),
                format!("expected one of {REVISIONS:?}, found {rev:?}"),
            ));
        }
        if s.revisions[..i].contains(rev) {
            return Err((
                format!("revisions[{i}]"),
                format!("{rev:?} is listed twice"),
            ));
        }
    }
    let modern_client = matches!(s.client_era, Some(ClientEra::Modern | ClientEra::Dual));
    if s.legacy_protocol_version.is_some() && s.client_era != Some(ClientEra::Dual) {
        return Err((
            "legacy_protocol_version".into(),
            "only a dual-era client has a fallback version: expected `client_era: \"dual\"`".into(),
        ));
    }
    for (i, step) in s.plan.iter().enumerate() {
        let modern_only = match step {
            Step::Discover => true,
            Step::CallTool { input, .. } => input.is_some(),
            _ => false,
        };
        if modern_only && !modern_client {
            return Err((
                format!("plan[{i}]"),
                "`discover` and `input` are modern-era features: expected `client_era` \"modern\" or \"dual\""
                    .into(),
            ));
        }
    }
    for (i, w) in s.expect.wire.iter().enumerate() {
        if let Some(rev) = w.revisions.iter().find(|r| !s.revisions.contains(r)) {
            return Err((
                format!("expect.wire[{i}].revisions"),
                format!(
                    "{rev:?} is not among the case's `revisions` {:?}",
                    s.revisions
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-harness-load-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const MINIMAL: &str = r#"{
  "description": "d",
  "requirement": {"text": "t", "source": "s", "level": "must"},
  "plan": [{"op": "connect"}],
  "expect": {"wire": [{"check": "c", "sent": {"method": "initialize"}}]}
}"#;

    #[test]
    fn a_minimal_case_loads_with_defaults() {
        let dir = temp_dir("ok");
        let case = load_case(&dir, &write(&dir, "happy-path.json", MINIMAL)).unwrap();
        assert_eq!(case.id, "happy-path");
        assert_eq!(case.scenario.protocol_version, "2025-03-26");
    }

    #[test]
    fn an_unknown_field_names_line_column_and_path() {
        let dir = temp_dir("field");
        let text = MINIMAL.replace(r#""level": "must""#, r#""level": "must", "levle": 1"#);
        let err = load_case(&dir, &write(&dir, "bad-field.json", &text)).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("bad-field.json"), "{shown}");
        assert!(shown.contains("line 3"), "{shown}");
        assert!(shown.contains("requirement"), "{shown}");
        assert!(shown.contains("levle"), "{shown}");
    }

    #[test]
    fn meaningless_cases_are_rejected_with_their_field() {
        let dir = temp_dir("meaning");
        let no_wire = MINIMAL.replace(
            r#""wire": [{"check": "c", "sent": {"method": "initialize"}}]"#,
            r#""outcomes": [{"step": 0, "ok": {}}]"#,
        );
        let err = load_case(&dir, &write(&dir, "no-wire.json", &no_wire)).unwrap_err();
        assert_eq!(err.location, "expect");
        let bad_step = MINIMAL.replace(
            r#""expect": {"#,
            r#""expect": {"outcomes": [{"step": 3, "ok": {}}], "#,
        );
        let err = load_case(&dir, &write(&dir, "bad-step.json", &bad_step)).unwrap_err();
        assert_eq!(err.location, "expect.outcomes[0].step");
        let err = load_case(&dir, &write(&dir, "Not_Kebab.json", MINIMAL)).unwrap_err();
        assert_eq!(err.location, "file name");
    }

    #[test]
    fn faults_and_redirects_are_checked() {
        let dir = temp_dir("faults");
        let with_server = |server: &str| {
            MINIMAL.replace(
                r#""plan":"#,
                &format!(r#""server": {{"handlers": [{server}]}}, "plan":"#),
            )
        };
        let two_forms = with_server(
            r#"{"method": "ping", "reply": {"hang": null}, "faults": {"before": [{"raw": "x", "bytes": [255]}]}}"#,
        );
        let err = load_case(&dir, &write(&dir, "two-forms.json", &two_forms)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].faults.before[0]");
        let not_3xx = with_server(
            r#"{"method": "ping", "reply": {"hang": null}, "http": {"redirect": {"status": 200, "to": "other_host"}}}"#,
        );
        let err = load_case(&dir, &write(&dir, "not-3xx.json", &not_3xx)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].http.redirect.status");
        let fine = with_server(
            r#"{"method": "ping", "reply": {"result": {}}, "faults": {"before": [{"bytes": [255, 10], "repeat": 3}], "padding_bytes": 10, "truncate": "stall", "then": "close_stdout"}}"#,
        );
        load_case(&dir, &write(&dir, "fine.json", &fine)).unwrap();
    }

    #[test]
    fn revisions_multiply_trials_and_are_checked() {
        let dir = temp_dir("revisions");
        let text = MINIMAL.replace(
            r#""plan""#,
            r#""transports": ["stdio", "https"], "revisions": ["2025-03-26", "2025-06-18"], "plan""#,
        );
        let case = load_case(&dir, &write(&dir, "per-revision.json", &text)).unwrap();
        let names: Vec<String> = trials(&[case])
            .iter()
            .map(|(c, t)| c.trial_name(*t))
            .collect();
        assert_eq!(
            names,
            [
                "per-revision@stdio@2025-03-26",
                "per-revision@stdio@2025-06-18",
                "per-revision@https@2025-03-26",
                "per-revision@https@2025-06-18"
            ]
        );
        let unknown = MINIMAL.replace(r#""plan""#, r#""revisions": ["2025-13-01"], "plan""#);
        let err = load_case(&dir, &write(&dir, "unknown-rev.json", &unknown)).unwrap_err();
        assert_eq!(err.location, "revisions[0]");
        let stray = MINIMAL.replace(
            r#""sent": {"method": "initialize"}}"#,
            r#""sent": {"method": "initialize"}, "revisions": ["2025-06-18"]}"#,
        );
        let err = load_case(&dir, &write(&dir, "stray-rev.json", &stray)).unwrap_err();
        assert_eq!(err.location, "expect.wire[0].revisions");
        let legacy_discover = MINIMAL.replace(
            r#""plan": [{"op": "connect"}]"#,
            r#""plan": [{"op": "connect"}, {"op": "discover"}]"#,
        );
        let err = load_case(&dir, &write(&dir, "discover.json", &legacy_discover)).unwrap_err();
        assert_eq!(err.location, "plan[1]");
    }

    #[test]
    fn a_dual_client_gets_the_legacy_revision_as_its_fallback_version() {
        let dir = temp_dir("dual");
        let text = MINIMAL.replace(
            r#""plan""#,
            r#""protocol_version": "2026-07-28", "client_era": "dual", "revisions": ["2025-06-18"], "plan""#,
        );
        let case = load_case(&dir, &write(&dir, "dual.json", &text)).unwrap();
        assert_eq!(case.versions().legacy.as_deref(), Some("2025-11-25"));
        let (at, _) = trials(&[case]).remove(0);
        let versions = at.versions();
        assert_eq!(versions.protocol, "2026-07-28");
        assert_eq!(versions.legacy.as_deref(), Some("2025-06-18"));
    }
}
