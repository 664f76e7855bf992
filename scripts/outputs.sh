#!/usr/bin/env bash
# Writes what a schedlens binary produces for a set of traces into a directory, so two
# binaries (before and after a change that must not change outputs, or a PGO build
# against a plain one) can be compared with `diff -r`:
#
#   scripts/outputs.sh BIN OUTDIR [--quick] [TRACE...]
#
# Without traces: every bundled trace (local and foreign). Per trace: info, dump (text and
# JSON), stats (by command, task and CPU; table, CSV and JSON), graph (PNG, SVG, PDF; by
# command; in socket order), running-waiting (PNG with --per-cpu, its text), check (text
# and JSON), export (Perfetto; Parquet and OTF2 unless --quick), report; with two traces
# or more, compare of the first two; and the viewer's answers to a fixed set of requests
# (meta, tiles at three levels, a run, a task, a range's statistics, incidents, markers,
# an export). `--quick` keeps the figures, JSON, text and Perfetto export only.
# Exit codes and stderr go into the directory too. Needs curl for the viewer's part.
set -euo pipefail
bin=$(realpath "${1:?usage: outputs.sh BIN OUTDIR [--quick] [TRACE...]}")
out=${2:?usage: outputs.sh BIN OUTDIR [--quick] [TRACE...]}
shift 2
quick=false
if [[ ${1:-} == --quick ]]; then
    quick=true
    shift
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
traces=("$@")
if ((${#traces[@]} == 0)); then
    traces=(testdata/traces/*.dat testdata/traces/foreign/*.dat)
fi
mkdir -p "$out"
out=$(realpath "$out")

# run NAME ARGS...: BIN ARGS with stdout in NAME.out, stderr in NAME.err, exit code in
# NAME.code.
run() {
    local name=$1
    shift
    local code=0
    "$bin" "$@" >"$name.out" 2>"$name.err" || code=$?
    echo "$code" >"$name.code"
}

viewer() {
    local trace=$1 dir=$2 port pid
    # A random port may be taken (by another program or a connection's ephemeral port): try
    # another one, so that a busy port never shows as a difference between builds.
    for _ in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 20000))
        "$bin" view --no-open --port "$port" "$trace" >"$dir/view.out" 2>"$dir/view.err" &
        pid=$!
        sleep 0.2
        grep -q 'Address already in use' "$dir/view.err" 2>/dev/null || break
        wait $pid 2>/dev/null
    done
    local url="http://127.0.0.1:$port"
    for _ in $(seq 1 300); do
        grep -q ready "$dir/view.out" 2>/dev/null && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    if grep -q ready "$dir/view.out" 2>/dev/null; then
        local get="curl -s -m 60 -o"
        $get "$dir/v-meta.json" "$url/api/meta"
        local end
        end=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0]["end"])' "$dir/v-meta.json")
        local level=0
        while (((1 << level) * 512 < end)); do level=$((level + 1)); done
        for l in $level $((level - 4)) $((level - 9)); do
            ((l >= 0)) || continue
            $get "$dir/v-tiles-$l.bin" "$url/api/tiles?list=trace=0%26level=$l%26index=0%26columns=512%26layers=t;trace=0%26level=$l%26index=0%26columns=512%26layers=rq;trace=0%26level=$l%26index=0%26columns=512%26layers=t%26color=command"
            $get "$dir/v-tile-$l.bin" "$url/api/tile?trace=0&level=$l&index=0&columns=512&layers=t"
        done
        $get "$dir/v-at.json" "$url/api/at?trace=0&cpu=0&t=$((end / 2))&span=1000000"
        $get "$dir/v-task.json" "$url/api/task?trace=0&task=1"
        $get "$dir/v-stats.json" "$url/api/stats?trace=0&start=0&end=$end"
        for _ in $(seq 1 100); do
            $get "$dir/v-incidents.json" -w '%{http_code}' "$url/api/incidents?trace=0" >"$dir/v-incidents.code"
            [[ $(cat "$dir/v-incidents.code") == 202 ]] || break
            sleep 0.2
        done
        for _ in $(seq 1 100); do
            $get "$dir/v-markers.json" -w '%{http_code}' "$url/api/markers?trace=0" >"$dir/v-markers.code"
            [[ $(cat "$dir/v-markers.code") == 202 ]] || break
            sleep 0.2
        done
        $get "$dir/v-export.svg" "$url/api/export?format=svg&start=0&end=$end&rw=1&q=1&color=command"
        $get "$dir/v-page.html" "$url/"
    fi
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    # The port differs from run to run.
    sed -i "s/127.0.0.1:[0-9]*/127.0.0.1:PORT/g" "$dir/view.out" "$dir/view.err"
}

for trace in "${traces[@]}"; do
    name=$(basename "$(dirname "$trace")")-$(basename "$trace" .dat)
    dir=$out/$name
    rm -rf "$dir"
    mkdir -p "$dir"
    (
        cd "$dir"
        t=$(realpath "$OLDPWD/$trace")
        run graph graph "$t" -o graph.png
        run graph-svg graph "$t" -o graph.svg --color-by-command
        run rw running-waiting "$t" --per-cpu -o rw.png
        run check check "$t"
        run check-json check --format json "$t"
        run stats stats "$t"
        run stats-task-json stats --by task --format json "$t"
        run stats-cpu-csv stats --by cpu --format csv "$t"
        run perfetto export --format perfetto -o trace.pftrace "$t"
        if ! $quick; then
            run info info "$t"
            run dump dump "$t"
            run dump-json dump --json "$t"
            run graph-pdf graph "$t" -o graph.pdf --socket-order --topology sockets=1
            run rw-svg running-waiting "$t" -o rw.svg --markers
            run check-figures check "$t" --figures figs
            run parquet export --format parquet -o parquet "$t"
            run report report "$t" -o report.html
            viewer "$t" .
        fi
    )
    # Absolute paths of this run's directory do not count.
    { grep -rlF "$dir" "$dir" 2>/dev/null || true; } | while read -r f; do sed -i "s|$dir|DIR|g" "$f"; done
    { grep -rlF "$PWD" "$dir" 2>/dev/null || true; } | while read -r f; do sed -i "s|$PWD|REPO|g" "$f"; done
done
if ((${#traces[@]} >= 2)) && ! $quick; then
    (
        cd "$out"
        run compare compare "$(realpath "$OLDPWD/${traces[0]}")" "$(realpath "$OLDPWD/${traces[1]}")" -o compare.png
        run compare-json compare --format json "$(realpath "$OLDPWD/${traces[0]}")" "$(realpath "$OLDPWD/${traces[1]}")"
        run report-two report "$(realpath "$OLDPWD/${traces[0]}")" "$(realpath "$OLDPWD/${traces[1]}")" -o report-two.html
    )
fi
