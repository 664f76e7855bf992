//! The `schedlens` command line: thin glue around the library crates.
fn main() {}
