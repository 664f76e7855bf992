//! The fixture corpus: the real traces in `testdata/traces` (recorded on the project's
//! 2-CPU VM), `testdata/traces/manycore` (a real Linux 6.1 scheduler on an emulated
//! 32- and 64-CPU NUMA machine, each with its `lscpu` file) and `testdata/traces/foreign`
//! (recorded elsewhere: other architectures, kernels and trace-cmd versions); provenance
//! in each directory's README.

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

/// The traces recorded on the emulated many-core machines, sorted by name; each has its
/// topology beside it (`NAME.dat.lscpu`, see [`lscpu_of`]).
pub fn manycore_fixtures() -> Vec<PathBuf> {
    dat_files(&traces_dir().join("manycore"))
}

/// The `lscpu -p=CPU,CORE,SOCKET,NODE` file recorded beside a many-core fixture.
pub fn lscpu_of(trace: &Path) -> PathBuf {
    let mut name = trace.as_os_str().to_owned();
    name.push(".lscpu");
    PathBuf::from(name)
}

/// The traces recorded on other machines, sorted by name.
pub fn foreign_fixtures() -> Vec<PathBuf> {
    dat_files(&traces_dir().join("foreign"))
}

/// Every fixture: the local ones, the many-core ones, then the foreign ones.
pub fn fixtures() -> Vec<PathBuf> {
    let mut all = local_fixtures();
    all.extend(manycore_fixtures());
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
