#!/usr/bin/env bash
# Measures `schedlens view` in headless Chromium on one or several traces (default: the
# benchmark inputs in /work/bench): the first complete view after the model is built,
# zoom and pan steps, drawing time per frame, the page's memory. Needs chromium and node.
# crates/view/tests/browser/bench.mjs starts the browser, then the server, and describes
# what it reports.
#   scripts/bench-view.sh [TRACE...]        (BENCH_ARGS="--think 0" to pass options)
#   SCHEDLENS_BENCH_BIN=path: measure that binary instead of building this tree's release
#   one (to compare two builds alternately in the same period).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${SCHEDLENS_BENCH_BIN:-}
if [[ -z $bin ]]; then
    cargo build --release -p schedlens --locked
    bin=target/release/schedlens
fi
traces=("$@")
[[ ${#traces[@]} -gt 0 ]] || traces=(/work/bench/hackbench-big.dat /work/bench/synth-256.dat)
port=${SCHEDLENS_BENCH_PORT:-8990}
for trace in "${traces[@]}"; do
    echo "== $trace"
    # shellcheck disable=SC2086
    node crates/view/tests/browser/bench.mjs "$bin" "$trace" --port "$port" ${BENCH_ARGS:-}
done
