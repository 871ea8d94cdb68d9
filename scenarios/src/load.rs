//! Finding and loading case files, with errors that name the file, the place in it and
//! what was expected there. Loading a case file takes four steps, each in its own place:
//!
//! 1. read the text as JSON, and for a family of cases (`variants`) substitute each
//!    variant's values ([`variants`]);
//! 2. parse it as a [`CaseFile`], the shape people write;
//! 3. resolve it ([`resolve`]): defaults, the requirements catalogue, shared fixtures, the
//!    built-in `echo` tool, each check with its requirement and its broken clients;
//! 4. check that it can mean something ([`meaning`]): an expectation on a step that exists,
//!    no misspelt matcher operator, a check a do-nothing client would fail, …
//!
//! The catalogue (`requirements.json`) and the fixtures (`fixtures/<name>.json`) live in the
//! scenarios root: the directory given, or the nearest directory above it holding a
//! `requirements.json`.

pub mod deadline;
mod meaning;
mod resolve;
pub mod sources;
mod tasks;
pub mod variants;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::era;
use crate::model::file::CaseFile;
use crate::model::{Catalogue, Fixture, Requirement, Scenario, Transport};

/// The catalogue file's name in the scenarios root.
pub const CATALOGUE_FILE: &str = "requirements.json";
/// The fixtures directory's name in the scenarios root.
pub const FIXTURES_DIR: &str = "fixtures";

/// A loaded case: its id (the path below the scenarios root, without `.json`, plus
/// `-<variant>` for a variant) and its resolved content.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case id, e.g. `tools/pagination-repeated-cursor` or `robust/redirect-301-to-other-host`.
    pub id: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The resolved scenario.
    pub scenario: Scenario,
    /// The protocol revision this copy of the case runs at, for a case with `revisions`
    /// (see [`trials`]); `None` for a case without.
    pub revision: Option<String>,
    /// The variant this case is, for a file with `variants`.
    pub variant: Option<String>,
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
    /// Where in it: `line L column C` and/or a JSON path such as `plan[2].error`.
    pub location: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl LoadError {
    fn new(path: &Path, location: impl Into<String>, message: impl Into<String>) -> LoadError {
        LoadError {
            path: path.to_owned(),
            location: location.into(),
            message: message.into(),
        }
    }
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

/// What cases share: the requirements catalogue and the fixtures of one scenarios root.
#[derive(Debug, Clone)]
pub struct Library {
    /// The scenarios root.
    pub root: PathBuf,
    /// The requirements catalogue.
    pub catalogue: Catalogue,
    fixtures: HashMap<String, Fixture>,
}

impl Library {
    /// Loads the library of the scenarios root at or above `start`.
    pub fn find(start: &Path) -> Result<Library, LoadError> {
        let root = find_root(start).ok_or_else(|| {
            LoadError::new(
                start,
                "directory",
                format!(
                    "no {CATALOGUE_FILE} here or in a directory above; expected the requirements catalogue beside the cases"
                ),
            )
        })?;
        Library::load(&root)
    }

    /// Loads `root/requirements.json` and every `root/fixtures/*.json`.
    pub fn load(root: &Path) -> Result<Library, LoadError> {
        let path = root.join(CATALOGUE_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| LoadError::new(&path, "file", format!("cannot read: {e}")))?;
        let entries: Vec<Requirement> = parse_json(&path, &text)?;
        let catalogue = Catalogue::new(entries).map_err(|(at, m)| LoadError::new(&path, at, m))?;
        let mut fixtures = HashMap::new();
        let dir = root.join(FIXTURES_DIR);
        if dir.is_dir() {
            let files = json_files(&dir, &[])
                .map_err(|e| LoadError::new(&dir, "directory", format!("cannot read: {e}")))?;
            for file in files {
                let name = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                fixtures.insert(name, load_fixture_file(&file)?);
            }
        }
        Ok(Library {
            root: root.to_owned(),
            catalogue,
            fixtures,
        })
    }

    /// This library with a user's case directory laid over it: `dir/requirements.json` (if
    /// any) adds requirements and `dir/fixtures/*.json` adds fixtures, and `dir` becomes the
    /// root. An id or fixture name already in this library is an error naming both files.
    pub fn with_own(&self, dir: &Path) -> Result<Library, LoadError> {
        let mut entries = self.catalogue.entries().to_vec();
        let path = dir.join(CATALOGUE_FILE);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| LoadError::new(&path, "file", format!("cannot read: {e}")))?;
            let own: Vec<Requirement> = parse_json(&path, &text)?;
            for (i, entry) in own.iter().enumerate() {
                if self.catalogue.get(&entry.id).is_some() {
                    let base = self.root.join(CATALOGUE_FILE);
                    return Err(LoadError::new(
                        &path,
                        format!("[{i}].id"),
                        format!(
                            "the id {:?} is already a requirement of {}; expected an id of your own",
                            entry.id,
                            base.display()
                        ),
                    ));
                }
            }
            entries.extend(own);
        }
        let catalogue = Catalogue::new(entries).map_err(|(at, m)| LoadError::new(&path, at, m))?;
        let mut fixtures = self.fixtures.clone();
        let fixtures_dir = dir.join(FIXTURES_DIR);
        if fixtures_dir.is_dir() {
            let files = json_files(&fixtures_dir, &[]).map_err(|e| {
                LoadError::new(&fixtures_dir, "directory", format!("cannot read: {e}"))
            })?;
            for file in files {
                let name = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if fixtures.contains_key(&name) {
                    let base = self.root.join(FIXTURES_DIR).join(format!("{name}.json"));
                    return Err(LoadError::new(
                        &file,
                        "file name",
                        format!(
                            "the fixture {name:?} already exists as {}; expected a name of your own",
                            base.display()
                        ),
                    ));
                }
                fixtures.insert(name, load_fixture_file(&file)?);
            }
        }
        Ok(Library {
            root: dir.to_owned(),
            catalogue,
            fixtures,
        })
    }

    /// The fixture `name`.
    pub fn fixture(&self, name: &str) -> Option<&Fixture> {
        self.fixtures.get(name)
    }

    /// The names of every fixture, sorted.
    pub fn fixture_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.fixtures.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

/// The nearest directory at or above `start` holding a `requirements.json`.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    let start = if start.is_file() {
        start.parent()?
    } else {
        start
    };
    start
        .ancestors()
        .find(|dir| dir.join(CATALOGUE_FILE).is_file())
        .map(Path::to_owned)
}

fn load_fixture_file(path: &Path) -> Result<Fixture, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(path, "file", format!("cannot read: {e}")))?;
    let fixture: Fixture = parse_json(path, &text)?;
    meaning::check_handlers(&fixture.handlers, "handlers")
        .map_err(|(at, m)| LoadError::new(path, at, m))?;
    Ok(fixture)
}

/// Parses `text` as `T`, naming line, column and JSON path on failure.
fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, LoadError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        let at = match e.path().to_string().as_str() {
            "." => String::new(),
            p => format!(", at {p}"),
        };
        LoadError::new(
            path,
            format!("line {} column {}{at}", inner.line(), inner.column()),
            inner.to_string(),
        )
    })
}

/// Parses a value as `T`, naming the JSON path on failure (`context` prefixes the location).
fn parse_value<T: serde::de::DeserializeOwned>(
    path: &Path,
    value: Value,
    context: &str,
) -> Result<T, LoadError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = match e.path().to_string().as_str() {
            "." => context.to_owned(),
            p => format!("{context}at {p}"),
        };
        LoadError::new(path, at, e.inner().to_string())
    })
}

/// Loads every case below `root` (except the catalogue, the fixtures and schemas), sorted by
/// id. Stops at nothing: all errors are returned together, so one run shows every broken file.
pub fn load_dir(root: &Path) -> Result<Vec<Case>, Vec<LoadError>> {
    let library = match Library::find(root) {
        Ok(library) => library,
        // Without a catalogue nothing resolves; still show what is wrong in each file.
        Err(e) => {
            let mut errors: Vec<LoadError> = case_files(root)
                .unwrap_or_default()
                .iter()
                .filter_map(|f| parse_file(f, &std::fs::read_to_string(f).ok()?).err())
                .collect();
            errors.push(e);
            return Err(errors);
        }
    };
    let files = match json_files(root, &[library.root.join(FIXTURES_DIR)]) {
        Ok(files) => files,
        Err(e) => {
            return Err(vec![LoadError::new(
                root,
                "directory",
                format!("cannot read: {e}"),
            )]);
        }
    };
    let (mut cases, mut errors) = (Vec::new(), Vec::new());
    for file in files {
        match load_file(&library, root, &file) {
            Ok(found) => cases.extend(found),
            Err(e) => errors.push(e),
        }
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

/// The case files below `root`, sorted: every `*.json` except schemas, the catalogue and
/// the fixtures.
pub fn case_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let fixtures = find_root(root)
        .unwrap_or_else(|| root.to_owned())
        .join(FIXTURES_DIR);
    json_files(root, &[fixtures])
}

/// Every `*.json` below `root` but schemas and catalogues, leaving out what lies below the
/// directories `skip`, sorted.
fn json_files(root: &Path, skip: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                if !skip.contains(&path) {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "json")
                && !path.to_string_lossy().ends_with(".schema.json")
                && path.file_name().is_none_or(|n| n != CATALOGUE_FILE)
            {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Loads one case file; `root` is the scenarios directory its id is relative to. A file with
/// `variants` holds several cases: this is the first (see [`load_cases`]).
pub fn load_case(root: &Path, path: &Path) -> Result<Case, LoadError> {
    load_cases(root, path).map(|mut cases| cases.remove(0))
}

/// Loads every case of one file (several for a file with `variants`).
pub fn load_cases(root: &Path, path: &Path) -> Result<Vec<Case>, LoadError> {
    let library = Library::find(root)?;
    load_file(&library, root, path)
}

fn load_file(library: &Library, root: &Path, path: &Path) -> Result<Vec<Case>, LoadError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| LoadError::new(path, "file", e.to_string()))?;
    parse_with(library, root, path, &text)
}

/// Loads one case from its text, as if read from `path` (the fuzz target's entry); for a file
/// with `variants`, the first variant. The text is parsed before the library is looked up,
/// and the library of a root is loaded once per process.
pub fn parse_case(root: &Path, path: &Path, text: &str) -> Result<Case, LoadError> {
    let files = parse_file(path, text)?;
    let library = cached_library(root)?;
    resolve_all(&library, root, path, files).map(|mut cases| cases.remove(0))
}

fn cached_library(root: &Path) -> Result<std::sync::Arc<Library>, LoadError> {
    type Cache = HashMap<PathBuf, Result<std::sync::Arc<Library>, LoadError>>;
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Cache>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .entry(root.to_owned())
        .or_insert_with(|| Library::find(root).map(std::sync::Arc::new))
        .clone()
}

/// Loads the cases of one file's text with a library already loaded.
pub fn parse_with(
    library: &Library,
    root: &Path,
    path: &Path,
    text: &str,
) -> Result<Vec<Case>, LoadError> {
    let files = parse_file(path, text)?;
    resolve_all(library, root, path, files)
}

/// One parsed member of a case file: its variant (if any), the parsed file, and the
/// location prefix its errors carry.
type Parsed = (Option<String>, CaseFile, String);

/// Steps 1 and 2: the text as JSON, each variant substituted, each parsed as a [`CaseFile`].
fn parse_file(path: &Path, text: &str) -> Result<Vec<Parsed>, LoadError> {
    let value: Value = parse_json(path, text)?;
    let family = variants::expand(&value).map_err(|(at, m)| LoadError::new(path, at, m))?;
    let mut out = Vec::new();
    for (variant, value) in family {
        out.push(match variant {
            // Without variants the text itself is parsed, so errors name line and column.
            None => (None, parse_json::<CaseFile>(path, text)?, String::new()),
            Some(v) => {
                let context = format!("variant {v:?}, ");
                let file = parse_value::<CaseFile>(path, value, &context)?;
                (Some(v), file, context)
            }
        });
    }
    Ok(out)
}

/// Steps 3 and 4: each parsed member resolved and checked for meaning.
fn resolve_all(
    library: &Library,
    root: &Path,
    path: &Path,
    files: Vec<Parsed>,
) -> Result<Vec<Case>, LoadError> {
    let id = case_id(root, path).map_err(|m| LoadError::new(path, "file name", m))?;
    let mut cases = Vec::new();
    for (variant, file, context) in files {
        let in_variant =
            |(at, m): (String, String)| LoadError::new(path, format!("{context}{at}"), m);
        let scenario = resolve::resolve(&file, library).map_err(in_variant)?;
        meaning::check(&file, &scenario).map_err(in_variant)?;
        let id = match &variant {
            Some(v) => format!("{id}-{v}"),
            None => id.clone(),
        };
        cases.push(Case {
            id,
            path: path.to_owned(),
            scenario,
            revision: None,
            variant,
        });
    }
    Ok(cases)
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
        if !is_kebab(part) {
            return Err(format!(
                "{part:?} is not kebab-case (expected lower-case letters, digits and single hyphens)"
            ));
        }
    }
    Ok(parts.join("/"))
}

/// Lower-case letters, digits and hyphens, not at either end.
pub fn is_kebab(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('-')
        && !part.ends_with('-')
        && part
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A scenarios root with a catalogue of two requirements (and the contract's "the step
    /// worked" ones) and one fixture.
    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-harness-load-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write(
            &dir,
            CATALOGUE_FILE,
            r#"[{"id": "R-1", "level": "must", "text": "t", "source": "s"},
                {"id": "R-2", "level": "should", "text": "t2", "source": "s2"},
                {"id": "CONTRACT-8", "level": "must", "text": "worked", "source": "c"},
                {"id": "CONTRACT-10", "level": "must", "text": "connected", "source": "c"},
                {"id": "CONTRACT-14", "level": "must", "text": "rest", "source": "c"}]"#,
        );
        write(
            &dir,
            "fixtures/listed.json",
            r#"{"description": "d", "handlers": [{"method": "tools/list", "reply": {"result": {"tools": []}}}]}"#,
        );
        dir
    }

    const MINIMAL: &str = r#"{
  "description": "d",
  "requirement": "R-1",
  "plan": ["connect"],
  "wire": [{"check": "c", "sent": {"method": "initialize"}, "broken_by": ["do-nothing"]}]
}"#;

    #[test]
    fn a_minimal_case_loads_with_defaults() {
        let dir = temp_dir("ok");
        let case = load_case(&dir, &write(&dir, "happy-path.json", MINIMAL)).unwrap();
        assert_eq!(case.id, "happy-path");
        assert_eq!(case.scenario.protocol_version, "2025-03-26");
        assert_eq!(
            case.scenario.transports,
            [Transport::Stdio, Transport::Https]
        );
        assert_eq!(case.scenario.checks[0].requirement.id, "R-1");
        assert_eq!(case.scenario.checks[0].broken_by[0].client, "do-nothing");
        let modern = MINIMAL.replace(r#""plan""#, r#""client_era": "modern", "plan""#);
        let case = load_case(&dir, &write(&dir, "modern.json", &modern)).unwrap();
        assert_eq!(case.scenario.protocol_version, "2026-07-28");
    }

    #[test]
    fn extra_servers_load_and_every_server_named_must_exist() {
        let dir = temp_dir("servers");
        let text = MINIMAL
            .replace(
                r#""plan": ["connect"]"#,
                r#""servers": {"b": {}}, "plan": ["connect", {"op": "connect", "server": "b"}, {"op": "call_tool", "name": "echo", "server": "b"}]"#,
            )
            .replace(r#""check": "c","#, r#""check": "c", "server": "b","#);
        let case = load_case(&dir, &write(&dir, "two.json", &text)).unwrap();
        let s = &case.scenario;
        assert_eq!(s.plan_servers, [None, Some("b".into()), Some("b".into())]);
        assert!(
            s.server.handlers.is_empty(),
            "the main server's plan calls no echo"
        );
        assert_eq!(
            s.servers["b"].handlers,
            [crate::model::Handler::builtin_echo()]
        );
        assert_eq!(
            s.plan_json()[1],
            serde_json::json!({"op": "connect", "server": "b"})
        );
        assert!(
            matches!(&s.checks[0].rule, crate::model::Rule::Wire(w) if w.server.as_deref() == Some("b"))
        );
        for (bad, at) in [
            (
                text.replace(
                    r#""server": "b"}, {"op": "call"#,
                    r#""server": "c"}, {"op": "call"#,
                ),
                "plan[1].server",
            ),
            (
                text.replace(
                    r#""check": "c", "server": "b""#,
                    r#""check": "c", "server": "c""#,
                ),
                "wire[0].server",
            ),
            (
                text.replace(r#""servers": {"b""#, r#""servers": {"main""#),
                "servers.main",
            ),
            (
                text.replace(
                    r#""server": "b"}, {"op": "call"#,
                    r#""server": 3}, {"op": "call"#,
                ),
                "plan[1]",
            ),
        ] {
            let err = load_case(&dir, &write(&dir, "bad.json", &bad))
                .unwrap_err()
                .to_string();
            assert!(err.contains("bad.json") && err.contains(at), "{at}: {err}");
        }
    }

    #[test]
    fn tasks_and_spaced_load_and_their_errors_name_the_file_and_field() {
        let dir = temp_dir("tasks");
        let tasks = r#""server": {"tasks": [{"tool": "slow", "poll_interval_ms": 200,
            "phases": [{"status": "working", "ms": 300}, {"status": "completed"}],
            "result": {"content": []}}]}, "plan""#;
        let spaced = r#""wire": [{"check": "polls apart", "filter": {"method": "tasks/get"},
            "spaced": {"method": "tasks/get"}, "min_ms": 150, "broken_by": ["x"]}, "#;
        let text = MINIMAL
            .replace(r#""plan""#, tasks)
            .replace(r#""wire": ["#, spaced);
        let case = load_case(&dir, &write(&dir, "task.json", &text)).unwrap();
        assert_eq!(case.scenario.server.tasks[0].task_id, "task-1");
        assert_eq!(case.scenario.server.tasks[0].ttl_ms, Some(60_000));
        assert!(matches!(
            &case.scenario.checks[0].rule,
            crate::model::Rule::Wire(w) if matches!(w.rule, crate::model::WireRule::Spaced { min_ms: 150, .. })
        ));
        let early = text.replace(
            r#"{"status": "working", "ms": 300}, "#,
            r#"{"status": "completed", "ms": 300}, {"status": "working"}, "#,
        );
        let err = load_case(&dir, &write(&dir, "early.json", &early)).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("early.json"), "{shown}");
        assert!(
            shown.contains("server.tasks[0].phases[0].status"),
            "{shown}"
        );
        let no_gap = text.replace(r#", "min_ms": 150"#, "");
        let err = load_case(&dir, &write(&dir, "no-gap.json", &no_gap)).unwrap_err();
        assert!(err.to_string().contains("min_ms"), "{err}");
    }

    #[test]
    fn a_canary_check_needs_a_script_that_names_the_canary() {
        let dir = temp_dir("canary");
        let check = r#"{"check": "none", "on": "canary", "not_sent": {}, "broken_by": ["x"]}"#;
        let text = MINIMAL.replace(r#""wire": ["#, &format!(r#""wire": [{check}, "#));
        let err = load_case(&dir, &write(&dir, "no-canary.json", &text)).unwrap_err();
        assert!(err.to_string().contains("{{canary}}"), "{err}");
        let named = text.replace(
            r#""plan""#,
            r#""server": {"handlers": [{"method": "tools/list", "reply": {"result": {"tools": [{"name": "t", "inputSchema": {"$ref": "{{canary}}/s.json"}}]}}}]}, "plan""#,
        );
        let case = load_case(&dir, &write(&dir, "canary.json", &named)).unwrap();
        assert!(case.scenario.server.uses_canary());
    }

    #[test]
    fn internal_destinations_need_an_isolated_https_case() {
        let dir = temp_dir("isolated");
        let redirect = r#""server": {"handlers": [{"method": "tools/call", "reply": {"result": {}}, "http": {"redirect": {"status": 307, "to": "https://169.254.169.254/"}}}]}, "plan""#;
        let on_host = MINIMAL.replace(r#""plan""#, redirect);
        let err = load_case(&dir, &write(&dir, "host.json", &on_host)).unwrap_err();
        assert!(err.location.contains("redirect.to"), "{err}");
        assert!(err.to_string().contains("isolated"), "{err}");
        let isolated = on_host.replace(r#""server""#, r#""network": "isolated", "server""#);
        let err = load_case(&dir, &write(&dir, "both.json", &isolated)).unwrap_err();
        assert_eq!(err.location, "network", "{err}");
        let https = isolated.replace(r#""network""#, r#""transports": ["https"], "network""#);
        let check = r#"{"check": "none", "on": "canary", "not_sent": {}, "broken_by": ["x"]}"#;
        let https = https.replace(r#""wire": ["#, &format!(r#""wire": [{check}, "#));
        let case = load_case(&dir, &write(&dir, "isolated.json", &https)).unwrap();
        assert_eq!(case.scenario.network, crate::model::file::Network::Isolated);
    }

    #[test]
    fn an_auth_case_is_https_only_and_must_make_sense() {
        let dir = temp_dir("auth");
        let auth = |server: &str, transports: &str| {
            MINIMAL.replace(
                r#""plan""#,
                &format!(r#""transports": {transports}, "server": {{"auth": {server}}}, "plan""#),
            )
        };
        let both = auth("{}", r#"["stdio", "https"]"#);
        let err = load_case(&dir, &write(&dir, "auth-stdio.json", &both)).unwrap_err();
        assert_eq!(err.location, "transports");
        assert!(err.to_string().contains("HTTPS only"), "{err}");
        let custom = auth(
            r#"{"prm": {"at": "custom", "in_challenge": false}}"#,
            r#"["https"]"#,
        );
        let err = load_case(&dir, &write(&dir, "auth-custom.json", &custom)).unwrap_err();
        assert_eq!(err.location, "server.auth");
        assert!(err.to_string().contains("in_challenge"), "{err}");
        let append = auth(r#"{"metadata": {"at": ["openid_append"]}}"#, r#"["https"]"#);
        let err = load_case(&dir, &write(&dir, "auth-append.json", &append)).unwrap_err();
        assert!(err.to_string().contains("issuer.path"), "{err}");
        let typo = auth(r#"{"authorise": ["approve"]}"#, r#"["https"]"#);
        let err = load_case(&dir, &write(&dir, "auth-typo.json", &typo)).unwrap_err();
        assert!(err.to_string().contains("authorise"), "{err}");
        let ok = auth(r#"{"authorize": ["deny", "approve"]}"#, r#"["https"]"#);
        let case = load_case(&dir, &write(&dir, "auth-ok.json", &ok)).unwrap();
        let script = case.scenario.server.auth.unwrap();
        assert_eq!(
            script.attempt(5),
            crate::model::auth::AuthorizeAttempt::Approve
        );
    }

    #[test]
    fn an_unknown_field_names_line_column_and_path() {
        let dir = temp_dir("field");
        let text = MINIMAL.replace(r#""check": "c","#, r#""check": "c", "chek": 1,"#);
        let err = load_case(&dir, &write(&dir, "bad-field.json", &text)).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("bad-field.json"), "{shown}");
        assert!(shown.contains("line 5"), "{shown}");
        assert!(shown.contains("wire[0]"), "{shown}");
        assert!(shown.contains("chek"), "{shown}");
    }

    #[test]
    fn requirements_and_fixtures_must_exist() {
        let dir = temp_dir("ids");
        let text = MINIMAL.replace(r#""R-1""#, r#""R-9""#);
        let err = load_case(&dir, &write(&dir, "unknown-id.json", &text)).unwrap_err();
        assert_eq!(err.location, "requirement");
        assert!(err.message.contains("R-9"), "{err}");
        let text = MINIMAL.replace(r#""plan""#, r#""fixtures": ["listed", "nope"], "plan""#);
        let err = load_case(&dir, &write(&dir, "unknown-fixture.json", &text)).unwrap_err();
        assert_eq!(err.location, "fixtures[1]");
        assert!(err.message.contains("listed"), "{err}");
        let text = MINIMAL.replace(r#""broken_by""#, r#""requirement": "R-2", "broken_by""#);
        let case = load_case(&dir, &write(&dir, "own-requirement.json", &text)).unwrap();
        assert_eq!(
            case.scenario.checks[0].requirement.level,
            crate::model::Level::Should
        );
        let dup = temp_dir("dup");
        write(
            &dup,
            CATALOGUE_FILE,
            r#"[{"id": "A", "level": "must", "text": "t", "source": "s"}, {"id": "A", "level": "should", "text": "t", "source": "s"}]"#,
        );
        let err = load_dir(&dup).unwrap_err();
        assert_eq!(err[0].location, "[1].id");
    }

    #[test]
    fn no_check_may_cite_a_requirement_marked_not_observable() {
        let dir = temp_dir("unobservable");
        write(
            &dir,
            CATALOGUE_FILE,
            r#"[{"id": "R-1", "level": "must", "text": "t", "source": "s"},
                {"id": "R-3", "level": "must", "text": "t3", "source": "s3", "not_observable": "binds the server"}]"#,
        );
        let text = MINIMAL.replace(r#""R-1""#, r#""R-3""#);
        let err = load_case(&dir, &write(&dir, "case-cites.json", &text)).unwrap_err();
        assert_eq!(err.location, "requirement");
        assert!(
            err.message.contains("not observable (binds the server)"),
            "{err}"
        );
        let text = MINIMAL.replace(r#""broken_by""#, r#""requirement": "R-3", "broken_by""#);
        let err = load_case(&dir, &write(&dir, "check-cites.json", &text)).unwrap_err();
        assert_eq!(err.location, "wire[0].requirement");
        let empty = temp_dir("unobservable-empty");
        write(
            &empty,
            CATALOGUE_FILE,
            r#"[{"id": "A", "level": "must", "text": "t", "source": "s", "not_observable": " "}]"#,
        );
        let err = load_dir(&empty).unwrap_err();
        assert_eq!(err[0].location, "[0].not_observable");
    }

    #[test]
    fn a_setup_step_cites_that_it_worked_unless_it_names_a_requirement() {
        let dir = temp_dir("setup");
        let plan = r#"[
            {"op": "connect", "ok": {}, "broken_by": ["do-nothing"]},
            {"op": "list_tools", "ok": {}, "broken_by": ["do-nothing"]},
            {"op": "list_prompts", "ok": {}, "broken_by": ["do-nothing"]},
            {"op": "call_tool", "name": "echo", "ok": {}, "requirement": "R-2", "broken_by": ["do-nothing"]},
            {"op": "call_tool", "name": "echo", "error": "timeout", "broken_by": ["do-nothing"]}
        ]"#;
        let text = MINIMAL.replace(r#"["connect"]"#, plan);
        let case = load_case(&dir, &write(&dir, "setup-steps.json", &text)).unwrap();
        let cited: Vec<&str> = case.scenario.checks[..5]
            .iter()
            .map(|c| c.requirement.id.as_str())
            .collect();
        // "the step worked" for each op, the named one, and the case's for an expected error.
        assert_eq!(
            cited,
            ["CONTRACT-10", "CONTRACT-8", "CONTRACT-14", "R-2", "R-1"]
        );
        // A catalogue without the contract's entry says which one it looked for.
        let bare = temp_dir("setup-bare");
        write(
            &bare,
            CATALOGUE_FILE,
            r#"[{"id": "R-1", "level": "must", "text": "t", "source": "s"}]"#,
        );
        let err = load_case(&bare, &write(&bare, "setup-steps.json", &text)).unwrap_err();
        assert_eq!(err.location, "plan[0].requirement");
        assert!(err.message.contains("CONTRACT-10"), "{err}");
    }

    #[test]
    fn the_deadline_never_raises_a_level() {
        let dir = temp_dir("deadline");
        // A correct client may spend one timeout on the call that accepts `timeout`, and one
        // more for the rest: a deadline of 6000 leaves it no room.
        let slow = MINIMAL.replace(
            r#""plan": ["connect"]"#,
            r#""deadline_ms": 6000, "plan": ["connect", {"op": "call_tool", "name": "echo", "error": ["timeout", "transport_closed"], "broken_by": ["x"]}]"#,
        );
        let err = load_case(&dir, &write(&dir, "tight.json", &slow)).unwrap_err();
        assert_eq!(err.location, "deadline_ms", "{err}");
        assert!(err.message.contains("at least 10000 ms"), "{err}");
        let roomy = slow.replace("6000", "10000");
        load_case(&dir, &write(&dir, "roomy.json", &roomy)).unwrap();

        // Pages that never end under a profile check: a client missing only the page cap
        // would be judged at the deadline, at must.
        let endless = r#"{"method": "tools/list", "reply": {"result": {"tools": [], "nextCursor": {"$next_cursor": "p-"}}}}"#;
        let listing = |handlers: &str| {
            MINIMAL.replace(
                r#""plan": ["connect"]"#,
                &format!(
                    r#""server": {{"handlers": [{handlers}]}}, "plan": ["connect", {{"op": "list_tools", "error": ["invalid_response", "timeout"], "requirement": "R-2", "broken_by": ["x"]}}]"#
                ),
            )
        };
        let err = load_case(&dir, &write(&dir, "endless.json", &listing(endless))).unwrap_err();
        assert_eq!(err.location, "plan[1]", "{err}");
        assert!(err.message.contains("R-2, a should check"), "{err}");
        assert!(err.message.contains("CONTRACT-3 at must"), "{err}");
        let last = r#"{"method": "tools/list", "params": {"cursor": "p-50"}, "reply": {"result": {"tools": []}}}"#;
        let ended = listing(&format!("{last}, {endless}"));
        load_case(&dir, &write(&dir, "ended.json", &ended)).unwrap();
        // At must the deadline judges at the same level: nothing to bound.
        let must = listing(endless).replace(r#""requirement": "R-2", "#, "");
        load_case(&dir, &write(&dir, "endless-must.json", &must)).unwrap();

        // A repeated cursor under a should check: a script that answers it alike forever is
        // rejected unless the gap is named; one whose rule for it has `times`, followed by a
        // last page, ends the loop and needs no name.
        let repeating = |handlers: &str| {
            MINIMAL.replace(
                r#""plan": ["connect"]"#,
                &format!(
                    r#""server": {{"handlers": [{{"method": "tools/list", "reply": {{"result": {{"tools": [], "nextCursor": "A"}}}}{handlers}}}]}}, "plan": ["connect", {{"op": "list_tools", "error": "repeated_cursor", "requirement": "R-2", "broken_by": ["x"]}}]"#
                ),
            )
        };
        let repeated = repeating("");
        let err = load_case(&dir, &write(&dir, "repeated.json", &repeated)).unwrap_err();
        assert_eq!(err.location, "plan[1]", "{err}");
        assert!(err.message.contains("`times`"), "{err}");
        assert!(err.message.contains("unbounded_loop"), "{err}");
        let named = repeated.replace(r#""plan""#, r#""unbounded_loop": "no count", "plan""#);
        load_case(&dir, &write(&dir, "repeated-named.json", &named)).unwrap();
        let last = r#", "times": 20}, {"method": "tools/list", "params": {"cursor": "A"}, "reply": {"result": {"tools": []}}"#;
        let bounded = repeating(last);
        load_case(&dir, &write(&dir, "repeated-bounded.json", &bounded)).unwrap();
        let err = load_case(
            &dir,
            &write(
                &dir,
                "bounded-named.json",
                &bounded.replace(r#""plan""#, r#""unbounded_loop": "no count", "plan""#),
            ),
        )
        .unwrap_err();
        assert_eq!(err.location, "unbounded_loop", "{err}");
        // `times` without a last page after it: the built-in default (an error) ends it.
        let spent = repeating(r#", "times": 20"#);
        load_case(&dir, &write(&dir, "repeated-spent.json", &spent)).unwrap();
        // A last page that comes only after a long wait each time does not end it in time.
        let slow = repeating(
            r#", "times": 20, "delay_ms": 5000}, {"method": "tools/list", "params": {"cursor": "A"}, "reply": {"result": {"tools": []}}"#,
        );
        let err = load_case(&dir, &write(&dir, "repeated-slow.json", &slow)).unwrap_err();
        assert_eq!(err.location, "plan[1]", "{err}");

        // A step-up challenged forever under a should check: bounded when the authorizations
        // end in one whose code the server refuses (the last entry repeats).
        let step_up = |authorize: &str| {
            MINIMAL.replace(
                r#""plan": ["connect"]"#,
                &format!(
                    r#""transports": ["https"], "server": {{"auth": {{{authorize}"step_up": {{"tool": "write", "scope": "a b", "always": true}}}}, "handlers": [{{"method": "tools/call", "params": {{"name": "write"}}, "reply": {{"result": {{"content": []}}}}}}]}}, "plan": ["connect", {{"op": "call_tool", "name": "write", "error": ["auth_failed", "timeout"], "requirement": "R-2", "broken_by": ["x"]}}]"#
                ),
            )
        };
        let err = load_case(&dir, &write(&dir, "step-up.json", &step_up(""))).unwrap_err();
        assert_eq!(err.location, "server.auth.step_up.always", "{err}");
        let refused = step_up(r#""authorize": ["approve", "approve", "wrong_code"], "#);
        load_case(&dir, &write(&dir, "step-up-refused.json", &refused)).unwrap();
        let approved = step_up(r#""authorize": ["wrong_code", "approve"], "#);
        let err = load_case(&dir, &write(&dir, "step-up-approved.json", &approved)).unwrap_err();
        assert_eq!(err.location, "server.auth.step_up.always", "{err}");
        let stray = MINIMAL.replace(r#""plan""#, r#""unbounded_loop": "no count", "plan""#);
        let err = load_case(&dir, &write(&dir, "stray.json", &stray)).unwrap_err();
        assert_eq!(err.location, "unbounded_loop", "{err}");

        // A step that accepts `timeout` under a should check, whose call is never answered:
        // a client without a timeout would be judged at the deadline, at must. Answered late,
        // the deadline must cover the late answer.
        let timed = |reply: &str, deadline: u64| {
            MINIMAL.replace(
                r#""plan": ["connect"]"#,
                &format!(
                    r#""deadline_ms": {deadline}, "server": {{"handlers": [{{"method": "tools/call", "params": {{"name": "slow"}}, {reply}}}]}}, "plan": ["connect", {{"op": "call_tool", "name": "slow", "error": "timeout", "requirement": "R-2", "broken_by": ["x"]}}]"#
                ),
            )
        };
        let hang = timed(r#""reply": "hang""#, 10000);
        let err = load_case(&dir, &write(&dir, "hang.json", &hang)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0]", "{err}");
        assert!(err.message.contains("never answers"), "{err}");
        let late = r#""delay_ms": 30000, "reply": {"result": {"content": []}}"#;
        let err =
            load_case(&dir, &write(&dir, "late-short.json", &timed(late, 10000))).unwrap_err();
        assert_eq!(err.location, "deadline_ms", "{err}");
        assert!(err.message.contains("30000 ms (plan[1]"), "{err}");
        load_case(&dir, &write(&dir, "late.json", &timed(late, 40000))).unwrap();
    }

    #[test]
    fn the_page_cap_and_repeated_cursor_cases_pass_the_deadline_lint() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for file in [
            "lists/page-cap.json",
            "lists/repeated-cursor-at-once.json",
            "lists/repeated-cursor-after-two-pages.json",
            "tools/repeated-cursor-at-once.json",
            "tools/repeated-cursor-after-two-pages.json",
        ] {
            let cases = load_cases(root, &root.join(file)).unwrap();
            for case in cases {
                let (budget, _) = deadline::budget(&case.scenario);
                // Well past what a correct client may spend: at least a timeout to spare.
                assert!(
                    case.scenario.deadline_ms >= budget + case.scenario.timeout_ms,
                    "{}: deadline {} budget {budget}",
                    case.id,
                    case.scenario.deadline_ms
                );
            }
        }
    }

    #[test]
    fn fixtures_and_the_builtin_echo_join_the_script() {
        let dir = temp_dir("fixtures");
        let text = MINIMAL.replace(
            r#""plan": ["connect"]"#,
            r#""fixtures": ["listed"], "server": {"handlers": [{"method": "ping", "reply": {"result": {}}}]}, "plan": ["connect", {"op": "call_tool", "name": "echo"}]"#,
        );
        let path = write(&dir, "with-fixture.json", &text);
        let case = load_case(&dir, &path).unwrap();
        let methods: Vec<&str> = case
            .scenario
            .server
            .handlers
            .iter()
            .map(|h| h.method.as_str())
            .collect();
        assert_eq!(methods, ["ping", "tools/list", "tools/call"]);
    }

    #[test]
    fn meaningless_cases_are_rejected_with_their_field() {
        let dir = temp_dir("meaning");
        let no_wire = MINIMAL.replace(
            r#""wire": [{"check": "c", "sent": {"method": "initialize"}, "broken_by": ["do-nothing"]}]"#,
            r#""lifecycle": []"#,
        ).replace(r#"["connect"]"#, r#"[{"op": "connect", "ok": {}, "broken_by": []}]"#);
        let err = load_case(&dir, &write(&dir, "no-wire.json", &no_wire)).unwrap_err();
        assert_eq!(err.location, "wire");
        let two = MINIMAL.replace(r#""sent""#, r#""not_sent": {}, "sent""#);
        let err = load_case(&dir, &write(&dir, "two-rules.json", &two)).unwrap_err();
        assert!(err.location.contains("wire[0]"), "{err}");
        assert!(err.message.contains("exactly one of"), "{err}");
        // `ok` and `error` together: either is right; neither, with a `broken_by`, means nothing.
        let both = MINIMAL.replace(
            r#"["connect"]"#,
            r#"[{"op": "connect", "ok": {}, "error": "timeout", "broken_by": []}]"#,
        );
        let case = load_case(&dir, &write(&dir, "ok-and-error.json", &both)).unwrap();
        assert!(
            case.scenario.checks[0]
                .name
                .ends_with("or fails with error kind timeout")
        );
        let neither = MINIMAL.replace(
            r#"["connect"]"#,
            r#"[{"op": "connect", "broken_by": ["do-nothing"]}]"#,
        );
        let err = load_case(&dir, &write(&dir, "neither.json", &neither)).unwrap_err();
        assert!(err.location.contains("plan[0]"), "{err}");
        let kind = MINIMAL.replace(
            r#"["connect"]"#,
            r#"[{"op": "connect", "error": ["timeout", "nap"], "broken_by": []}]"#,
        );
        let err = load_case(&dir, &write(&dir, "bad-kind.json", &kind)).unwrap_err();
        assert!(err.message.contains("nap"), "{err}");
        let err = load_case(&dir, &write(&dir, "Not_Kebab.json", MINIMAL)).unwrap_err();
        assert_eq!(err.location, "file name");
        let bad_entry = MINIMAL.replace(r#"["do-nothing"]"#, r#"["do-nothing@carrier-pigeon"]"#);
        let err = load_case(&dir, &write(&dir, "bad-entry.json", &bad_entry)).unwrap_err();
        assert_eq!(err.location, "wire[0].broken_by[0]");
    }

    #[test]
    fn errors_accept_kinds_lists_and_objects() {
        let dir = temp_dir("errors");
        let text = MINIMAL.replace(
            r#""plan": ["connect"]"#,
            r#""deadline_ms": 15000, "plan": ["connect",
              {"op": "list_tools", "error": "timeout", "broken_by": []},
              {"op": "list_tools", "error": ["tls", "timeout"], "broken_by": []},
              {"op": "list_tools", "error": {"kind": ["protocol_error", "handshake_failed"], "code": -32021}, "broken_by": []}]"#,
        );
        let case = load_case(&dir, &write(&dir, "errors.json", &text)).unwrap();
        let names: Vec<&str> = case
            .scenario
            .checks
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            names[..3],
            [
                "step 1 (list_tools) fails with error kind timeout",
                "step 2 (list_tools) fails with error kind tls or timeout",
                "step 3 (list_tools) fails with error kind protocol_error (code -32021) or handshake_failed"
            ]
        );
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
            r#"{"method": "ping", "reply": "hang", "faults": {"before": [{"raw": "x", "bytes": "\\xff"}]}}"#,
        );
        let err = load_case(&dir, &write(&dir, "two-forms.json", &two_forms)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].faults.before[0]");
        let not_3xx = with_server(
            r#"{"method": "ping", "reply": "hang", "http": {"redirect": {"status": 200, "to": "other_host"}}}"#,
        );
        let err = load_case(&dir, &write(&dir, "not-3xx.json", &not_3xx)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].http.redirect.status");
        let never = with_server(r#"{"method": "ping", "reply": {"result": {}}, "times": 0}"#);
        let err = load_case(&dir, &write(&dir, "times-0.json", &never)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].times");
        assert!(err.message.contains("at least 1"), "{err}");
        let noted =
            with_server(r#"{"method": "notifications/initialized", "reply": "hang", "times": 2}"#);
        let err = load_case(&dir, &write(&dir, "times-note.json", &noted)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].times");
        assert!(err.message.contains("notification"), "{err}");
        let fine = with_server(
            r#"{"method": "ping", "reply": {"result": {}}, "faults": {"before": [{"bytes": "\\xff\\x0a", "repeat": 3}], "padding_bytes": 10, "truncate": "stall", "then": "close_stdout"}}"#,
        );
        let case = load_case(&dir, &write(&dir, "fine.json", &fine)).unwrap();
        let emit = &case.scenario.server.handlers[0]
            .faults
            .as_ref()
            .unwrap()
            .before[0];
        assert_eq!(emit.bytes.as_deref(), Some(&[0xff, 0x0a][..]));
    }

    #[test]
    fn sends_are_checked() {
        let dir = temp_dir("sends");
        let with = |server: &str| {
            MINIMAL.replace(r#""plan":"#, &format!(r#""server": {server}, "plan":"#))
        };
        let progress = r#"{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {"$request": "params/_meta/progressToken"}}}"#;
        let bad_pointer = with(&format!(
            r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "sends": [{{"message": {progress}}}]}}]}}"#
        ));
        let err = load_case(&dir, &write(&dir, "bad-pointer.json", &bad_pointer)).unwrap_err();
        assert_eq!(
            err.location,
            "server.handlers[0].sends[0].message.params.progressToken"
        );
        assert!(err.message.contains("`/`"), "{}", err.message);
        // A `$response` names an earlier awaited request of the same list, and a pointer.
        let make = r#"{"message": {"jsonrpc": "2.0", "id": "make", "method": "ping"}, "await_response": true}"#;
        let get = |reference: &str| {
            format!(
                r#"{{"message": {{"jsonrpc": "2.0", "id": "get", "method": "tasks/get", "params": {{"taskId": {{"$response": {reference}}}}}}}}}"#
            )
        };
        for (sends, location, says) in [
            (
                format!(
                    "[{}, {make}]",
                    get(r#"{"id": "make", "pointer": "/result"}"#)
                ),
                "server.handlers[0].sends[0].message.params.taskId.$response.id",
                "await_response",
            ),
            (
                format!(
                    "[{make}, {}]",
                    get(r#"{"id": "make", "pointer": "result"}"#)
                ),
                "server.handlers[0].sends[1].message.params.taskId.$response.pointer",
                "`/`",
            ),
            (
                format!("[{make}, {}]", get(r#"{"id": "make", "at": "/result"}"#)),
                "server.handlers[0].sends[1].message.params.taskId.$response",
                "\"at\"",
            ),
        ] {
            let case = with(&format!(
                r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "sends": {sends}}}]}}"#
            ));
            let err = load_case(&dir, &write(&dir, "bad-response.json", &case)).unwrap_err();
            assert_eq!(err.location, location);
            assert!(err.message.contains(says), "{}", err.message);
        }
        let good = with(&format!(
            r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "sends": [{make}, {}]}}]}}"#,
            get(r#"{"id": "make", "pointer": "/result/task/taskId"}"#)
        ));
        load_case(&dir, &write(&dir, "good-response.json", &good)).unwrap();
        let ping = r#"{"jsonrpc": "2.0", "id": "s1", "method": "ping"}"#;
        let via_get = with(&format!(
            r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "sends": [{{"message": {ping}, "via": "get"}}]}}]}}"#
        ));
        let err = load_case(&dir, &write(&dir, "via-get.json", &via_get)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].sends[0].via");
        assert!(err.message.contains("\"stream\""), "{}", err.message);
        // Over HTTP a message after the reply travels on the GET stream by default.
        let after = with(&format!(
            r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "sends": [{{"message": {ping}, "at": "after"}}]}}]}}"#
        ));
        let err = load_case(&dir, &write(&dir, "after.json", &after)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0].sends[0]");
        let stdio_only = after.replace(r#""plan":"#, r#""transports": ["stdio"], "plan":"#);
        load_case(&dir, &write(&dir, "stdio-only.json", &stdio_only)).unwrap();
        let streamed = with(&format!(
            r#"{{"http": {{"get": "stream"}}, "handlers": [{{"method": "tools/call", "reply": "hang", "sends": [{{"message": {ping}, "via": "get"}}]}}]}}"#
        ));
        load_case(&dir, &write(&dir, "streamed.json", &streamed)).unwrap();
        let split = with(&format!(
            r#"{{"handlers": [{{"method": "tools/call", "reply": "hang", "http": {{"split": true}}, "sends": [{{"message": {ping}}}]}}]}}"#
        ));
        let err = load_case(&dir, &write(&dir, "split.json", &split)).unwrap_err();
        assert_eq!(err.location, "server.handlers[0]");
        assert!(err.message.contains("plain answer"), "{}", err.message);
    }

    #[test]
    fn variants_make_one_case_each() {
        let dir = temp_dir("variants");
        let text = MINIMAL
            .replace(r#""plan""#, r#""transports": ["https"], "variants": {"a": {"m": "initialize"}, "b": {"m": "ping"}}, "plan""#)
            .replace(r#"{"method": "initialize"}"#, r#"{"method": {"$var": "m"}}"#)
            .replace(r#"["do-nothing"]"#, r#"["do-nothing", "do-nothing@https@b"]"#);
        let cases = load_cases(&dir, &write(&dir, "family.json", &text)).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["family-a", "family-b"]);
        assert_eq!(cases[1].variant.as_deref(), Some("b"));
        assert_eq!(
            cases[0].scenario.checks[0].broken_by[1].variant.as_deref(),
            Some("b")
        );
        // Over both transports too: each variant is a case of its own on each.
        let both = text.replace(r#""transports": ["https"], "#, "");
        let cases = load_cases(&dir, &write(&dir, "both-family.json", &both)).unwrap();
        assert_eq!(cases.len(), 2);
    }

    #[test]
    fn revisions_multiply_trials_and_are_checked() {
        let dir = temp_dir("revisions");
        let text = MINIMAL.replace(
            r#""plan""#,
            r#""revisions": ["2025-03-26", "2025-06-18"], "plan""#,
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
            r#""sent": {"method": "initialize"},"#,
            r#""sent": {"method": "initialize"}, "revisions": ["2025-06-18"],"#,
        );
        let err = load_case(&dir, &write(&dir, "stray-rev.json", &stray)).unwrap_err();
        assert_eq!(err.location, "wire[0].revisions");
        let legacy_discover = MINIMAL.replace(r#"["connect"]"#, r#"["connect", "discover"]"#);
        let err = load_case(&dir, &write(&dir, "discover.json", &legacy_discover)).unwrap_err();
        assert_eq!(err.location, "plan[1]");
    }

    #[test]
    fn a_dual_client_gets_the_legacy_revision_as_its_fallback_version() {
        let dir = temp_dir("dual");
        let text = MINIMAL.replace(
            r#""plan""#,
            r#""client_era": "dual", "revisions": ["2025-06-18"], "plan""#,
        );
        let case = load_case(&dir, &write(&dir, "dual.json", &text)).unwrap();
        assert_eq!(case.versions().legacy.as_deref(), Some("2025-11-25"));
        let (at, _) = trials(&[case]).remove(0);
        let versions = at.versions();
        assert_eq!(versions.protocol, "2026-07-28");
        assert_eq!(versions.legacy.as_deref(), Some("2025-06-18"));
    }
}
