#!/usr/bin/env bash
# What `schedlens runs` adds to a run, measured against hyperfine running the same command
# directly (`hyperfine -N`: no shell), in one go:
#   1. `true` (the spawn itself): hyperfine's mean against the median wall time runs reports,
#      and the whole `schedlens runs -n 20 -- true` per run (start-up and report included);
#   2. a real workload (hackbench): hyperfine's median against runs' median;
#   3. with --record (as root): the recorded runs' median (from the traces) and the time per
#      recorded run from start to end, against the untraced median.
# Usage: scripts/bench-runs.sh [RUNS]   (needs hyperfine, hackbench; builds the release binary)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-20}
cargo build --release -q -p schedlens
bin=$PWD/target/release/schedlens
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
workload=(hackbench -g 2 -l 400)

median() { python3 -c 'import json,sys,statistics; print(statistics.median(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$1"; }
mean() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$1"; }
runs_median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settings"][0]["median_s"])' "$1/summary.json"; }

hyperfine -N -w 5 -r 100 --export-json "$work/true.json" true >/dev/null 2>&1
"$bin" runs -n 100 --sleep 0 --figure-format svg -o "$work/true" -- true >/dev/null 2>&1
hyperfine -N -w 1 -r 5 --export-json "$work/runs-true.json" \
    "$bin runs -n $n --sleep 0 --figure-format svg -o $work/rt -- true" --prepare "rm -rf $work/rt" >/dev/null 2>&1
printf '%-52s %12s\n' "measure" "seconds"
printf '%-52s %12.6f\n' "true: hyperfine -N mean" "$(mean "$work/true.json")"
printf '%-52s %12.6f\n' "true: schedlens runs median (100 runs)" "$(runs_median "$work/true")"
printf '%-52s %12.6f\n' "true: whole 'schedlens runs -n $n' / $n" \
    "$(python3 -c "print($(mean "$work/runs-true.json") / $n)")"

hyperfine -N -w 2 -r "$n" --export-json "$work/hb.json" "${workload[*]}" >/dev/null 2>&1
"$bin" runs -n "$n" --sleep 0 --figure-format svg -o "$work/hb" -- "${workload[@]}" >/dev/null 2>&1
printf '%-52s %12.6f\n' "${workload[*]}: hyperfine -N median" "$(median "$work/hb.json")"
printf '%-52s %12.6f\n' "${workload[*]}: schedlens runs median" "$(runs_median "$work/hb")"

if [[ $(id -u) == 0 && -d /sys/kernel/tracing ]]; then
    start=$(date +%s.%N)
    "$bin" runs -n "$n" --sleep 0 --record --figure-format svg -o "$work/rec" -- "${workload[@]}" >/dev/null 2>&1
    end=$(date +%s.%N)
    printf '%-52s %12.6f\n' "${workload[*]}: runs --record median (from traces)" "$(runs_median "$work/rec")"
    printf '%-52s %12.6f\n' "${workload[*]}: runs --record, all work / run" "$(python3 -c "print(($end - $start) / $n)")"
    du -sh "$work/rec/traces" | awk '{print "traces: " $1 " for '"$n"' runs"}'
fi
