#!/usr/bin/env bash
# Runs the fuzzers on two cores and prints each one's executions:
#   sched_model  for SECONDS: everything past the reader — scheduler-event scripts
#                written as real traces, through the model, stats, the running/waiting
#                sweep, graph and check (seeds: fuzz/seeds/sched_model, with slices of
#                every real fixture; fuzz/regressions/sched_model). About 50 inputs a
#                second on one core of the development VM.
#   read_trace   for SECONDS/4: the trace.dat reader (seeds: fuzz/seeds/read_trace).
#                About 10,000 inputs a second there.
#   read_perf    for SECONDS/4, after read_trace on the same core: the perf.data reader
#                and the model built from what it reads (seeds: fuzz/seeds/read_perf, from
#                testdata/programs/perf-fuzz-seeds.py).
#   read_perfetto for SECONDS/4, after read_perf on the same core: the Perfetto reader
#                and the model built from what it reads (seed: fuzz/seeds/read_perfetto,
#                from testdata/programs/perfetto-fuzz-seeds.py).
# Needs rustup; installs a nightly toolchain and cargo-fuzz when missing. Exits non-zero
# when a fuzzer finds a crash, a hang (one input over 20 s) or excess memory; the input
# is saved under fuzz/artifacts/TARGET/. Panics listed in crates/trust/src/known.rs are
# tolerated (they are being fixed elsewhere).
#
# Built without a sanitizer (all the code is safe Rust: AddressSanitizer finds nothing
# there and makes the fuzzers 3 to 5 times slower) and with debug assertions, so integer
# overflow is a crash.
set -euo pipefail

if [[ $# -ne 1 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 SECONDS" >&2
    exit 2
fi
duration=$1
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v rustup >/dev/null; then
    echo "fuzz.sh needs rustup (https://rustup.rs)" >&2
    exit 2
fi
# The fuzzers need nightly and cargo-fuzz. Where neither can be installed (no access to
# static.rust-lang.org), say so and stop: the seeds and regressions still run as plain
# tests (crates/tracedat/tests/it/fuzz_seeds.rs, crates/trust/tests/it/replay.rs).
skip() {
    echo "fuzz.sh: $1; fuzzing skipped (the committed inputs ran as plain tests)" >&2
    exit 0
}
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal || skip "cannot install the nightly toolchain"
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly install cargo-fuzz --locked || skip "cannot install cargo-fuzz"
fi
if ! command -v c++ >/dev/null && ! command -v clang++ >/dev/null; then
    echo "fuzz.sh needs a C++ compiler to build libFuzzer (apt-get install build-essential)" >&2
    exit 2
fi

flags=(--sanitizer none --debug-assertions)
(cd fuzz && cargo +nightly fuzz build "${flags[@]}")

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# fuzz TARGET SECONDS INPUT_DIR...: one fuzzer, its log in $logs/TARGET.log.
fuzz() {
    local target=$1 seconds=$2
    shift 2
    mkdir -p "fuzz/corpus/$target"
    # New inputs go to the (ignored) corpus directory; the committed inputs are only read.
    (cd fuzz && cargo +nightly fuzz run "${flags[@]}" "$target" "corpus/$target" "$@" -- \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        ${FUZZ_ARGS[$target]}) >"$logs/$target.log" 2>&1
}

declare -A FUZZ_ARGS=(
    [read_trace]="-dict=read_trace.dict"
    [read_perf]=""
    [read_perfetto]=""
    [sched_model]=""
)
# The readers one after the other on one core (each writes its own log; a failure
# stops the ones after it).
(fuzz read_trace $(((duration + 3) / 4)) seeds/read_trace regressions/read_trace &&
    fuzz read_perf $(((duration + 3) / 4)) seeds/read_perf &&
    fuzz read_perfetto $(((duration + 3) / 4)) seeds/read_perfetto) &
reader=$!
fuzz sched_model "$duration" seeds/sched_model regressions/sched_model &
model=$!

# failed TARGET...: the end of each one's log.
failed() {
    for target in "$@"; do
        [[ -f $logs/$target.log ]] || continue
        echo "fuzz.sh: $target (or the fuzzer before it on its core) FAILED; the end of its log:" >&2
        tail -n 60 "$logs/$target.log" >&2
    done
}
status=0
wait "$reader" || { status=1; failed read_trace read_perf read_perfetto; }
wait "$model" || { status=1; failed sched_model; }
for target in read_trace read_perf read_perfetto sched_model; do
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log" 2>/dev/null)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$target.log" 2>/dev/null)
    echo "fuzz.sh: $target: ${runs:-?} executions (${rate:-?} per second)"
done
exit $status
