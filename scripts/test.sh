#!/usr/bin/env bash
# The project's test suite: every crate's tests (unit, golden files, scenario tests, and
# the comparisons with `trace-cmd report` on the real traces in testdata/), then the trace
# reader's fuzzer for a bounded time. Needs Rust (rustup) and trace-cmd; `.ci/run`
# installs what a fresh Debian machine lacks and then runs this script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v trace-cmd >/dev/null; then
    echo "test.sh: trace-cmd is needed as the reference decoder (apt-get install trace-cmd)" >&2
    exit 2
fi

cargo test --workspace --locked
scripts/fuzz.sh "${SCHEDLENS_FUZZ_SECONDS:-60}"
