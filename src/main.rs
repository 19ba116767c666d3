//! `kiln`: list the devices kiln finds, and check every pattern on every
//! backend against the reference (`kiln conform`).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
