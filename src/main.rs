use std::process::ExitCode;

fn main() -> ExitCode {
    atoll::telemetry::init();
    ExitCode::SUCCESS
}
