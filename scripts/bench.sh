#!/usr/bin/env bash
# Times schedlens against `trace-cmd report` on the same trace, in one run, and prints
# the speed-ups. Usage: scripts/bench.sh [TRACE] (default: the bundled barrier trace; the
# figures in README.md come from a 5.75M-event hackbench trace recorded with
# `trace-cmd-record -e sched -v -e sched_stat_runtime -b 20000 hackbench -g 10 -l 20000`).
# trace-cmd runs once; each schedlens command runs three times and its best time counts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
trace=${1:-testdata/traces/barrier-v7zstd.dat}
command -v trace-cmd >/dev/null || { echo "bench.sh: trace-cmd is needed" >&2; exit 2; }
cargo build --release --locked -q -p schedlens
schedlens=target/release/schedlens
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Seconds (wall clock) one run of a command takes, output discarded.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

best_of_three() {
    local best=""
    for _ in 1 2 3; do
        local t
        t=$(seconds "$@")
        if [[ -z $best ]] || (($(echo "$t < $best" | bc -l))); then best=$t; fi
    done
    echo "$best"
}

events=$("$schedlens" info "$trace" 2>/dev/null | awk '/^events:/ {print $2; exit}')
echo "trace: $trace (${events:-?} events, $(stat -c %s "$trace") bytes)"
reference=$(seconds trace-cmd report -R -t "$trace")
printf '%-44s %8.3f s\n' "trace-cmd report -R -t" "$reference"
run() {
    local label=$1
    shift
    local t
    t=$(best_of_three "$@")
    printf '%-44s %8.3f s  %6.1fx faster\n' "$label" "$t" "$(echo "$reference / $t" | bc -l)"
}
run "schedlens info" "$schedlens" info "$trace"
run "schedlens dump --json" "$schedlens" dump --json "$trace"
run "schedlens stats" "$schedlens" stats "$trace"
run "schedlens graph -o x.png (decode+model+PNG)" "$schedlens" graph "$trace" -o "$out/graph.png"
run "schedlens graph -o x.svg" "$schedlens" graph "$trace" -o "$out/graph.svg"
run "schedlens graph -o x.pdf" "$schedlens" graph "$trace" -o "$out/graph.pdf"
run "schedlens running-waiting -o x.png" "$schedlens" running-waiting "$trace" -o "$out/rw.png"
ls -l "$out" | awk 'NR > 1 {printf "  %-12s %10d bytes\n", $9, $5}'
