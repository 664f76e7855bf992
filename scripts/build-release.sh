#!/usr/bin/env bash
# The fastest schedlens: a release build optimized with a profile of its own commands
# (profile-guided optimization, PGO). An instrumented build runs the usual commands on the
# bundled traces and on a generated 64-CPU one (see `train` below: decoding, the model,
# every figure format, check, stats, exports, report, compare and the viewer's API), then
# a second build lays out and inlines the code by what those runs executed. Outputs are the
# same bytes as a plain `cargo build --release` (the profile only changes code placement);
# the time the model and the analyses take drops by 4-12% (docs/internals.md, "Build"; figures in docs/performance.md).
#
#   scripts/build-release.sh [CARGO BUILD OPTIONS]   e.g. --features schedlens/otf2,export/otf2
#
# Writes target/pgo/release/schedlens and prints its path. Needs `llvm-profdata` of the
# LLVM that rustc uses (its major version: `rustc -vV`); on Debian `apt-get install
# llvm-NN` (found in /usr/lib/llvm-NN/bin), or `rustup component add llvm-tools`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

llvm=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=""
for candidate in "llvm-profdata-$llvm" "/usr/lib/llvm-$llvm/bin/llvm-profdata" \
    "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"; do
    if command -v "$candidate" >/dev/null && [[ $("$candidate" --version 2>&1) == *"LLVM version $llvm."* ]]; then
        profdata=$candidate
        break
    fi
done
if [[ -z $profdata ]]; then
    echo "build-release.sh: needs llvm-profdata of LLVM $llvm (rustc's): apt-get install llvm-$llvm, or rustup component add llvm-tools" >&2
    exit 2
fi

data=$PWD/target/pgo-data
instrumented=target/pgo-instrumented/release/schedlens

# run BIN ARGS...: one training command; exit 3 (a damaged input, a partial result) is
# expected of the lost-events trace.
run() {
    local status=0
    "$@" >/dev/null 2>>"$data/train.log" || status=$?
    ((status == 0 || status == 3)) || { echo "build-release.sh: training failed ($status): $*" >&2; exit 1; }
}

# train BIN: the commands users run most, on traces of several sources, sizes and formats.
train() {
    local bin=$1 work=$data/work
    mkdir -p "$work"
    run "$bin" synth --cpus 64 --seconds 2 --workload mixed --difficulty noisy --seed 7 -o "$work/mixed-64.dat"
    local traces=(testdata/traces/barrier-v7zstd.dat testdata/traces/hackbench-v7zstd.dat
        testdata/traces/hackbench-v6.dat testdata/traces/lost-events-v7zstd.dat
        testdata/traces/foreign/lisa-rtapp-juno-arm64.dat "$work/mixed-64.dat")
    for trace in "${traces[@]}"; do
        run "$bin" info "$trace"
        run "$bin" dump "$trace"
        run "$bin" stats "$trace"
        run "$bin" graph "$trace" -o "$work/graph.png"
        run "$bin" graph "$trace" --color-by-command -o "$work/graph.svg"
        run "$bin" running-waiting "$trace" -o "$work/running-waiting.png"
        run "$bin" running-waiting "$trace" --per-cpu -o "$work/running-waiting.pdf"
        run "$bin" check "$trace"
        run "$bin" check --format json "$trace"
        run "$bin" latency "$trace"
        run "$bin" export --format perfetto -o "$work/trace.pftrace" "$trace"
        rm -rf "$work/parquet"
        run "$bin" export --format parquet -o "$work/parquet" "$trace"
    done
    # The foreign trace names no command to follow.
    for trace in "${traces[@]:0:4}"; do
        run "$bin" critical-path "$trace"
    done
    run "$bin" report "${traces[0]}" "${traces[1]}" -o "$work/report.html"
    run "$bin" compare "${traces[1]}" "${traces[0]}" -o "$work/compare.png"
    train_viewer "$bin" "$work/mixed-64.dat"
}

# train_viewer BIN TRACE: the viewer's API as the page calls it (tiles at several zoom
# levels, lookups, statistics, incidents), then a Ctrl-C, on which it exits normally.
train_viewer() {
    command -v curl >/dev/null || { echo "build-release.sh: no curl: the viewer is not trained" >&2; return; }
    local bin=$1 trace=$2 log=$data/view.log api=""
    "$bin" view --no-open --port 0 "$trace" >"$log" 2>&1 &
    local viewer=$!
    # It prints where it serves at once, and /api/meta answers once the trace is loaded.
    for _ in $(seq 100); do
        api=$(sed -n 's|.*serving \(http://[^/]*\)/.*|\1/api|p' "$log")
        [[ -n $api ]] && curl -sf "$api/meta" >/dev/null && break
        api=""
        sleep 0.2
    done
    if [[ -z $api ]]; then
        echo "build-release.sh: the viewer did not start ($log): it is not trained" >&2
        kill "$viewer" 2>/dev/null || true
        return
    fi
    local requests=("at?trace=0&cpu=0&t=500000000&span=1000000" "stats?trace=0&start=0&end=2000000000"
        "incidents?trace=0")
    for level in 18 22 26 30; do
        for index in 0 1 2 3; do
            requests+=("tile?trace=0&level=$level&index=$index&columns=512&layers=trqh&color=command")
        done
    done
    for request in "${requests[@]}"; do
        curl -s "$api/$request" >/dev/null || true
    done
    kill -INT "$viewer"
    wait "$viewer" || true
}

CARGO_TARGET_DIR=target/pgo-instrumented RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$data/build" \
    cargo build --release --locked -p schedlens "$@"
# A profile newer than the instrumented binary was made by it: the build is up to date.
if [[ ! $data/merged.profdata -nt $instrumented ]]; then
    rm -rf "$data"
    mkdir -p "$data"
    LLVM_PROFILE_FILE="$data/%m-%p.profraw" train "$instrumented"
    "$profdata" merge -o "$data/merged.profdata" "$data"/*.profraw
fi
CARGO_TARGET_DIR=target/pgo RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$data/merged.profdata" \
    cargo build --release --locked -p schedlens "$@"
echo target/pgo/release/schedlens
