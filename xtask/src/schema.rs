//! `cargo xtask schema`: the JSON Schemas of case files (`scenarios/scenario.schema.json`),
//! of fixtures (`scenarios/fixture.schema.json`) and of the requirements catalogue
//! (`scenarios/requirements.schema.json`, also for users' own `requirements.json`),
//! generated from the model's `///` docs with schemars. The committed files are checked fresh in CI (`--check`), never hand-edited.

use std::path::{Path, PathBuf};

use mcp_harness_scenarios::model::{CaseFile, Fixture, Requirement};

/// The case schema's text as it should be committed.
pub fn generate() -> String {
    text(schemars::schema_for!(CaseFile))
}

/// The fixture schema's text as it should be committed.
pub fn generate_fixture() -> String {
    text(schemars::schema_for!(Fixture))
}

/// The catalogue schema's text as it should be committed: an array of requirements.
pub fn generate_requirements() -> String {
    let mut schema = schemars::schema_for!(Vec<Requirement>);
    schema.insert("title".into(), "requirements.json".into());
    schema.insert(
        "description".into(),
        "A requirements catalogue: the requirements a directory's cases cite by id. Each check's level is its requirement's. A user's case directory may hold one of its own, with ids of its own beside the built-in ones."
            .into(),
    );
    text(schema)
}

/// The catalogue schema's path, beside the case schema at `case_schema`.
pub fn requirements_schema_path(case_schema: &Path) -> PathBuf {
    case_schema.with_file_name("requirements.schema.json")
}

fn text(schema: schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The fixture schema's path, beside the case schema at `case_schema`.
pub fn fixture_schema_path(case_schema: &Path) -> PathBuf {
    case_schema.with_file_name("fixture.schema.json")
}

/// Writes every schema (the case schema at `path`, the others beside it), or with
/// `check` fails when a committed file differs.
pub fn run(path: &Path, check: bool) -> Result<(), String> {
    for (file, fresh) in [
        (path.to_owned(), generate()),
        (fixture_schema_path(path), generate_fixture()),
        (requirements_schema_path(path), generate_requirements()),
    ] {
        if check {
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            if committed != fresh {
                return Err(format!(
                    "{} is stale; run `cargo xtask schema` and commit the result",
                    file.display()
                ));
            }
        } else {
            std::fs::write(&file, fresh)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
    }
    Ok(())
}
