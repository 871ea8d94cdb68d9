//! `mcp-fake-stdio --scenario <path.json> --transcript <path.jsonl> [--revision <rev>] [--variant <name>] [--time-scale <F>] [--canary <origin>] [--fixtures-from <dirs>]`: the fake MCP server a
//! client under test launches as its child. Exits 2 on bad usage or an unusable scenario;
//! otherwise its exit status is the script's (see `mcp_harness_fakes::stdio`). The program
//! is [`mcp_harness_fakes::cli::main`], which the installed `mcp-harness` binary runs too.

use std::process::ExitCode;

fn main() -> ExitCode {
    mcp_harness_fakes::cli::main(std::env::args_os().skip(1), "mcp-fake-stdio")
}
