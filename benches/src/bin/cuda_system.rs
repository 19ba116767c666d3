//! `cuda_system`: the CUDA backend's system benchmarks (launch overhead,
//! NVRTC and its cache, page-locked copies, the copy ceiling, a copy/compute
//! pipeline), each against its goal and a baseline measured in the same run.
//!
//! ```text
//! cuda_system [--json PATH]
//! ```

use kiln_benches::cuda_system;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // The cached-load measurement runs this binary again as a fresh process.
    if let Some(i) = args.iter().position(|a| a == "--cached-load-child") {
        let (Some(dir), Some(nonce)) = (args.get(i + 1), args.get(i + 2)) else {
            eprintln!("--cached-load-child needs a directory and a nonce");
            return ExitCode::FAILURE;
        };
        return match cuda_system::cached_load_child(std::path::Path::new(dir), nonce) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let report = match cuda_system::run(&args.join(" ")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cuda_system: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", cuda_system::table(&report));
    if let Some(path) = cuda_system::json_path(&args) {
        let text = match serde_json::to_string_pretty(&report) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cuda_system: serialising the report: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Err(e) = std::fs::write(&path, text + "\n") {
            eprintln!("cuda_system: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
