#!/usr/bin/env bash
# Measures `schedlens view` in headless Chromium on one or several traces (default: the
# benchmark inputs in /work/bench): the first complete view after the model is built,
# zoom and pan steps, drawing time per frame, the page's memory. Needs chromium and node.
#   scripts/bench-view.sh [TRACE...]        (BENCH_ARGS="--think 0" to pass options)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -p schedlens --locked
traces=("$@")
[[ ${#traces[@]} -gt 0 ]] || traces=(/work/bench/hackbench-big.dat /work/bench/synth-256.dat)
port=${SCHEDLENS_BENCH_PORT:-8990}
log=$(mktemp)
# On any exit, stop what this script started (the browser script, the server).
trap 'kill $(jobs -p) 2>/dev/null; rm -f "$log"' EXIT
for trace in "${traces[@]}"; do
    echo "== $trace"
    # The browser starts first and waits for the server, so the clock starts at "ready".
    # shellcheck disable=SC2086
    node crates/view/tests/browser/bench.mjs "http://127.0.0.1:$port/" ${BENCH_ARGS:-} &
    bench=$!
    start=$(date +%s%N)
    target/release/schedlens view --no-open --port "$port" "$trace" >"$log" 2>&1 &
    server=$!
    until grep -q serving "$log" 2>/dev/null; do
        kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
        sleep 0.05
    done
    echo "model built, serving after $(( ($(date +%s%N) - start) / 1000000 )) ms; server RSS $(ps -o rss= -p "$server" | awk '{printf "%.0f MB", $1/1024}')"
    wait "$bench"
    echo "server RSS after the walk: $(ps -o rss= -p "$server" | awk '{printf "%.0f MB", $1/1024}')"
    kill -INT "$server"
    wait "$server" || true
done
