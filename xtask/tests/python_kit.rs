//! The Python adapter kit's own tests (`adapters/kits/python/test_mcp_harness_kit.py`, plain
//! `python3 -m unittest`, standard library only), run by `cargo test` so a change to the kit
//! cannot slip past the workspace's test run. Where no `python3` is on PATH the test says so
//! and passes: CI installs one (.ci/run), a Rust-only checkout need not.

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_kit_passes_its_unit_tests() {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/kits/python");
    let run = Command::new("python3")
        .args(["-m", "unittest", "-q", "test_mcp_harness_kit"])
        .current_dir(&kit)
        .output();
    let output = match run {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: python3 is not on PATH, so the Python kit's tests cannot run");
            return;
        }
        Err(e) => panic!("cannot start python3 for the kit's tests: {e}"),
    };
    assert!(
        output.status.success(),
        "the Python kit's unit tests failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}
