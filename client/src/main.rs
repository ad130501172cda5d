//! `memctl`: the thin client of the memd daemon. It links only memd's
//! protocol types (no async runtime, no engine), so it starts in about a
//! millisecond. The daemon commands arrive with the daemon itself.

use std::process::ExitCode;

const USAGE: &str = "\
memctl: talk to the memd daemon

Usage:
  memctl --version
  memctl --help

The daemon commands (status, query, explain, get, search, log, feedback,
track, evaluate, export, hook, install) come with `memd serve`. Until then,
`memd query --root DIR` answers queries in process.
";

fn main() -> ExitCode {
    let arg = std::env::args().nth(1);
    match arg.as_deref() {
        Some("--version" | "-V") => {
            println!(
                "memctl {} (protocol types from memd)",
                env!("CARGO_PKG_VERSION")
            );
            let _ = memd::protocol::Query::default();
            ExitCode::SUCCESS
        }
        None | Some("--help" | "-h") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("memctl: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
