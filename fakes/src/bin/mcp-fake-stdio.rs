//! `mcp-fake-stdio --play <play.json> --transcript <path.jsonl>`: the fake MCP server a
//! client under test launches as its child, playing the trial the runner prepared. Exits 2
//! on bad usage or an unusable play file; otherwise its exit status is the script's (see
//! `mcp_harness_fakes::stdio`). The program is [`mcp_harness_fakes::cli::main`], which the
//! installed `mcp-harness` binary runs too.

use std::process::ExitCode;

fn main() -> ExitCode {
    mcp_harness_fakes::cli::main(std::env::args_os().skip(1), "mcp-fake-stdio")
}
