//! `cargo xtask schema`: the scenario JSON Schema, generated from the model's `///` docs
//! with schemars. The committed file is checked fresh in CI (`--check`), never hand-edited.

use std::path::Path;

use mcp_harness_scenarios::Scenario;

/// The schema text as it should be committed.
pub fn generate() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the schema, or with `check` fails when the committed file differs.
pub fn run(path: &Path, check: bool) -> Result<(), String> {
    let fresh = generate();
    if check {
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        if committed != fresh {
            return Err(format!(
                "{} is stale; run `cargo xtask schema` and commit the result",
                path.display()
            ));
        }
        return Ok(());
    }
    std::fs::write(path, fresh).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
