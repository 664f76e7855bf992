#!/usr/bin/env bash
# The main job on a bundled real trace: builds schedlens (installing Rust with rustup when
# cargo is missing), then, for a two-thread barrier benchmark recorded with trace-cmd on a
# 2-CPU machine (testdata/traces/barrier-v7zstd.dat), prints what the trace holds and its
# per-command statistics, draws the per-core timeline and the running/waiting plot into
# out/, and reports the scheduler incidents `check` finds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v cargo >/dev/null; then
    [[ -f "$HOME/.cargo/env" ]] || curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    source "$HOME/.cargo/env"
fi
cargo build --release --locked -p schedlens

schedlens=target/release/schedlens
trace=testdata/traces/barrier-v7zstd.dat
mkdir -p out
"$schedlens" info "$trace"
echo
"$schedlens" stats "$trace" --after-sleep
echo
"$schedlens" graph "$trace" --after-sleep -o out/barrier-graph.png
"$schedlens" graph "$trace" --after-sleep --color-by-command -o out/barrier-graph-by-command.pdf
"$schedlens" running-waiting "$trace" --after-sleep --per-cpu -o out/barrier-running-waiting.png
echo
"$schedlens" check "$trace" --after-sleep --min-lost 1
echo
echo "figures: out/barrier-graph.png, out/barrier-graph-by-command.pdf, out/barrier-running-waiting.png"
