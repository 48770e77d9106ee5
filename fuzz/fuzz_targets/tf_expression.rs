//! Any text as one Terraform expression: it evaluates or fails with a diagnostic, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let _ = tfconfig::evaluate_expression(src);
    }
});
