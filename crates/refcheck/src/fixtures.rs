//! The fixture corpus: the real traces in `testdata/traces` (recorded on the project's
//! 2-CPU VM) and `testdata/traces/foreign` (recorded elsewhere: other architectures,
//! kernels and trace-cmd versions; provenance in that directory's README).

use std::path::{Path, PathBuf};

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces")
}

fn dat_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// The traces recorded here, sorted by name.
pub fn local_fixtures() -> Vec<PathBuf> {
    dat_files(&traces_dir())
}

/// The traces recorded on other machines, sorted by name.
pub fn foreign_fixtures() -> Vec<PathBuf> {
    dat_files(&traces_dir().join("foreign"))
}

/// Every fixture: the local ones, then the foreign ones.
pub fn fixtures() -> Vec<PathBuf> {
    let mut all = local_fixtures();
    all.extend(foreign_fixtures());
    all
}

/// The path of the bundled trace `name` (under `testdata/traces`: `x.dat`,
/// `foreign/x.dat`, `manycore/x.dat`), as text so it goes into a command line as it is;
/// panics when the file is missing. The one fixture helper of every crate's tests.
pub fn fixture(name: &str) -> String {
    let path = traces_dir().join(name);
    assert!(path.exists(), "missing fixture {}", path.display());
    path.display().to_string()
}
