"""Reads a schedlens Perfetto export with the protobuf definitions of Perfetto's own
Python package and compares every ftrace event with `schedlens dump --json` of the same
trace: per CPU the same events in the same order with the same fields, so the counts per
CPU, per event type and per task agree too. Also checks schedlens's tracks.

Compact rows (`compact_sched`) are decoded as Perfetto's importer does: a bundle's rows
and events put in time order, a compact switch's previous task (pid, name, priority) and a
compact waking's task taken from the CPU's previous switch. With --compact (the default
export) the file may leave out events that neither Perfetto nor schedlens reads, but every
other event of the dump must be there, and there are no counter tracks; without it
(`--all-events`) every event must be there, and the counters.

usage: check_perfetto.py EXPORT.pftrace DUMP.jsonl INCIDENTS [--compact] [WINDOW_START_S WINDOW_END_S]
INCIDENTS is the number of incidents `check --format json` found; the window (seconds from
the first event) restricts the dump to what an export with --min/--max holds.
Exit status 0 when everything matches; prints the counts it compared."""

import collections
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

# Fields of trace.dat events that Perfetto's messages have no field for.
NOT_IN_PERFETTO = {("sched_process_exit", "group_dead")}
# Events Perfetto's importer or schedlens's model reads: a compact export has all of them.
READ = {"print", "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "task_newtask", "task_rename",
        "sched_process_exec", "sched_process_exit", "sched_process_fork", "sched_process_free", "sched_migrate_task"}


def compact_rows(bundle):
    """A bundle's compact switches and wakings as (ts, kind, fields), times undeltaed."""
    rows = []
    c = bundle.compact_sched
    names = list(c.intern_table)
    switch = zip(c.switch_timestamp, c.switch_prev_state, c.switch_next_pid, c.switch_next_prio,
                 c.switch_next_comm_index)
    ts = 0
    for delta, prev_state, next_pid, next_prio, comm in switch:
        ts += delta
        rows.append((ts, "compact_switch", {"prev_state": prev_state, "next_pid": next_pid, "next_prio": next_prio,
                                            "next_comm": names[comm]}))
    flags = list(c.waking_common_flags)
    waking = zip(c.waking_timestamp, c.waking_pid, c.waking_target_cpu, c.waking_prio, c.waking_comm_index)
    ts = 0
    for i, (delta, pid, target_cpu, prio, comm) in enumerate(waking):
        ts += delta
        rows.append((ts, "compact_waking", {"pid": pid, "target_cpu": target_cpu, "prio": prio, "comm": names[comm],
                                            "common_flags": flags[i] if i < len(flags) else 0}))
    return rows


def perfetto_events(trace):
    """(cpu, ts, pid, name, fields) of every ftrace event, compact ones completed, per CPU in
    time order; lost-event marks per CPU; compact rows per kind."""
    entries, lost, compact = collections.defaultdict(list), collections.Counter(), collections.Counter()
    for packet in trace.packet:
        if not packet.HasField("ftrace_events"):
            continue
        bundle = packet.ftrace_events
        if bundle.lost_events:
            lost[bundle.cpu] += 1
        # As Perfetto's tokenizer: the compact rows first, then the events; its sorter puts
        # each CPU's entries in time order.
        for ts, kind, fields in compact_rows(bundle):
            compact[kind] += 1
            entries[bundle.cpu].append((ts, None, kind, fields))
        for event in bundle.event:
            kind = event.WhichOneof("event")
            message = getattr(event, kind)
            if kind == "generic":
                name = message.event_name
                fields = {}
                for field in message.field:
                    fields[field.name] = getattr(field, field.WhichOneof("value"))
            else:
                name = kind
                fields = {f.name: v for f, v in message.ListFields()}
            entries[bundle.cpu].append((event.timestamp, event.pid, name, fields))
    events = []
    for cpu, cpu_entries in sorted(entries.items()):
        cpu_entries.sort(key=lambda e: e[0])
        running = None  # (pid, comm, prio) of the CPU's previous switch's next task
        for ts, pid, name, fields in cpu_entries:
            if name == "compact_switch":
                if running is None:
                    raise SystemExit(f"cpu {cpu}: a compact switch at {ts} follows no switch")
                name, pid = "sched_switch", running[0]
                fields = {"prev_comm": running[1], "prev_pid": running[0], "prev_prio": running[2], **fields}
            elif name == "compact_waking":
                if running is None:
                    raise SystemExit(f"cpu {cpu}: a compact waking at {ts} follows no switch")
                name, pid = "sched_waking", running[0]
                fields = {k: v for k, v in fields.items() if k != "common_flags"}
            if name == "sched_switch":
                running = (fields.get("next_pid", 0), fields.get("next_comm", ""), fields.get("next_prio", 0))
            events.append((cpu, ts, pid, name, fields))
    return events, lost, compact


def dump_events(path, window):
    events, lost = [], collections.Counter()
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    lines = [l for l in lines if "buffer" not in l]  # the top buffer only
    first = min(l["ts"] for l in lines if "ts" in l)
    start, end = (first + round(window[0] * 1e9), first + round(window[1] * 1e9)) if window else (0, 1 << 64)
    for line in lines:
        if "lost" in line:
            lost[line["cpu"]] += 1
        elif start <= line["ts"] < end and line["event"] is not None:
            events.append((line["cpu"], line["ts"], line["pid"], line["event"], line["fields"]))
    return events, lost


def same_value(perfetto_value, dump_value):
    if isinstance(dump_value, list):
        return perfetto_value == json.dumps(dump_value, separators=(",", ":"))
    return perfetto_value == dump_value


def compare(p, d):
    cpu, ts, pid, name, fields = d
    if p[:4] != (cpu, ts, pid, name):
        return f"event differs: perfetto {p[:4]} dump {d[:4]}"
    pf = p[4]
    for key, value in fields.items():
        if key not in pf:
            if (name, key) in NOT_IN_PERFETTO or value is None:
                continue
            if value == 0 or value == "" or value == []:
                continue  # protobuf leaves out fields at their default value
            return f"{name} at {ts}: field {key}={value!r} missing"
        if not same_value(pf[key], value):
            return f"{name} at {ts}: field {key}: perfetto {pf[key]!r} dump {value!r}"
    extra = set(pf) - set(fields)
    if extra:
        return f"{name} at {ts}: fields {extra} not in the dump"
    return None


def left_out_of(pc, dc):
    """Walks a CPU's perfetto events along its dump events; returns the dump events left out
    (in order), or a problem when perfetto has an event the dump has not at that place."""
    left_out, i = [], 0
    for d in dc:
        if i < len(pc) and compare(pc[i], d) is None:
            i += 1
        else:
            left_out.append(d)
    if i < len(pc):
        problem = compare(pc[i], left_out[0]) if left_out else "an event past the dump's"
        return left_out, f"from perfetto's event {i} {pc[i][:4]} on, no dump event matches: {problem}"
    return left_out, None


def main():
    args = sys.argv[1:]
    compact_file = "--compact" in args
    args = [a for a in args if a != "--compact"]
    export, dump, incidents = args[0], args[1], int(args[2])
    window = (float(args[3]), float(args[4])) if len(args) > 4 else None
    trace = pb.Trace()
    with open(export, "rb") as f:
        trace.ParseFromString(f.read())
    p_events, p_lost, compact = perfetto_events(trace)
    d_events, d_lost = dump_events(dump, window)
    problems = []
    left_out = []
    for cpu in sorted({e[0] for e in p_events} | {e[0] for e in d_events}):
        pc = [e for e in p_events if e[0] == cpu]
        dc = [e for e in d_events if e[0] == cpu]
        if compact_file:
            cpu_left_out, problem = left_out_of(pc, dc)
            left_out += cpu_left_out
            if problem:
                problems.append(f"cpu {cpu}: {problem}")
            read = [d[:4] for d in cpu_left_out if d[3] in READ]
            if read:
                problems.append(f"cpu {cpu}: {len(read)} events Perfetto or schedlens reads are missing: {read[:3]}")
            continue
        if len(pc) != len(dc):
            problems.append(f"cpu {cpu}: {len(pc)} events in perfetto, {len(dc)} in the dump")
        for p, d in zip(pc, dc):
            problem = compare(p, d)
            if problem:
                problems.append(f"cpu {cpu}: {problem}")
                break
    if compact_file:
        kept = {id(d) for d in left_out}
        d_events = [d for d in d_events if id(d) not in kept]
    by = lambda events, key: collections.Counter(key(e) for e in events)
    for label, key in [("cpu", lambda e: e[0]), ("event", lambda e: e[3]), ("task", lambda e: e[2])]:
        if by(p_events, key) != by(d_events, key):
            problems.append(f"counts per {label} differ")
    if window is None and p_lost != d_lost:
        problems.append(f"lost-event marks {dict(p_lost)} != dump {dict(d_lost)}")

    tracks = {}
    counters = collections.Counter()
    slices = 0
    for packet in trace.packet:
        if packet.HasField("track_descriptor"):
            tracks[packet.track_descriptor.uuid] = packet.track_descriptor
        if packet.HasField("track_event"):
            te = packet.track_event
            if te.type == pb.TrackEvent.TYPE_COUNTER:
                counters[te.track_uuid] += 1
            elif te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                slices += 1
                names = {a.name for a in te.debug_annotations}
                if "explanation" not in names:
                    problems.append("an incident slice without its explanation")
    names = {t.name for t in tracks.values()}
    for wanted in ["schedlens: running tasks", "schedlens: waiting tasks", "schedlens: runqueue length cpu 0"]:
        if wanted not in names and not compact_file:
            problems.append(f"no track {wanted!r}")
        if wanted in names and compact_file:
            problems.append(f"a compact export with the track {wanted!r}")
    if any(counters[uuid] == 0 for uuid, t in tracks.items() if t.HasField("counter")):
        problems.append("a counter track without values")
    if slices != incidents:
        problems.append(f"{slices} incident slices, check found {incidents}")

    per_event = by(p_events, lambda e: e[3])
    print(f"perfetto: {len(p_events)} events on {len(by(p_events, lambda e: e[0]))} CPUs, "
          f"{len(by(p_events, lambda e: e[2]))} tasks, {dict(sorted(per_event.items()))}; "
          f"{sum(counters.values())} counter values on {len(counters)} tracks, {slices} incident slices; "
          f"lost marks {dict(p_lost)}; compact rows {dict(compact)}; "
          f"left out {dict(by(left_out, lambda e: e[3]))}")
    for problem in problems[:20]:
        print("MISMATCH:", problem)
    sys.exit(1 if problems else 0)


main()
