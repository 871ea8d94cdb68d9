//! `cargo xtask requirements`: the catalogue with, for each requirement, the checks and
//! trials that cite it, and how well it is covered. A requirement is *covered* when checks
//! cite it on every transport it concerns (its catalogue `transport`, else both), *partly*
//! when they cite it on some, *not* when nothing cites it. An entry the catalogue marks
//! `not_observable` is accounted for apart: shown with its reason, counted in its own
//! column, never listed as *not*.
//!
//! `--cases DIR` reports a user's own directory instead: the checks of its cases against its
//! own `requirements.json` (or, without one, the built-in catalogue and the always-on checks
//! that run in every trial).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use mcp_harness_scenarios::load;
use mcp_harness_scenarios::model::{Level, Requirement, Transport};

use crate::conformance::checks::{ALWAYS_ON, Scope};

/// How much of a requirement the suite checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coverage {
    /// Cited on every transport the requirement concerns.
    Covered,
    /// Cited, but not on every transport it concerns.
    Partly,
    /// Cited by no check.
    Not,
    /// Marked `not_observable` in the catalogue: no check can judge it (the reason says why).
    NotObservable,
}

impl Coverage {
    fn as_str(self) -> &'static str {
        match self {
            Coverage::Covered => "covered",
            Coverage::Partly => "partly",
            Coverage::Not => "not",
            Coverage::NotObservable => "not observable",
        }
    }
}

/// What cites one requirement.
#[derive(Debug, Default)]
struct Citations {
    /// `case id: check name` of each case check citing it.
    checks: BTreeSet<String>,
    /// The trials those checks run in.
    trials: BTreeSet<String>,
    /// The always-on checks citing it.
    always_on: BTreeSet<&'static str>,
    /// The transports on which something checks it.
    transports: BTreeSet<&'static str>,
}

/// The transports a requirement concerns: its `transport`, else both; none for the driver
/// contract, which binds the adapter whatever the transport.
fn concerns(r: &Requirement) -> Vec<&'static str> {
    match r.transport {
        Some(t) => vec![t.as_str()],
        None if r.id.starts_with("CONTRACT-") => Vec::new(),
        None => vec!["stdio", "https"],
    }
}

fn coverage(r: &Requirement, c: Option<&Citations>) -> Coverage {
    if !r.is_observable() {
        return Coverage::NotObservable;
    }
    match c {
        None => Coverage::Not,
        Some(c) if c.checks.is_empty() && c.always_on.is_empty() => Coverage::Not,
        Some(c) if concerns(r).iter().all(|t| c.transports.contains(t)) => Coverage::Covered,
        Some(_) => Coverage::Partly,
    }
}

/// Builds the report for the scenarios under `root`, or with `own` for the cases of that
/// user's directory (see the module docs); `only` keeps the requirements whose coverage is
/// one of those given (all when empty).
pub fn report(root: &Path, own: Option<&Path>, only: &[Coverage]) -> Result<String, String> {
    let library = load::Library::find(root).map_err(|e| e.to_string())?;
    let (cases, catalogue, header) = match own {
        None => {
            let cases = load::load_dir(root).map_err(|errors| {
                let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
                shown.join("\n")
            })?;
            (cases, library.catalogue.entries().to_vec(), String::new())
        }
        Some(dir) => own_cases(&library, root, dir)?,
    };
    let own_catalogue = own.is_some_and(|d| d.join(load::CATALOGUE_FILE).is_file());
    let mut cited: BTreeMap<String, Citations> = BTreeMap::new();
    for (case, transport) in mcp_harness_scenarios::trials(&cases) {
        let trial = case.trial_name(transport);
        for check in &case.scenario.checks {
            let c = cited.entry(check.requirement.id.clone()).or_default();
            c.checks.insert(format!("{}: {}", case.id, check.name));
            c.trials.insert(trial.clone());
            c.transports.insert(transport.as_str());
        }
    }
    // The always-on checks cite built-in requirements: shown with the built-in catalogue.
    for &(name, id, scope) in ALWAYS_ON.iter().filter(|_| !own_catalogue) {
        let c = cited.entry(id.to_owned()).or_default();
        c.always_on.insert(name);
        let on: &[Transport] = match scope {
            Scope::Stdio => &[Transport::Stdio],
            Scope::Http => &[Transport::Https],
            Scope::Every | Scope::When => &[Transport::Stdio, Transport::Https],
        };
        c.transports.extend(on.iter().map(|t| t.as_str()));
    }

    let mut out = header;
    let mut tally: std::collections::HashMap<(Level, Coverage), usize> = Default::default();
    for r in &catalogue {
        let c = cited.get(&r.id);
        let cov = coverage(r, c);
        *tally.entry((r.level, cov)).or_default() += 1;
        if !only.is_empty() && !only.contains(&cov) {
            continue;
        }
        describe(&mut out, r, cov, c);
    }
    let unknown: Vec<&String> = cited
        .keys()
        .filter(|id| library.catalogue.get(id).is_none() && !catalogue.iter().any(|r| &r.id == *id))
        .collect();
    if own_catalogue {
        let builtin: Vec<&str> = cited
            .keys()
            .filter(|id| library.catalogue.get(id).is_some())
            .map(String::as_str)
            .collect();
        if !builtin.is_empty() {
            let _ = writeln!(
                out,
                "your cases also cite built-in requirements: {}",
                builtin.join(", ")
            );
        }
    }
    for id in unknown {
        let _ = writeln!(
            out,
            "{id}: cited by an always-on check but not in the catalogue"
        );
    }
    for r in catalogue.iter().filter(|r| !r.is_observable()) {
        if let Some(c) = cited.get(&r.id).filter(|c| !c.always_on.is_empty()) {
            let names: Vec<&str> = c.always_on.iter().copied().collect();
            let _ = writeln!(
                out,
                "{}: marked not observable but cited by an always-on check: {}",
                r.id,
                names.join("; ")
            );
        }
    }
    let _ = writeln!(
        out,
        "\ncoverage by level (covered / partly / not / not observable):"
    );
    for level in [Level::Must, Level::Should, Level::Profile, Level::Advisory] {
        let n = |cov| tally.get(&(level, cov)).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "  {:<9} {:>3} / {:>3} / {:>3} / {:>3}",
            level.as_str(),
            n(Coverage::Covered),
            n(Coverage::Partly),
            n(Coverage::Not),
            n(Coverage::NotObservable)
        );
    }
    Ok(out)
}

/// The cases of the user's directory `dir`, the catalogue to show (its own
/// `requirements.json`, else the built-in one) and a header line saying which.
fn own_cases(
    library: &load::Library,
    root: &Path,
    dir: &Path,
) -> Result<(Vec<mcp_harness_scenarios::Case>, Vec<Requirement>, String), String> {
    let dirs = crate::conformance::cases::resolve_dirs(&[dir.to_owned()])?;
    let sources = crate::conformance::cases::Sources {
        builtin: root.to_owned(),
        with_builtin: false,
        user_dirs: dirs.clone(),
    };
    let cases = sources.load().map_err(|e| e.join("\n"))?;
    let own_file = dir.join(load::CATALOGUE_FILE);
    let (catalogue, over) = match own_file.is_file() {
        true => {
            let merged = library.with_own(&dirs[0]).map_err(|e| e.to_string())?;
            let own: Vec<Requirement> = merged
                .catalogue
                .entries()
                .iter()
                .filter(|r| library.catalogue.get(&r.id).is_none())
                .cloned()
                .collect();
            let over = format!("{} ({} requirements)", own_file.display(), own.len());
            (own, over)
        }
        false => (
            library.catalogue.entries().to_vec(),
            "the built-in catalogue (this directory has no requirements.json)".to_owned(),
        ),
    };
    let header = format!(
        "coverage by the {} case{} of {} over {over}\n\n",
        cases.len(),
        if cases.len() == 1 { "" } else { "s" },
        dir.display()
    );
    Ok((cases, catalogue, header))
}

fn describe(out: &mut String, r: &Requirement, cov: Coverage, c: Option<&Citations>) {
    let _ = writeln!(
        out,
        "{} [{}] {}: {}",
        r.id,
        r.level.as_str(),
        cov.as_str(),
        r.text
    );
    let _ = writeln!(out, "    source: {}", r.source);
    if let Some(why) = &r.not_observable {
        let _ = writeln!(out, "    not observable: {why}");
    }
    let Some(c) = c else { return };
    for name in &c.always_on {
        let _ = writeln!(out, "    always on: {name}");
    }
    for check in &c.checks {
        let _ = writeln!(out, "    check: {check}");
    }
    if !c.trials.is_empty() {
        let _ = writeln!(out, "    trials: {}", c.trials.len());
    }
    if cov == Coverage::Partly {
        let missing: Vec<&str> = concerns(r)
            .into_iter()
            .filter(|t| !c.transports.contains(t))
            .collect();
        let _ = writeln!(out, "    not checked over: {}", missing.join(", "));
    }
}

/// Parses `covered`, `partly`, `not` or `not-observable`.
pub fn parse_coverage(s: &str) -> Result<Coverage, String> {
    match s {
        "covered" => Ok(Coverage::Covered),
        "partly" => Ok(Coverage::Partly),
        "not" => Ok(Coverage::Not),
        "not-observable" => Ok(Coverage::NotObservable),
        other => Err(format!(
            "unknown coverage {other:?}; expected covered, partly, not or not-observable"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: &str, transport: Option<Transport>) -> Requirement {
        Requirement {
            id: id.into(),
            level: Level::Must,
            transport,
            text: String::new(),
            source: String::new(),
            revisions: Vec::new(),
            not_observable: None,
        }
    }

    #[test]
    fn transport_specific_requirements_need_only_their_transport() {
        let mut c = Citations::default();
        c.checks.insert("x: y".into());
        c.transports.insert("https");
        let http = req("HTTP-06", Some(Transport::Https));
        let stdio = req("STDIO-02", Some(Transport::Stdio));
        let both = req("LIFE-01", None);
        assert_eq!(coverage(&http, Some(&c)), Coverage::Covered);
        assert_eq!(coverage(&both, Some(&c)), Coverage::Partly);
        assert_eq!(coverage(&stdio, Some(&c)), Coverage::Partly);
        assert_eq!(coverage(&both, None), Coverage::Not);
        let mut server_side = req("CANCEL-08", None);
        server_side.not_observable = Some("binds the server".into());
        assert_eq!(coverage(&server_side, None), Coverage::NotObservable);
    }

    #[test]
    fn the_shipped_catalogue_reports_every_level() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let text = report(&root, None, &[]).expect("the shipped cases load");
        assert!(text.contains("coverage by level"));
        assert!(text.contains("LIFE-01 [must] covered"), "{text}");
        assert!(!text.contains("not in the catalogue"), "{text}");
        assert!(!text.contains("marked not observable but cited"), "{text}");
    }

    #[test]
    fn not_observable_entries_are_listed_apart_with_their_reason() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let library = load::Library::find(&root).expect("the shipped catalogue loads");
        let Some(r) = library
            .catalogue
            .entries()
            .iter()
            .find(|r| !r.is_observable())
        else {
            panic!("the shipped catalogue marks nothing not observable");
        };
        let not = report(&root, None, &[Coverage::Not]).expect("report");
        assert!(!not.contains(&format!("{} [", r.id)), "{not}");
        let apart = report(&root, None, &[Coverage::NotObservable]).expect("report");
        let why = r.not_observable.as_deref().unwrap_or_default();
        assert!(apart.contains(&format!("{} [", r.id)), "{apart}");
        assert!(apart.contains(&format!("not observable: {why}")), "{apart}");
    }
}
