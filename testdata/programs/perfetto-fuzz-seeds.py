#!/usr/bin/env python3
"""Writes the Perfetto reader fuzzer's seed (fuzz/seeds/read_perfetto/sched.pftrace) with
the protobuf classes of the `perfetto` pip package (Perfetto's own definitions, an
encoder independent of schedlens): a trace config with two buffers, a process tree and a
thread's track descriptor, an expanded bundle on CPU 0 with one event of every kind the
reader decodes (and a generic event and one it has no layout for), a CompactSched bundle
on CPU 1 (interned names, delta times, switch and waking columns), a bundle marked as
following lost events, and ftrace statistics at the start and the end. The Perfetto
reader's tests read it back (crates/trust/tests/replay.rs), so it also checks the
reader against Perfetto's field numbers."""
import sys
from pathlib import Path

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

root = Path(__file__).resolve().parents[2]
trace = pb.Trace()

packet = trace.packet.add()
for size_kb, policy in [(8192, 1), (1024, 2)]:
    buffer = packet.trace_config.buffers.add()
    buffer.size_kb = size_kb
    buffer.fill_policy = policy

packet = trace.packet.add()
process = packet.process_tree.processes.add()
process.pid, process.ppid = 10, 1
process.cmdline.append("/usr/bin/bash")
thread = packet.process_tree.threads.add()
thread.tid, thread.tgid, thread.name = 11, 10, "worker"

packet = trace.packet.add()
packet.track_descriptor.uuid = 7
packet.track_descriptor.thread.pid = 10
packet.track_descriptor.thread.tid = 12
packet.track_descriptor.thread.thread_name = "helper"

packet = trace.packet.add()
stats = packet.ftrace_stats
stats.phase = pb.FtraceStats.Phase.START_OF_TRACE
for cpu in (0, 1):
    s = stats.cpu_stats.add()
    s.cpu, s.overrun = cpu, 0

packet = trace.packet.add()
bundle = packet.ftrace_events
bundle.cpu = 0
ts = 1000


def event(pid):
    global ts
    e = bundle.event.add()
    e.timestamp, e.pid = ts, pid
    ts += 10
    return e


s = event(0).sched_switch
s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state = "swapper/0", 0, 120, 0
s.next_comm, s.next_pid, s.next_prio = "bash", 10, 120
e = event(10).sched_waking
e.comm, e.pid, e.prio, e.success, e.target_cpu = "worker", 11, 120, 1, 1
e = event(10).sched_wakeup
e.comm, e.pid, e.prio, e.success, e.target_cpu = "worker", 11, 120, 1, 1
e = event(10).task_newtask
e.pid, e.comm, e.clone_flags, e.oom_score_adj = 13, "bash", 0x3d0f00, 0
e = event(10).sched_process_fork
e.parent_comm, e.parent_pid, e.child_comm, e.child_pid = "bash", 10, "bash", 13
e = event(10).sched_wakeup_new
e.comm, e.pid, e.prio, e.success, e.target_cpu = "bash", 13, 120, 1, 0
e = event(10).sched_migrate_task
e.comm, e.pid, e.prio, e.orig_cpu, e.dest_cpu = "bash", 13, 120, 0, 1
e = event(10).print
e.ip, e.buf = 0xffffffff81000000, "marker\n"
e = event(10).task_rename
e.pid, e.oldcomm, e.newcomm, e.oom_score_adj = 10, "bash", "sh", 0
e = event(10).sched_process_exec
e.filename, e.pid, e.old_pid = "/bin/true", 10, 10
g = event(10).generic
g.event_name = "sched_stat_runtime"
f = g.field.add()
f.name, f.str_value = "comm", "true"
f = g.field.add()
f.name, f.int_value = "pid", 10
f = g.field.add()
f.name, f.uint_value = "runtime", 12345
e = event(10).cpu_frequency
e.state, e.cpu_id = 1800000, 0
e = event(10).sched_process_exit
e.comm, e.pid, e.tgid, e.prio = "true", 10, 10, 120
s = event(10).sched_switch
s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state = "true", 10, 120, 16
s.next_comm, s.next_pid, s.next_prio = "swapper/0", 0, 120
e = event(0).sched_process_free
e.comm, e.pid, e.prio = "true", 10, 120

packet = trace.packet.add()
bundle = packet.ftrace_events
bundle.cpu = 1
compact = bundle.compact_sched
compact.intern_table.extend(["worker", "swapper/1", "bash"])
previous = 0
for when, state, pid, prio, name in [(1005, 0, 11, 120, 0), (1050, 1, 0, 120, 1), (1070, 0, 13, 120, 2)]:
    compact.switch_timestamp.append(when - previous)
    previous = when
    compact.switch_prev_state.append(state)
    compact.switch_next_pid.append(pid)
    compact.switch_next_prio.append(prio)
    compact.switch_next_comm_index.append(name)
previous = 0
for when, pid, cpu, name in [(1040, 12, 1, 0), (1060, 13, 1, 2)]:
    compact.waking_timestamp.append(when - previous)
    previous = when
    compact.waking_pid.append(pid)
    compact.waking_target_cpu.append(cpu)
    compact.waking_prio.append(120)
    compact.waking_comm_index.append(name)
    compact.waking_common_flags.append(1)

packet = trace.packet.add()
bundle = packet.ftrace_events
bundle.cpu = 1
bundle.lost_events = True
e = bundle.event.add()
e.timestamp, e.pid = 1200, 13
s = e.sched_switch
s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state = "bash", 13, 120, 1
s.next_comm, s.next_pid, s.next_prio = "swapper/1", 0, 120

packet = trace.packet.add()
stats = packet.ftrace_stats
stats.phase = pb.FtraceStats.Phase.END_OF_TRACE
for cpu, overrun in [(0, 5), (1, 0)]:
    s = stats.cpu_stats.add()
    s.cpu, s.overrun = cpu, overrun

out = root / "fuzz/seeds/read_perfetto/sched.pftrace"
out.parent.mkdir(parents=True, exist_ok=True)
out.write_bytes(trace.SerializeToString())
print(f"{out}: {out.stat().st_size} bytes", file=sys.stderr)
