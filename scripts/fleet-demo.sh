#!/usr/bin/env bash
# A fleet of runs, end to end: synthesises N runs (default 200) with `schedlens synth`
# (varied seeds, lengths and workloads; every fifth run with an injected pathology; runs
# of two "hosts" in two folders with the same file names), exports them all into one
# Parquet dataset, and answers the questions of docs/export.md (slowest runs, per-command
# run time across runs, runs with the most lost CPU time, the migration matrix across
# runs, ...) with DuckDB, then with Spark when pyspark and Java are present, checking that
# both give the same answers (scripts/fleet_queries.py).
#
#   scripts/fleet-demo.sh [N]
#
# Environment: SCHEDLENS (the binary; default target/release/schedlens, else
# target/debug/schedlens, built if neither exists), FLEET_DIR (where runs/ and dataset/
# go; default a new temporary directory, kept), FLEET_SECONDS (a run's length before its
# ±10% variation, default 0.2; 1.6 gives about 200k events), FLEET_CPUS (default 8),
# FLEET_ENGINES (auto, duckdb, spark or duckdb,spark; default auto), FLEET_TIME=1 (each
# query's time per engine), and scripts/fleet_queries.py's SPARK_* settings. Exit status: that of the export when it failed (1), 1 when
# the engines differ, else 0, or 3 when some traces could not be exported.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-200}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N]  (N runs, default 200)" >&2; exit 2; }
seconds=${FLEET_SECONDS:-0.2}
cpus=${FLEET_CPUS:-8}
engines=${FLEET_ENGINES:-auto}
dir=${FLEET_DIR:-$(mktemp -d -t schedlens-fleet.XXXXXX)}

schedlens=${SCHEDLENS:-}
if [[ -z $schedlens ]]; then
    for candidate in "$root/target/release/schedlens" "$root/target/debug/schedlens"; do
        [[ -x $candidate ]] && { schedlens=$candidate; break; }
    done
fi
if [[ -z $schedlens ]]; then
    echo "fleet-demo: building schedlens (cargo build --release)" >&2
    (cd "$root" && cargo build --release -q -p schedlens)
    schedlens=$root/target/release/schedlens
fi

# synth_run I: run I's trace, its settings drawn from I (the same N, the same runs).
synth_run() {
    local i=$1 host=host-a workload=mixed inject=()
    ((i % 2)) || host=host-b
    ((i % 7 == 3)) && workload=barrier
    ((i % 11 == 5)) && workload=hackbench
    # Every fifth run (of the workloads that take injections) goes wrong in one way.
    if ((i % 5 == 0)) && [[ $workload != hackbench ]]; then
        local kinds=(work-conservation wakeup-placement kthread-preemption)
        inject=(--inject "${kinds[i / 5 % 3]}:2")
    fi
    # The length varies by ±10% around FLEET_SECONDS, as runs of one benchmark do;
    # hackbench switches about three times as often, so its runs are a third as long.
    local length scale=1
    [[ $workload == hackbench ]] && scale=0.3
    length=$(awk -v s="$seconds" -v k="$scale" -v i="$i" 'BEGIN { printf "%.4f", s * k * (0.9 + (i * 37 % 21) / 100) }')
    "$schedlens" synth -o "$dir/runs/$host/run-$(printf %04d $((i / 2 + i % 2))).dat" --seed "$i" \
        --cpus "$cpus" --seconds "$length" --workload "$workload" "${inject[@]}" 2>/dev/null
}

mkdir -p "$dir/runs/host-a" "$dir/runs/host-b"
echo "fleet-demo: synthesising $runs runs into $dir/runs" >&2
start=$(date +%s.%N)
jobs=$(nproc)
for ((i = 1; i <= runs; i++)); do
    synth_run "$i" &
    (( i % jobs == 0 )) && wait
done
wait
events=$(du -sb "$dir/runs" | cut -f1)
echo "fleet-demo: $runs runs synthesised in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s ($((events / 1000000)) MB of trace.dat)" >&2

echo "fleet-demo: exporting them into $dir/dataset" >&2
rm -rf "$dir/dataset"
start=$(date +%s.%N)
status=0
"$schedlens" export "$dir/runs" --format parquet -o "$dir/dataset" >"$dir/export.txt" || status=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
((status == 0 || status == 3)) || { echo "fleet-demo: the export failed (exit $status)" >&2; exit "$status"; }
tail -n 1 "$dir/export.txt"
echo "fleet-demo: exported in $elapsed s on $(nproc) cores; the dataset is $(du -sh "$dir/dataset" | cut -f1)" >&2

timing=()
[[ ${FLEET_TIME:-0} == 1 ]] && timing=(--time)
answer=0
python3 "$root/scripts/fleet_queries.py" "$dir/dataset" --engines "$engines" "${timing[@]}" || answer=$?
((answer == 0)) || exit "$answer"
exit "$status"
