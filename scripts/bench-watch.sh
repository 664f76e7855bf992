#!/usr/bin/env bash
# What `schedlens watch` costs under a scheduler-heavy load (as root, with tracefs):
#   1. resident memory of the watcher sampled every 10 s while `hackbench` runs in a loop
#      (issue 34: memory at the end within 10% of minute 1), beside the ring's bytes (which
#      follow the event rate), and its CPU time;
#   2. hackbench's slowdown: the median of repeated runs untraced, watched, and under
#      `trace-cmd record` (through ../shared/tools/trace-cmd-record, which shadows the
#      function-tracer files this VM refuses), alternating in rounds since a shared
#      machine drifts; and what each wrote.
# Usage: scripts/bench-watch.sh [MINUTES of the memory run, default 10; 0 skips it] [RUNS per round, default 5]
# (needs hackbench and python3; trace-cmd for the third column)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
minutes=${1:-10}
n=${2:-5}
rounds=3
cargo build --release -q -p schedlens
bin=$PWD/target/release/schedlens
tcr=$PWD/../shared/tools/trace-cmd-record
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
workload=(hackbench -g 4 -l 500)

median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# hackbench's own "Time: S" line.
run_once() { "${workload[@]}" 2>/dev/null | awk '/^Time:/ {print $2}'; }

# 1. memory over time
if ((minutes > 0)); then
    echo "== memory: watch for $minutes min under ${workload[*]} in a loop"
    "$bin" watch -o "$work/inc-mem" --duration $((minutes * 60)) --format json >"$work/mem.jsonl" 2>"$work/mem.err" &
    watcher=$!
    sleep 2
    ( while kill -0 $watcher 2>/dev/null; do "${workload[@]}" >/dev/null 2>&1 || true; done ) &
    loop=$!
    start=$(date +%s)
    while kill -0 $watcher 2>/dev/null; do
        rss=$(awk '/^VmRSS/ {print $2}' /proc/$watcher/status 2>/dev/null || true)
        # The summary SIGUSR1 asks for says the ring's bytes: the rest is the watcher's own.
        kill -USR1 $watcher 2>/dev/null || true
        sleep 0.7
        ring=$(grep '"type":"summary"' "$work/mem.jsonl" | tail -n 1 |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["ring_bytes"] // 1024)' 2>/dev/null || true)
        [ -n "$rss" ] && printf 'minute %5.2f  rss %7d kB  ring %7s kB\n' \
            "$(python3 -c "print(($(date +%s) - $start) / 60)")" "$rss" "${ring:-?}"
        sleep 9.3
    done
    wait $watcher || true
    kill $loop 2>/dev/null || true
    wait $loop 2>/dev/null || true
    tail -n 1 "$work/mem.jsonl"
    cat "$work/mem.err"
fi

# 2. slowdown: each run's own "Time:" line, so the tracers' start and end are not counted.
echo "== slowdown: median hackbench time over $rounds rounds of $n runs"
plain=() watched=() traced=() watch_cpu=() watch_bytes=() trace_bytes=()
for round in $(seq $rounds); do
    for _ in $(seq "$n"); do
        plain+=("$(run_once)")
        rm -rf "$work/inc"
        "$bin" watch -o "$work/inc" --format json -- "${workload[@]}" >"$work/w.out" 2>/dev/null
        watched+=("$(awk '/^Time:/ {print $2}' "$work/w.out")")
        watch_cpu+=("$(grep '"type":"summary"' "$work/w.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_time_s"])')")
        watch_bytes+=("$(du -sb "$work/inc" | cut -f1)")
        if [ -x "$tcr" ] && command -v trace-cmd >/dev/null; then
            "$tcr" -e sched -q -o "$work/t.dat" "${workload[@]}" >"$work/t.out" 2>/dev/null
            traced+=("$(awk '/^Time:/ {print $2}' "$work/t.out")")
            trace_bytes+=("$(stat -c %s "$work/t.dat")")
        fi
    done
done
printf '%-28s %10s\n' "hackbench median (s)" ""
printf '%-28s %10.3f\n' "untraced" "$(median "${plain[@]}")"
printf '%-28s %10.3f  (watcher CPU time median %s s; incident files median %s bytes)\n' "schedlens watch" \
    "$(median "${watched[@]}")" "$(median "${watch_cpu[@]}")" "$(median "${watch_bytes[@]}")"
if [ ${#traced[@]} -gt 0 ]; then
    printf '%-28s %10.3f  (trace.dat median %s bytes)\n' "trace-cmd record -e sched" "$(median "${traced[@]}")" \
        "$(median "${trace_bytes[@]}")"
fi
