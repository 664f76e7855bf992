//! Golden-file checks for the tests of every crate: compare an output with the file
//! committed under a `golden` directory, or — with `SCHEDLENS_BLESS=1` — rewrite that
//! file, to be looked at and committed. A mismatch leaves the new output next to the
//! test's temporary files and says how to bless it.

use std::fs;
use std::path::Path;

/// Checks `actual` against `golden_dir/name`; `temp_dir` receives the actual output on
/// a mismatch (use `env!("CARGO_TARGET_TMPDIR")`), `package` names the crate to bless.
pub fn check(golden_dir: &Path, temp_dir: &Path, package: &str, name: &str, actual: &[u8]) {
    let path = golden_dir.join(name);
    if std::env::var_os("SCHEDLENS_BLESS").is_some_and(|bless| bless == "1") {
        fs::create_dir_all(golden_dir).expect("the golden directory can be created");
        fs::write(&path, actual).unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
        return;
    }
    let how =
        format!("if the change is intended, run `SCHEDLENS_BLESS=1 cargo test -p {package}` and look at the new file");
    let expected = fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}; {how}", path.display()));
    if expected != actual {
        let actual_path = temp_dir.join(name);
        fs::write(&actual_path, actual).expect("the temporary directory is writable");
        panic!(
            "{name}: the output ({} bytes, written to {}) differs from {} ({} bytes); {how}",
            actual.len(),
            actual_path.display(),
            path.display(),
            expected.len()
        );
    }
}
