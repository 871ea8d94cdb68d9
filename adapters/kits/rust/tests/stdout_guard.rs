//! The stdout guard, end to end: this test runs itself again as a child that guards stdout and
//! then prints the way a library might (`println!`, a child process inheriting stdout); only
//! the outcome line may reach the child's real stdout.

use std::process::Command;

use serde_json::json;

const CHILD: &str = "MCP_HARNESS_KIT_GUARD_CHILD";

#[test]
fn library_prints_go_to_stderr_and_outcome_lines_to_stdout() {
    if std::env::var_os(CHILD).is_some() {
        let mut output = mcp_harness_kit::Output::guard();
        println!("noise from println");
        let status = Command::new("sh")
            .args(["-c", "echo noise from a child"])
            .status();
        assert!(status.is_ok_and(|s| s.success()));
        output.line(&json!({"step":0,"op":"ping","ok":{}}));
        return;
    }
    let me = std::env::current_exe().unwrap();
    let run = Command::new(me)
        .args([
            "--exact",
            "library_prints_go_to_stderr_and_outcome_lines_to_stdout",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let line = stdout.find('{').map(|at| &stdout[at..]).unwrap_or_default();
    let line: serde_json::Value = serde_json::from_str(line.trim()).expect("one outcome line");
    assert_eq!(line, json!({"step":0,"op":"ping","ok":{}}));
    assert!(!stdout.contains("noise"), "stdout: {stdout}");
    assert!(stderr.contains("noise from println"), "stderr: {stderr}");
    assert!(stderr.contains("noise from a child"), "stderr: {stderr}");
}
