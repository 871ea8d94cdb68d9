//! `mcp-harness-driver`: the reference client run through the harness's driver contract.
//!
//! All logic lives in [`mcp_harness_client::driver`]; this file only starts the runtime.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    mcp_harness_client::driver::main().await
}
