"""Reads a schedlens Parquet export directory with DuckDB and pyarrow and compares it with
`schedlens stats --format json` of each trace, to the nanosecond: per task run time,
switches, waiting time, longest wait and migrations; per CPU busy and idle time. Then runs
one query across every trace of the directory. (Per-CPU busy time is compared only for
traces exported without --forked: stats counts every task there, the export the
accepted ones.)

usage: check_parquet.py DIR TRACE=STATS_BY_TASK.json,STATS_BY_CPU.json ...
Exit status 0 when everything matches; prints what it compared."""

import collections
import json
import sys

import duckdb
import pyarrow.parquet as pq


def table(dir, name):
    return f"read_parquet('{dir}/{name}/*/*.parquet', hive_partitioning = true, union_by_name = true)"


def main():
    dir = sys.argv[1]
    expected = {}
    for arg in sys.argv[2:]:
        trace, files = arg.split("=", 1)
        by_task, by_cpu = files.split(",")
        expected[trace] = (json.load(open(by_task)), json.load(open(by_cpu)))
    db = duckdb.connect()
    problems = []

    # Per task: run time and switches from the segments, waiting from the waits,
    # migrations from the migrations (grouped by task, compared as multisets keyed by pid).
    rows = db.execute(f"""
        with seg as (select trace, task, pid, sum(end_ns - start_ns) as runtime_ns,
                            count(*) filter (where switch_in) as switches
                     from {table(dir, 'segments')} where pid != 0 group by all),
             w as (select trace, task, sum(end_ns - start_ns) as wait_ns, max(end_ns - start_ns) as max_wait_ns
                   from {table(dir, 'waits')} group by all),
             m as (select trace, task, count(*) as migrations from {table(dir, 'migrations')} group by all),
             t as (select trace, task, pid from {table(dir, 'tasks')})
        select t.trace, t.pid, coalesce(runtime_ns, 0), coalesce(switches, 0), coalesce(wait_ns, 0),
               coalesce(max_wait_ns, 0), coalesce(migrations, 0)
        from t left join seg using (trace, task) left join w using (trace, task) left join m using (trace, task)
        where coalesce(runtime_ns, 0) + coalesce(switches, 0) + coalesce(wait_ns, 0) + coalesce(migrations, 0) > 0
    """).fetchall()
    got = collections.defaultdict(collections.Counter)
    for trace, *values in rows:
        got[trace][tuple(int(v) for v in values)] += 1
    for trace, (by_task, _) in expected.items():
        want = collections.Counter(
            (r["pid"], r["runtime_ns"], r["switches"], r["wait_ns"], r["max_wait_ns"], r["migrations"])
            for r in by_task)
        if got[trace] != want:
            missing = list((want - got[trace]).items())[:3]
            extra = list((got[trace] - want).items())[:3]
            problems.append(f"{trace}: per-task totals differ: stats only {missing}, parquet only {extra}")

    rows = db.execute(f"""
        select trace, cpu, sum(end_ns - start_ns) filter (where pid != 0), sum(end_ns - start_ns) filter (where pid = 0)
        from {table(dir, 'segments')} group by all
    """).fetchall()
    got_cpu = {(t, c): (int(b or 0), int(i or 0)) for t, c, b, i in rows}
    for trace, (_, by_cpu) in expected.items():
        meta = json.load(open(f"{dir}/meta/trace={trace}/meta.json"))
        if meta["filter"]["forked_only"]:
            continue  # stats counts every task's time as busy; the export keeps the accepted ones
        for row in by_cpu:
            have = got_cpu.get((trace, row["cpu"]), (0, 0))
            if have != (row["busy_ns"], row["idle_ns"]):
                problems.append(f"{trace} cpu {row['cpu']}: busy/idle {have} != stats {(row['busy_ns'], row['idle_ns'])}")

    # One query over the fleet: run time of every command in every trace.
    fleet = db.execute(f"""
        select trace, comm, sum(end_ns - start_ns) as run_ns from {table(dir, 'segments')}
        where pid != 0 group by all order by trace, run_ns desc
    """).fetchall()
    traces = sorted({r[0] for r in fleet})
    if traces != sorted(expected):
        problems.append(f"the fleet query saw traces {traces}, expected {sorted(expected)}")

    # pyarrow reads the schemas.
    import glob
    segments = pq.read_schema(glob.glob(f"{dir}/segments/*/part.parquet")[0])
    wanted = {"cpu": "int64", "pid": "int64", "comm": "string", "start_ns": "int64", "end_ns": "int64",
              "end_kind": "string", "switch_in": "bool"}
    for name, kind in wanted.items():
        if str(segments.field(name).type) != kind:
            problems.append(f"segments.{name} is {segments.field(name).type}, expected {kind}")
    switch = pq.read_schema(glob.glob(f"{dir}/events/sched_switch/*/part.parquet")[0])
    for name, kind in {"ts": "int64", "cpu": "int64", "common_pid": "int64", "prev_comm": "string",
                       "next_pid": "int64", "prev_state": "int64"}.items():
        if str(switch.field(name).type) != kind:
            problems.append(f"events/sched_switch.{name} is {switch.field(name).type}, expected {kind}")
    incidents = pq.read_schema(glob.glob(f"{dir}/incidents/*/part.parquet")[0])
    if str(incidents.field("cpus").type) != "list<element: int64 not null>":
        problems.append(f"incidents.cpus is {incidents.field('cpus').type}")

    # The raw events agree with the model: one sched_switch per switch-in.
    rows = db.execute(f"""
        select e.trace, e.n, s.n from
          (select trace, count(*) as n from {table(dir, 'events/sched_switch')} group by all) e
          join (select trace, count(*) filter (where switch_in) as n from {table(dir, 'segments')} group by all) s
          using (trace)
    """).fetchall()
    switch_counts = {t: (a, b) for t, a, b in rows}

    print(f"parquet: {len(expected)} traces, {sum(sum(c.values()) for c in got.values())} task rows, "
          f"{len(got_cpu)} CPU rows compared with stats; fleet query rows {len(fleet)}; "
          f"sched_switch events vs switch-ins {switch_counts}")
    for problem in problems[:20]:
        print("MISMATCH:", problem)
    sys.exit(1 if problems else 0)


main()
