//! `mcp-harness case-from TRANSCRIPT --name NAME [--out DIR]`: a recorded session turned into
//! a case file, canonical-formatted, ready for `mcp-harness run --cases DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// The flags of `case-from`.
#[derive(Args)]
pub struct CaseFromArgs {
    /// The recording: a harness transcript (what `record` and the fakes write) or import
    /// lines `{"from": "client"|"server", "message": {…}}`.
    #[arg(value_name = "TRANSCRIPT")]
    transcript: PathBuf,
    /// The case's id, e.g. `incidents/pages-lost`: the file is DIR/NAME.json.
    #[arg(long, value_name = "NAME")]
    name: String,
    /// The case directory to write into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
}

/// Runs `case-from`: 0 when the case was written, 2 on bad input.
pub fn run(args: CaseFromArgs) -> ExitCode {
    let written = mcp_harness::case_from::check_name(&args.name)
        .and_then(|()| mcp_harness::case_from::read_recording(&args.transcript))
        .and_then(|records| {
            mcp_harness::case_from::case_from_records(&records, &args.name)
                .map_err(|e| format!("{}: {e}", args.transcript.display()))
        })
        .and_then(|case| mcp_harness::case_from::write_case(&args.out, &args.name, &case));
    match written {
        Ok(path) => {
            println!("wrote {}", path.display());
            println!(
                "run it: mcp-harness run --only-cases {} --client '<your client>'",
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
