#!/usr/bin/env bash
# Times schedlens against `trace-cmd report` on the same trace, in one run, and prints
# the speed-ups and peak memory.
#
#   scripts/bench.sh [TRACE]          default: the bundled barrier trace
#   scripts/bench.sh --record FILE    first records the reference workload into FILE:
#       trace-cmd record -e sched -v -e sched_stat_runtime -b 20000 hackbench -g 10 -l 20000
#       (~6-7M events; through ../shared/tools/trace-cmd-record when it exists, for
#       machines whose function-tracer files refuse writes)
#
# trace-cmd runs once; each schedlens command runs three times and its best time counts.
# LISA's `trace-dump parquet` (when installed, e.g. in ~/.cargo/bin) runs three times too,
# against `schedlens export --format parquet`; `export --format perfetto` is compared with
# `graph`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v trace-cmd >/dev/null || { echo "bench.sh: trace-cmd is needed" >&2; exit 2; }
if [[ ${1:-} == --record ]]; then
    trace=${2:?"usage: $0 --record FILE"}
    recorder=(trace-cmd record)
    [[ -x ../shared/tools/trace-cmd-record ]] && recorder=(../shared/tools/trace-cmd-record)
    "${recorder[@]}" -q -o "$trace" -e sched -v -e sched_stat_runtime -b 20000 hackbench -g 10 -l 20000 >/dev/null
else
    trace=${1:-testdata/traces/barrier-v7zstd.dat}
fi
cargo build --release --locked -q -p schedlens
schedlens=target/release/schedlens
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# "SECONDS PEAK_KB" of one run of a command (wall clock, maximum resident set), output discarded.
measure() {
    /usr/bin/time -f "%e %M" -o "$out/.time" "$@" >/dev/null 2>&1
    cat "$out/.time"
}

best_of_three() {
    local best="" best_kb=""
    for _ in 1 2 3; do
        local t kb
        read -r t kb < <(measure "$@")
        if [[ -z $best ]] || (($(echo "$t < $best" | bc -l))); then best=$t best_kb=$kb; fi
    done
    echo "$best $best_kb"
}

events=$("$schedlens" info "$trace" 2>/dev/null | awk '/^events:/ {print $2; exit}')
echo "trace: $trace (${events:-?} events, $(stat -c %s "$trace") bytes)"
read -r reference reference_kb < <(measure trace-cmd report -R -t "$trace")
printf '%-44s %8.3f s  %8d KB peak\n' "trace-cmd report -R -t" "$reference" "$reference_kb"
run() {
    local label=$1 t kb
    shift
    read -r t kb < <(best_of_three "$@")
    printf '%-44s %8.3f s  %8d KB peak  %6.1fx faster\n' "$label" "$t" "$kb" "$(echo "$reference / $t" | bc -l)"
    last=$t
}
run "schedlens info" "$schedlens" info "$trace"
run "schedlens dump --json" "$schedlens" dump --json "$trace"
run "schedlens stats" "$schedlens" stats "$trace"
run "schedlens graph -o x.png (decode+model+PNG)" "$schedlens" graph "$trace" -o "$out/graph.png"
graph=$last
run "schedlens graph -o x.svg" "$schedlens" graph "$trace" -o "$out/graph.svg"
run "schedlens graph -o x.pdf" "$schedlens" graph "$trace" -o "$out/graph.pdf"
run "schedlens running-waiting -o x.png" "$schedlens" running-waiting "$trace" -o "$out/rw.png"
run "schedlens export --format perfetto" "$schedlens" export "$trace" --format perfetto -o "$out/x.pftrace"
printf '  export --format perfetto takes %.2fx the time of graph\n' "$(echo "$last / $graph" | bc -l)"
run "schedlens export --format parquet" "$schedlens" export "$trace" --format parquet -o "$out/parquet"
parquet=$last
lisa=$(command -v trace-dump || echo "$HOME/.cargo/bin/trace-dump")
if [[ -x $lisa ]]; then
    mkdir -p "$out/lisa"
    absolute=$(realpath "$trace")
    run "LISA trace-dump parquet" sh -c "cd '$out/lisa' && '$lisa' parquet --trace '$absolute' --trace-format tracedat"
    printf '  export --format parquet is %.2fx faster than LISA trace-dump parquet\n' "$(echo "$last / $parquet" | bc -l)"
else
    echo "  (LISA's trace-dump is not installed: no comparison with it)"
fi
rm -rf "$out/parquet" "$out/lisa"
ls -l "$out" | awk 'NR > 1 {printf "  %-12s %10d bytes\n", $9, $5}'
