#!/usr/bin/env bash
# Makes the README's screenshot of `schedlens view`: serves a real trace and photographs
# the page in headless Chromium once it is drawn. Needs chromium and node.
#   scripts/view-screenshot.sh [TRACE [OUT.png [FRAGMENT]]]
# FRAGMENT is the view's state as in its address bar (e.g. 'w=0,20000000&c=command').
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
trace=${1:-testdata/traces/hackbench-v7zstd.dat}
out=${2:-docs/images/view-hackbench.png}
# The README's view: 67 ms of the hackbench run with check's overload incident selected.
fragment=${3-w=1003000000,1070000000&inc=0.2}
cargo build --release -p schedlens --locked
port=${SCHEDLENS_SHOT_PORT:-8991}
log=$(mktemp)
trap 'kill $(jobs -p) 2>/dev/null; rm -f "$log"' EXIT
target/release/schedlens view --no-open --port "$port" "$trace" >"$log" 2>&1 &
server=$!
until grep -q serving "$log" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.05
done
node crates/view/tests/browser/screenshot.mjs "http://127.0.0.1:$port/${fragment:+#$fragment}" "$out" \
    --width "${SHOT_WIDTH:-1400}" --height "${SHOT_HEIGHT:-540}"
kill -INT "$server"
wait "$server" || true
echo "wrote $out"
