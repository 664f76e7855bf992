#!/usr/bin/env bash
# What `schedlens runs` adds to a run, measured against hyperfine running the same command
# directly (`hyperfine -N`: no shell), in one go:
#   1. `true` (the spawn itself): hyperfine's mean against the median wall time runs reports,
#      and the whole `schedlens runs -n 20 -- true` per run (start-up and report included);
#   2. a real workload (hackbench): hyperfine's median against runs' median;
#   3. with --record (as root): the recorded runs' median (from the traces) and the time per
#      recorded run from start to end, against the untraced median.
# Usage: scripts/bench-runs.sh [RUNS per round, default 10] (needs hyperfine, hackbench, python3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-10}
cargo build --release -q -p schedlens
bin=$PWD/target/release/schedlens
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
workload=(hackbench -g 2 -l 200)

# Machines shared with other work drift: each comparison alternates the two ways of running
# for ROUNDS rounds and compares the medians of the pooled times.
rounds=5
hyper_times() { python3 -c 'import json,sys; print(*json.load(open(sys.argv[1]))["results"][0]["times"])' "$1"; }
runs_times() { python3 -c 'import csv,sys; print(*[r["wall_s"] for r in csv.DictReader(open(sys.argv[1])) if r["ok"] == "1"])' "$1/results.csv"; }
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' $1; }

# compare LABEL RUNS_OPTIONS... -- COMMAND...: hyperfine -N and schedlens runs, alternating.
compare() {
    local label=$1; shift
    local options=() ; while [[ $1 != -- ]]; do options+=("$1"); shift; done; shift
    local direct="" measured="" whole=""
    for round in $(seq "$rounds"); do
        hyperfine -N -w 1 -r "$n" --export-json "$work/h.json" "$*" >/dev/null 2>&1
        direct+=" $(hyper_times "$work/h.json")"
        rm -rf "$work/r"
        local t0=$(date +%s.%N)
        "$bin" runs -n "$n" --sleep 0 --figure-format svg "${options[@]}" -o "$work/r" -- "$@" >/dev/null 2>&1
        whole+=" $(python3 -c "print(($(date +%s.%N) - $t0) / $n)")"
        measured+=" $(runs_times "$work/r")"
    done
    printf '%-44s %12.6f %12.6f %12.6f\n' "$label" "$(median "$direct")" "$(median "$measured")" "$(median "$whole")"
}

printf '%-44s %12s %12s %12s\n' "median seconds per run" "hyperfine -N" "runs says" "runs, all"
compare "true" -- true
compare "${workload[*]}" -- "${workload[@]}"
if [[ $(id -u) == 0 && -d /sys/kernel/tracing ]]; then
    compare "${workload[*]}, runs --record" --record -- "${workload[@]}"
    du -sh "$work/r/traces" | awk '{print "traces of the last round: " $1}'
fi
