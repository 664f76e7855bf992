#!/usr/bin/env bash
# Times schedlens against `trace-cmd report` and LISA's `trace-dump` (when installed) on
# the same traces, in one run, and prints each row with its peak memory and the ratios the
# speed goals are stated in: decoding and figures against trace-cmd, `export --format
# parquet` against `trace-dump parquet`, `export --format perfetto` against `graph`.
#
#   scripts/bench.sh [--real FILE] [--synth FILE]
#     --real FILE   a real trace (default: the bundled barrier trace); compared with
#                   trace-cmd report and trace-dump parquet
#     --synth FILE  a large synthetic trace: info, graph, check, export perfetto, latency
#                   and critical-path on it, with graph's time over info's, check's over
#                   graph's, the export's over both's and its bytes per event, latency's and
#                   critical-path's peak memory over graph's (the usual one is made by
#                   `schedlens synth --cpus 256 --seconds 10 --topology sockets=2,smt=2`)
#     --perf FILE   a perf.data of about 5M sched events (kept out of the repository, e.g.
#                   /work/bench/perf-big.data from `perf sched record -- hackbench -g 10
#                   -l 20000`): stats against `perf sched latency` (goal >= 20x) and dump
#                   against `perf script` (goal >= 5x), same file, same run
#     --plain       measure a plain `cargo build --release` instead of the PGO build
#   scripts/bench.sh --record FILE    first records the reference real workload into FILE:
#       trace-cmd record -e sched -v -e sched_stat_runtime -b 20000 hackbench -g 10 -l 20000
#       (~5-7M events; through ../shared/tools/trace-cmd-record when it exists, for machines
#       whose function-tracer files refuse writes)
#
# The peers run once; each schedlens command runs three times and its best time counts
# (with that run's peak memory). schedlens is the PGO build of scripts/build-release.sh
# when llvm-profdata for rustc's LLVM is installed (its first build takes about 4.5 minutes
# on 2 cores), otherwise (or with --plain) the plain release build; the first line says
# which.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v trace-cmd >/dev/null || { echo "bench.sh: trace-cmd is needed" >&2; exit 2; }
real=testdata/traces/barrier-v7zstd.dat
synth=""
perf_data=""
plain=false
while (($#)); do
    case $1 in
        --real) real=${2:?"--real FILE"}; shift 2 ;;
        --synth) synth=${2:?"--synth FILE"}; shift 2 ;;
        --perf) perf_data=${2:?"--perf FILE"}; shift 2 ;;
        --plain) plain=true; shift ;;
        --record)
            real=${2:?"usage: $0 --record FILE"}
            shift 2
            recorder=(trace-cmd record)
            [[ -x ../shared/tools/trace-cmd-record ]] && recorder=(../shared/tools/trace-cmd-record)
            "${recorder[@]}" -q -o "$real" -e sched -v -e sched_stat_runtime -b 20000 hackbench -g 10 -l 20000 >/dev/null
            ;;
        *) echo "usage: $0 [--real FILE] [--synth FILE] [--perf FILE] [--plain] [--record FILE]" >&2; exit 2 ;;
    esac
done
build=""
if ! $plain; then
    # It prints the binary's path; exit 2: no llvm-profdata for rustc's LLVM (it says which
    # to install), measured with the plain build then.
    status=0
    build=$(scripts/build-release.sh) || status=$?
    ((status == 0 || status == 2)) || exit 1
fi
if [[ -n $build ]]; then
    schedlens=$PWD/$build
    echo "schedlens: PGO release build (scripts/build-release.sh)"
else
    cargo build --release --locked -q -p schedlens
    schedlens=$PWD/target/release/schedlens
    echo "schedlens: plain release build (cargo build --release)"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# "SECONDS PEAK_KB" of one run of a command (wall clock to the microsecond: /usr/bin/time
# gives centiseconds, too coarse for the small traces; maximum resident set), output discarded.
measure() {
    local start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$out/.time" "$@" >/dev/null 2>&1 || { echo "bench.sh: failed: $*" >&2; exit 1; }
    echo "$(echo "$EPOCHREALTIME - $start" | bc -l) $(cat "$out/.time")"
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

declare -A seconds peak_kb
# row KEY LABEL RUNS COMMAND...: measures COMMAND (RUNS: once or best), prints the row, keeps
# its time and peak memory under KEY; the last column compares with the time under
# "reference" when set.
row() {
    local key=$1 label=$2 runs=$3 t kb
    shift 3
    if [[ $runs == once ]]; then read -r t kb < <(measure "$@"); else read -r t kb < <(best_of_three "$@"); fi
    seconds[$key]=$t peak_kb[$key]=$kb
    local versus=""
    if [[ -n ${seconds[reference]:-} && $key != reference ]]; then
        versus=$(printf '%6.1fx trace-cmd' "$(echo "${seconds[reference]} / $t" | bc -l)")
    fi
    printf '  %-40s %8.3f s %9d KB peak  %s\n' "$label" "$t" "$kb" "$versus"
}

ratio() { printf '  %-40s %8.2f\n' "$1" "$(echo "${seconds[$2]} / ${seconds[$3]}" | bc -l)"; }
memory_ratio() { printf '  %-40s %8.2f\n' "$1" "$(echo "${peak_kb[$2]} / ${peak_kb[$3]}" | bc -l)"; }

# turns KEY:LABEL... : the commands in the arrays cmd_KEY run in turns (one run of each, three
# rounds), so that a change of the machine's load falls on all of them alike; each keeps its
# best run. Prints their rows as `row` does (without the trace-cmd column).
turns() {
    local -A best best_kb
    local round spec key t kb
    for round in 1 2 3; do
        for spec in "$@"; do
            key=${spec%%:*}
            local -n command="cmd_$key"
            read -r t kb < <(measure "${command[@]}")
            if [[ -z ${best[$key]:-} ]] || (($(echo "$t < ${best[$key]}" | bc -l))); then best[$key]=$t best_kb[$key]=$kb; fi
            unset -n command
        done
    done
    for spec in "$@"; do
        key=${spec%%:*}
        seconds[$key]=${best[$key]} peak_kb[$key]=${best_kb[$key]}
        printf '  %-40s %8.3f s %9d KB peak\n' "${spec#*:}" "${best[$key]}" "${best_kb[$key]}"
    done
}

# The Perfetto file's size per event of the trace.
perfetto_size() {
    local events bytes
    events=$("$schedlens" info "$1" 2>/dev/null | awk '/^events:/ {print $2; exit}')
    "$schedlens" export "$1" --format perfetto -o "$out/size.pftrace" >/dev/null 2>&1
    bytes=$(stat -c %s "$out/size.pftrace")
    rm -f "$out/size.pftrace"
    printf '  %-40s %8.1f (%d bytes)\n' "export perfetto: bytes per event" "$(echo "$bytes / $events" | bc -l)" "$bytes"
}

describe() { echo "$1: $("$schedlens" info "$1" 2>/dev/null | awk '/^events:/ {print $2; exit}') events, $(stat -c %s "$1") bytes"; }

describe "$real"
row reference "trace-cmd report -R -t" once trace-cmd report -R -t "$real"
if command -v trace-dump >/dev/null; then
    mkdir -p "$out/lisa"
    row lisa "LISA trace-dump parquet" once \
        sh -c 'cd "$1" && trace-dump parquet --trace "$2" --trace-format tracedat' _ "$out/lisa" "$(realpath "$real")"
else
    echo "  (LISA trace-dump not installed: ../shared/notes/peers.md says how to build it)"
fi
row info "schedlens info" best "$schedlens" info "$real"
row stats "schedlens stats" best "$schedlens" stats "$real"
# export --format perfetto does what graph (the model) and check do, and writes the file:
# the three are timed in turns.
cmd_graph=("$schedlens" graph "$real" -o "$out/graph.png")
cmd_check=("$schedlens" check "$real")
cmd_perfetto=("$schedlens" export "$real" --format perfetto -o "$out/x.pftrace")
turns "graph:schedlens graph -o x.png" "check:schedlens check" "perfetto:schedlens export --format perfetto"
seconds[graph_check]=$(echo "${seconds[graph]} + ${seconds[check]}" | bc -l)
row latency "schedlens latency" best "$schedlens" latency "$real"
row rw "schedlens running-waiting -o x.png" best "$schedlens" running-waiting "$real" -o "$out/rw.png"
row critical "schedlens critical-path" best "$schedlens" critical-path "$real"
row parquet "schedlens export --format parquet" best \
    sh -c 'rm -rf "$1" && exec "$2" export "$3" --format parquet -o "$1"' _ "$out/parquet" "$schedlens" "$real"
ratio "export perfetto / (graph + check) (goal <= 1)" perfetto graph_check
perfetto_size "$real"
ratio "critical-path / graph (goal <= 2)" critical graph
ratio "latency / graph (goal <= 1)" latency graph
[[ -n ${seconds[lisa]:-} ]] && ratio "LISA trace-dump / export parquet (goal > 1)" lisa parquet
unset 'seconds[reference]'

if [[ -n $synth ]]; then
    echo
    describe "$synth"
    row info "schedlens info" best "$schedlens" info "$synth"
    cmd_graph=("$schedlens" graph "$synth" -o "$out/graph.png")
    cmd_check=("$schedlens" check "$synth")
    cmd_perfetto=("$schedlens" export "$synth" --format perfetto -o "$out/x.pftrace")
    turns "graph:schedlens graph -o x.png" "check:schedlens check" "perfetto:schedlens export --format perfetto"
    seconds[graph_check]=$(echo "${seconds[graph]} + ${seconds[check]}" | bc -l)
    ratio "graph / info (goal <= 2.5)" graph info
    ratio "check / graph (goal <= 2)" check graph
    ratio "export perfetto / (graph + check) (goal <= 1)" perfetto graph_check
    perfetto_size "$synth"
    row latency "schedlens latency" best "$schedlens" latency "$synth"
    row critical "schedlens critical-path" best "$schedlens" critical-path "$synth"
    memory_ratio "latency memory / graph's (goal <= 1.5)" latency graph
    memory_ratio "critical-path memory / graph's (goal <= 1.5)" critical graph
fi

if [[ -n $perf_data ]]; then
    command -v perf >/dev/null || { echo "bench.sh: --perf needs perf (Debian: linux-perf)" >&2; exit 2; }
    echo
    describe "$perf_data"
    row latency "perf sched latency" once perf sched latency -i "$perf_data"
    row script "perf script" once perf script -i "$perf_data"
    row info "schedlens info" best "$schedlens" info "$perf_data"
    row stats "schedlens stats" best "$schedlens" stats "$perf_data"
    row dump "schedlens dump" best "$schedlens" dump "$perf_data"
    row graph "schedlens graph -o x.png" best "$schedlens" graph "$perf_data" -o "$out/graph.png"
    row check "schedlens check" best "$schedlens" check "$perf_data"
    ratio "perf sched latency / stats (goal >= 20)" latency stats
    ratio "perf script / dump (goal >= 5)" script dump
fi
