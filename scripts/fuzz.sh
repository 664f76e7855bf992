#!/usr/bin/env bash
# Fuzzes the trace.dat reader (fuzz target read_trace) for SECONDS seconds, starting from
# the committed seeds in fuzz/seeds/read_trace. Needs rustup; installs a nightly toolchain
# and cargo-fuzz when missing. Exits non-zero when the fuzzer finds a crash, a hang (one
# input over 10 s) or excess memory; the input is saved under fuzz/artifacts/read_trace/.
set -euo pipefail

if [[ $# -ne 1 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 SECONDS" >&2
    exit 2
fi
duration=$1
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v rustup >/dev/null; then
    echo "fuzz.sh needs rustup (https://rustup.rs)" >&2
    exit 2
fi
# The fuzzer needs nightly and cargo-fuzz. Where neither can be installed (no access to
# static.rust-lang.org), say so and stop: the seeds still run as a plain test
# (crates/tracedat/tests/fuzz_seeds.rs).
skip() {
    echo "fuzz.sh: $1; fuzzing skipped (the seeds ran in crates/tracedat/tests/fuzz_seeds.rs)" >&2
    exit 0
}
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal || skip "cannot install the nightly toolchain"
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly install cargo-fuzz --locked || skip "cannot install cargo-fuzz"
fi
if ! command -v c++ >/dev/null && ! command -v clang++ >/dev/null; then
    echo "fuzz.sh needs a C++ compiler to build libFuzzer (apt-get install build-essential)" >&2
    exit 2
fi

corpus=fuzz/corpus/read_trace
mkdir -p "$corpus"
# New inputs go to the (ignored) corpus directory; the seeds are only read.
exec cargo +nightly fuzz run read_trace "$corpus" fuzz/seeds/read_trace -- \
    -max_total_time="$duration" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -dict=fuzz/read_trace.dict -print_final_stats=1
