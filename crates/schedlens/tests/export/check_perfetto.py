"""Reads a schedlens Perfetto export with the protobuf definitions of Perfetto's own
Python package and compares every ftrace event with `schedlens dump --json` of the same
trace: per CPU the same events in the same order with the same fields, so the counts per
CPU, per event type and per task agree too. Also checks schedlens's tracks.

usage: check_perfetto.py EXPORT.pftrace DUMP.jsonl INCIDENTS [WINDOW_START_S WINDOW_END_S]
INCIDENTS is the number of incidents `check --format json` found; the window (seconds from
the first event) restricts the dump to what an export with --min/--max holds.
Exit status 0 when everything matches; prints the counts it compared."""

import collections
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

# Fields of trace.dat events that Perfetto's messages have no field for.
NOT_IN_PERFETTO = {("sched_process_exit", "group_dead")}


def perfetto_events(trace):
    """(cpu, ts, pid, name, fields) of every ftrace event; lost-event marks per CPU."""
    events, lost = [], collections.Counter()
    for packet in trace.packet:
        if not packet.HasField("ftrace_events"):
            continue
        bundle = packet.ftrace_events
        if bundle.lost_events:
            lost[bundle.cpu] += 1
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
            events.append((bundle.cpu, event.timestamp, event.pid, name, fields))
    return events, lost


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


def main():
    export, dump, incidents = sys.argv[1], sys.argv[2], int(sys.argv[3])
    window = (float(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) > 5 else None
    trace = pb.Trace()
    with open(export, "rb") as f:
        trace.ParseFromString(f.read())
    p_events, p_lost = perfetto_events(trace)
    d_events, d_lost = dump_events(dump, window)
    problems = []
    for cpu in sorted({e[0] for e in p_events} | {e[0] for e in d_events}):
        pc = [e for e in p_events if e[0] == cpu]
        dc = [e for e in d_events if e[0] == cpu]
        if len(pc) != len(dc):
            problems.append(f"cpu {cpu}: {len(pc)} events in perfetto, {len(dc)} in the dump")
        for p, d in zip(pc, dc):
            problem = compare(p, d)
            if problem:
                problems.append(f"cpu {cpu}: {problem}")
                break
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
        if wanted not in names:
            problems.append(f"no track {wanted!r}")
    if any(counters[uuid] == 0 for uuid, t in tracks.items() if t.HasField("counter")):
        problems.append("a counter track without values")
    if slices != incidents:
        problems.append(f"{slices} incident slices, check found {incidents}")

    per_event = by(p_events, lambda e: e[3])
    print(f"perfetto: {len(p_events)} events on {len(by(p_events, lambda e: e[0]))} CPUs, "
          f"{len(by(p_events, lambda e: e[2]))} tasks, {dict(sorted(per_event.items()))}; "
          f"{sum(counters.values())} counter values on {len(counters)} tracks, {slices} incident slices; "
          f"lost marks {dict(p_lost)}")
    for problem in problems[:20]:
        print("MISMATCH:", problem)
    sys.exit(1 if problems else 0)


main()
