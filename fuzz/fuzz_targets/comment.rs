//! Any text as a pull-request comment: it is ignored, answered or parsed into a command, never
//! a panic; a parsed command prints back to a comment that parses to itself.
#![no_main]

use atoll::commands::{Grammar, Parsed, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let grammar = Grammar::new("atoll", Some("atoll-bot"));
    if let Parsed::Run(command) = parse(text, &grammar) {
        let again = command.to_comment("atoll");
        assert_eq!(parse(&again, &grammar), Parsed::Run(command), "{again}");
    }
});
