#!/usr/bin/env bash
# The project's test suite: every crate's tests (unit, golden files, scenario tests, and
# the comparisons with `trace-cmd report` on the real traces in testdata/, the robustness
# tests on damaged and lost-event traces), the viewer's JS unit tests and browser tests
# (node's test runner; headless Chromium, skipped with a message when it is missing), the
# PGO release build when SCHEDLENS_TEST_PGO=1 (scripts/build-release.sh: it must write the
# plain build's bytes), then the fuzzers for a bounded time (the model's for
# SCHEDLENS_FUZZ_SECONDS, default 60, the readers' a quarter of it each beside it).
# Installs trace-cmd (as root, with apt) and Rust (rustup) when missing; `.ci/run` installs
# the rest a fresh Debian machine lacks and then runs this script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v trace-cmd >/dev/null && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq trace-cmd >/dev/null
fi
if ! command -v trace-cmd >/dev/null; then
    echo "test.sh: trace-cmd is needed as the reference decoder (apt-get install trace-cmd)" >&2
    exit 2
fi
if ! command -v cargo >/dev/null; then
    [[ -f "$HOME/.cargo/env" ]] || curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    source "$HOME/.cargo/env"
fi

# `export --format otf2` needs the OTF2 C library (Debian: libotf2-trace-dev); test it
# where it is installed.
features=()
if [[ -e /usr/include/otf2/otf2.h ]]; then
    features=(--features schedlens/otf2,export/otf2)
fi
cargo test --workspace --locked "${features[@]}"
# The binary the tests ran (a `cargo build -p schedlens` would build most of the workspace
# again: without the tests, `model` lacks its `scenario` feature).
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
schedlens=$target_dir/debug/schedlens
if command -v node >/dev/null; then
    # Files named one by one: node 18 (Debian's) and node 22 read a directory argument differently.
    node --test crates/tiles/web/test/*.test.mjs
    SCHEDLENS_BIN=$schedlens node --test crates/view/tests/browser/*.test.mjs
    SCHEDLENS_BIN=$schedlens node --test crates/report/tests/browser/*.test.mjs
else
    echo "test.sh: node is missing (apt-get install nodejs): the viewer's JS and browser tests were skipped" >&2
fi

# outputs BIN TRACE DIR: BIN's figures, JSON, text and Perfetto export of TRACE, in DIR.
outputs() {
    local bin=$1 trace=$2 out=$3
    mkdir -p "$out"
    # Exit 3 (a damaged input, a partial result) is expected of the lost-events trace.
    "$bin" graph "$trace" -o "$out/graph.png" 2>/dev/null || (($? == 3))
    "$bin" running-waiting "$trace" --per-cpu -o "$out/rw.png" >"$out/rw.txt" 2>/dev/null || (($? == 3))
    "$bin" check --format json "$trace" >"$out/check.json" 2>/dev/null || (($? == 3))
    "$bin" stats "$trace" >"$out/stats.txt" 2>/dev/null || (($? == 3))
    "$bin" export --format perfetto -o "$out/trace.pftrace" "$trace" >/dev/null 2>&1 || (($? == 3))
}

# same_outputs A B: schedlens binaries A and B write the same bytes for traces of several
# sources.
same_outputs() {
    local dir
    dir=$(mktemp -d)
    for trace in testdata/traces/barrier-v7zstd.dat testdata/traces/hackbench-v7zstd.dat \
        testdata/traces/lost-events-v7zstd.dat testdata/traces/foreign/lisa-rtapp-juno-arm64.dat; do
        outputs "$1" "$trace" "$dir/a"
        outputs "$2" "$trace" "$dir/b"
        diff -r "$dir/a" "$dir/b" >&2 || { echo "test.sh: $1 and $2 differ on $trace" >&2; return 1; }
    done
    rm -rf "$dir"
}

# The PGO release build trains on the bundled traces and must write what the plain build
# writes; without llvm-profdata (exit 2, saying which to install) it is not tested.
# It costs two release builds (about 9 minutes on 2 cores), so it runs when asked for:
# SCHEDLENS_TEST_PGO=1 scripts/test.sh.
status=3
if [[ ${SCHEDLENS_TEST_PGO:-0} == 1 ]]; then
    status=0
    pgo=$(scripts/build-release.sh "${features[@]}") || status=$?
fi
case $status in
    0)
        same_outputs "$schedlens" "$pgo"
        echo "test.sh: the PGO build writes the plain build's bytes"
        ;;
    2) echo "test.sh: the PGO build was not tested" >&2 ;;
    3) echo "test.sh: the PGO build was not tested (SCHEDLENS_TEST_PGO=1 tests it)" >&2 ;;
    *) exit 1 ;;
esac
scripts/fuzz.sh "${SCHEDLENS_FUZZ_SECONDS:-60}"
