//! Many servers, one model: the tools of every connected server as one set of names a model
//! can be given. A tool name is unique only within its server (2026-07-28
//! `server/tools.mdx` § Tool Names), so a name two servers share is exposed prefixed with the
//! caller's own name for each server (`<server>__<tool>`), which the caller keeps unique.
//! `serverInfo.name` is the server's say about itself, may be the same for two servers, and is
//! never used to tell them apart. A name nobody shares is exposed as it is.

use std::collections::{BTreeMap, BTreeSet};

/// One connected server's tools, as the caller knows the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTools {
    /// The caller's own name for the server, unique among the servers given.
    pub server: String,
    /// The `serverInfo.name` the server reported about itself, if any (not used for naming).
    pub server_info_name: Option<String>,
    /// The names of its tools, as listed.
    pub tools: Vec<String>,
}

/// One tool as a model would see it, and where it maps back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposedTool {
    /// The name a model is given; distinct among every exposed tool.
    pub name: String,
    /// The caller's name for the server the tool belongs to.
    pub server: String,
    /// The server's own name for the tool (what `tools/call` sends).
    pub tool: String,
}

/// The decisions of exposing many servers' tools; each default is the correct one.
pub(crate) trait ServersSeams {
    /// The name `tool` of `server` is exposed under; correct: `correct`, the collision-free
    /// name made from the caller's name for the server.
    fn exposed_name(&self, _server: &ServerTools, _tool: &str, correct: String) -> String {
        correct
    }

    /// Whether one server's failed step ends every other connection too; correct: never
    /// (a server's failure is its own).
    fn close_all_after_failure(&self, _error: &crate::Error) -> bool {
        false
    }
}

#[cfg(not(feature = "defects"))]
impl ServersSeams for crate::seams::Seams {}

/// The tools of every server in `servers`, in order, each under a name no other exposed
/// tool has.
pub fn expose(servers: &[ServerTools]) -> Vec<ExposedTool> {
    expose_with(servers, &crate::seams::Seams::default())
}

pub(crate) fn expose_with(servers: &[ServerTools], seams: &impl ServersSeams) -> Vec<ExposedTool> {
    let mut owners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in servers {
        for tool in &s.tools {
            owners.entry(tool).or_default().insert(&s.server);
        }
    }
    // Names kept as they are: a prefixed name must not take one of them.
    let mut taken: BTreeSet<String> = owners
        .iter()
        .filter(|(_, by)| by.len() == 1)
        .map(|(tool, _)| (*tool).to_owned())
        .collect();
    let mut exposed = Vec::new();
    for s in servers {
        for tool in &s.tools {
            let shared = owners.get(tool.as_str()).is_some_and(|by| by.len() > 1);
            let correct = match shared {
                false => tool.clone(),
                true => {
                    let base = format!("{}__{tool}", s.server);
                    let mut name = base.clone();
                    let mut n = 2;
                    while taken.contains(&name) {
                        name = format!("{base}_{n}");
                        n += 1;
                    }
                    taken.insert(name.clone());
                    name
                }
            };
            exposed.push(ExposedTool {
                name: seams.exposed_name(s, tool, correct),
                server: s.server.clone(),
                tool: tool.clone(),
            });
        }
    }
    exposed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, info: &str, tools: &[&str]) -> ServerTools {
        ServerTools {
            server: name.into(),
            server_info_name: Some(info.into()),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
        }
    }

    fn names(exposed: &[ExposedTool]) -> Vec<&str> {
        exposed.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn only_shared_names_are_prefixed_with_the_callers_name_for_the_server() {
        let exposed = expose(&[
            server("main", "same", &["search", "echo"]),
            server("b", "same", &["search", "weather"]),
        ]);
        assert_eq!(
            names(&exposed),
            ["main__search", "echo", "b__search", "weather"]
        );
        assert_eq!(
            (exposed[2].server.as_str(), exposed[2].tool.as_str()),
            ("b", "search")
        );
    }

    #[test]
    fn a_prefixed_name_never_takes_a_name_already_exposed() {
        let exposed = expose(&[server("a", "x", &["t", "b__t"]), server("b", "y", &["t"])]);
        let all: BTreeSet<&str> = names(&exposed).into_iter().collect();
        assert_eq!(all.len(), 3, "{:?}", names(&exposed));
        assert!(all.contains("b__t") && all.contains("b__t_2"), "{all:?}");
    }
}
