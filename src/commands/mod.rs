//! Comment text to typed commands. Pure: parses `atlantis plan -d dir` and friends into values,
//! never shells out, never panics on any input.
