//! The JavaScript adapter kit's own tests (`adapters/kits/js/mcp-harness-kit.test.mjs`), run
//! with Node's built-in test runner so `cargo test` covers the kit too. Node is not a build
//! dependency of the workspace: without a `node` on PATH the test says so and passes.

use std::path::Path;
use std::process::Command;

#[test]
fn js_kit_passes_its_node_tests() {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/kits/js");
    let test_file = kit.join("mcp-harness-kit.test.mjs");
    let output = match Command::new("node").arg("--test").arg(&test_file).output() {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: no `node` on PATH, so the JavaScript kit's tests did not run");
            return;
        }
        Err(error) => panic!("cannot run node --test {}: {error}", test_file.display()),
    };
    assert!(
        output.status.success(),
        "node --test {} failed ({}):\n{}{}",
        test_file.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
