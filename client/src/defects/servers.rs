//! Seam: many servers at once (`aggregate.rs`). Defects here: `expose-unnamespaced`,
//! `namespace-by-server-info`, `one-failure-closes-all`.

use crate::aggregate::{ServerTools, ServersSeams};
use crate::error::{Error, ErrorKind};
use crate::seams::{Seams, ServersDefects};

impl ServersDefects {
    /// The names this seam accepts.
    pub(crate) const NAMES: [&'static str; 3] = [
        "expose-unnamespaced",
        "namespace-by-server-info",
        "one-failure-closes-all",
    ];

    /// Switches on `name`; false if it is not this seam's.
    pub(crate) fn enable(&mut self, name: &str) -> bool {
        match name {
            "expose-unnamespaced" => self.unnamespaced = true,
            "namespace-by-server-info" => self.by_server_info = true,
            "one-failure-closes-all" => self.close_all = true,
            _ => return false,
        }
        true
    }
}

impl ServersSeams for Seams {
    fn exposed_name(&self, server: &ServerTools, tool: &str, correct: String) -> String {
        let d = self.0.servers;
        let shared = correct != tool;
        match (shared, d.unnamespaced, d.by_server_info) {
            (true, true, _) => tool.to_owned(),
            (true, false, true) => {
                let info = server.server_info_name.as_deref().unwrap_or_default();
                format!("{info}__{tool}")
            }
            _ => correct,
        }
    }

    fn close_all_after_failure(&self, error: &Error) -> bool {
        self.0.servers.close_all && error.kind == ErrorKind::TransportClosed
    }
}

#[cfg(test)]
mod tests {
    use crate::aggregate::{ServerTools, expose_with};
    use crate::seams::Seams;

    fn both(info: &str) -> Vec<ServerTools> {
        ["main", "b"]
            .map(|s| ServerTools {
                server: s.into(),
                server_info_name: Some(info.into()),
                tools: vec!["search".into()],
            })
            .into()
    }

    fn names(seams: &Seams, info: &str) -> Vec<String> {
        expose_with(&both(info), seams)
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn each_defect_exposes_a_collision() {
        assert_eq!(
            names(&Seams::default(), "same"),
            ["main__search", "b__search"]
        );
        assert_eq!(
            names(&Seams::only("expose-unnamespaced"), "x"),
            ["search", "search"]
        );
        assert_eq!(
            names(&Seams::only("namespace-by-server-info"), "same"),
            ["same__search", "same__search"]
        );
    }
}
