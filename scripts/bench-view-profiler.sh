#!/usr/bin/env bash
# Measures the viewer's profiler answers on a trace (default: /work/bench/hackbench-big.dat):
# the traced command's critical path (the first /api/path walks it, later ones read it
# for a window), a followed task's state track (the first state tile scans its runs and
# waits, the next ones read them), its state under the mouse with who held the CPU, a
# runqueue under the mouse. The task followed is the one of the path's middle hop. Each
# request is timed by curl, ROUNDS times (the first of each kind computes, the rest read).
# Needs curl and python3.
#   scripts/bench-view-profiler.sh [TRACE]
#   SCHEDLENS_BENCH_BIN=path: measure that binary instead of building this tree's release one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${SCHEDLENS_BENCH_BIN:-}
if [[ -z $bin ]]; then
    cargo build --release -p schedlens --locked
    bin=target/release/schedlens
fi
trace=${1:-/work/bench/hackbench-big.dat}
port=${SCHEDLENS_BENCH_PORT:-8993}
rounds=${ROUNDS:-3}
log=$(mktemp)
"$bin" view --no-open --port "$port" "$trace" >"$log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null; rm -f "$log"' EXIT
until grep -q ready "$log" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
done
base=http://127.0.0.1:$port
# time NAME PATH: prints the request's time in ms.
time_it() {
    local ms
    ms=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$base$2" | awk '{ if ($1 != 200) { print "HTTP " $1; exit } printf "%.1f", $2 * 1000 }')
    printf '%-34s %s ms\n' "$1" "$ms"
}
echo "== $trace ($(uptime | sed 's/.*load average/load average/'))"
for round in $(seq "$rounds"); do
    time_it "path of the command (round $round)" "/api/path?trace=0"
done
read -r task start end t cpu < <(curl -s "$base/api/path?trace=0" | python3 -c '
import json, sys
path = json.load(sys.stdin)
hop = path["hops"][len(path["hops"]) // 2]
ran = hop["ran"] or {"t": hop["start"], "cpu": 0}
print(hop["task"]["task"], hop["start"], hop["end"], ran["t"] - 1, ran["cpu"])')
echo "followed task $task, its hop $start..$end"
time_it "path in a window" "/api/path?trace=0&start=$start&end=$end"
for round in $(seq "$rounds"); do
    for level in 24 16; do
        index=$((start / (512 << level)))
        time_it "state tile, level $level (round $round)" "/api/tile?trace=0&level=$level&index=$index&columns=512&layers=s&tasks=$task"
    done
    time_it "state under the mouse (round $round)" "/api/state?trace=0&task=$task&t=$t&span=100000"
    time_it "runqueue under the mouse (round $round)" "/api/queue?trace=0&cpu=$cpu&t=$t&span=100000"
done
for round in $(seq "$rounds"); do
    time_it "path of the task (round $round)" "/api/path?trace=0&task=$task"
done
