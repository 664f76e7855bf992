#!/bin/sh
# record-fixtures.sh: re-record the real-trace fixtures of testdata/traces/.
#
# Usage (as root, on Linux with trace-cmd, hackbench (rt-tests), stress-ng, gcc, python3):
#   testdata/programs/record-fixtures.sh OUTDIR [NAME...]
# With no NAME every fixture is recorded; NAME is a fixture name without
# `.dat` (see the case list below). Each recording is short (a few seconds).
#
# TRACE_CMD_RECORD names the recorder (default: `trace-cmd record`, or the
# shared `trace-cmd-record` wrapper when it exists; the wrapper is needed on
# machines whose function-tracer control files refuse writes). The `*-record`
# fixtures are made with `schedlens record` instead: SCHEDLENS names the binary
# (default: `schedlens` on the PATH).
#
# The scheduling fixtures need a quiet machine (nothing else running): other
# work would share the CPUs with the recorded programs.
#
# Size: trace-cmd copies /proc/kallsyms (5.4 MB on the recording machine) into
# every file. Except where noted, the recordings run in a private mount
# namespace where /proc/kallsyms is replaced by its first 1000 lines, so the
# uncompressed fixtures stay small. Scheduler events need no symbols.
# The fixtures recorded with the full kallsyms say `full` below.
#
# Results differ from run to run (timing, pids); testdata/traces/README.md
# records what the committed files contain.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [NAME...]" >&2; exit 2; }
out=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${TRACE_CMD_RECORD:-}" ]; then
    if [ -x /work/shared/tools/trace-cmd-record ]; then
        TRACE_CMD_RECORD=/work/shared/tools/trace-cmd-record
    else
        TRACE_CMD_RECORD="trace-cmd record"
    fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -pthread -o "$work/pinned-spin" "$here/pinned-spin.c"
gcc -O2 -Wall -pthread -o "$work/barrier" "$here/barrier.c"
head -n 1000 /proc/kallsyms >"$work/kallsyms"
PATH=$work:$PATH
export PATH

# rec KALLSYMS ARGS...: record with the given kallsyms (`full` or `short`).
rec() {
    k=$1
    shift
    echo "+ $TRACE_CMD_RECORD $*" >&2
    if [ "$k" = full ]; then
        # shellcheck disable=SC2086
        $TRACE_CMD_RECORD "$@" >/dev/null
    else
        # shellcheck disable=SC2086 # TRACE_CMD_RECORD may be two words
        unshare -m sh -c 'mount --bind "$0" /proc/kallsyms && exec "$@"' \
            "$work/kallsyms" $TRACE_CMD_RECORD "$@" >/dev/null
    fi
}

# srec ARGS...: record with `schedlens record` (it stores no kallsyms).
srec() {
    echo "+ ${SCHEDLENS:-schedlens} record $*" >&2
    "${SCHEDLENS:-schedlens}" record "$@" >/dev/null 2>&1
}

M=/sys/kernel/tracing/trace_marker
EV="-e sched -v -e sched_stat_runtime"
record() {
    name=$1
    o=$out/$name.dat
    case $name in
    hackbench-v6)
        rec short $EV -q --file-version 6 -o "$o" sh -c 'sleep 1; hackbench -g 2 -l 50' ;;
    hackbench-v7zstd) # full kallsyms
        rec full $EV -q -o "$o" sh -c 'sleep 1; hackbench -g 2 -l 50' ;;
    hackbench-v7none)
        rec short $EV -q --compression none -o "$o" sh -c 'sleep 1; hackbench -g 2 -l 50' ;;
    lost-events-v7zstd)
        # 64 KB per-CPU buffer; hackbench at SCHED_FIFO starves the recorder during
        # each burst, so the ring buffer overwrites unread pages. trace-cmd 3.1.6
        # leaves the buffer at 64 KB afterwards: put the old size back.
        size=$(sed 's/.*expanded: *\([0-9]*\).*/\1/' /sys/kernel/tracing/buffer_size_kb)
        rc=0
        rec short $EV -q -b 64 -o "$o" sh -c \
            'sleep 1; for i in 1 2 3 4; do chrt -f 10 hackbench -g 2 -l 100; sleep 0.2; done' || rc=$?
        echo "$size" >/sys/kernel/tracing/buffer_size_kb
        return $rc ;;
    hackbench-mono-v7zstd)
        rec short $EV -q -C mono -o "$o" sh -c 'sleep 1; hackbench -g 1 -l 30' ;;
    hackbench-x86tsc-v7zstd)
        rec short $EV -q -C x86-tsc -o "$o" sh -c 'sleep 1; hackbench -g 1 -l 30' ;;
    hackbench-counter-v7zstd)
        rec short $EV -q -C counter -o "$o" sh -c 'sleep 1; hackbench -g 1 -l 30' ;;
    instance-v7zstd)
        # trace-cmd 3.1.6 applies a -v to every later -B (it would delete the
        # instance), so the top buffer gets all sched events here.
        rec short -e sched -B inst -e sched:sched_switch -e sched:sched_wakeup -q -o "$o" \
            sh -c 'sleep 1; hackbench -g 1 -l 30' ;;
    instance-lost-v7zstd)
        # Both buffers at 64 KB, SCHED_FIFO bursts as in lost-events-v7zstd.
        size=$(sed 's/.*expanded: *\([0-9]*\).*/\1/' /sys/kernel/tracing/buffer_size_kb)
        rc=0
        rec short -b 64 -e sched -B inst -b 64 -e sched:sched_switch -e sched:sched_wakeup -q \
            -o "$o" sh -c \
            'sleep 1; for i in 1 2 3; do chrt -f 10 hackbench -g 2 -l 100; sleep 0.2; done' || rc=$?
        echo "$size" >/sys/kernel/tracing/buffer_size_kb
        return $rc ;;
    markers-v7zstd)
        rec short $EV -q -o "$o" sh -c "sleep 1; echo hello >$M; printf 'two\\nlines\\n' >$M; \
printf 'no newline' >$M; printf 'a\\n\\nb\\n\\n' >$M; printf 'z\\nx-1 [000] 1.5: fake: y\\n' >$M" ;;
    scenario-pinned-v7zstd)
        rec short $EV -q -o "$o" sh -c 'sleep 1; taskset -c 0 pinned-spin 300' ;;
    scenario-barrier-v7zstd)
        rec short $EV -q -o "$o" sh -c 'sleep 1; barrier 300' ;;
    scenario-overload-v7zstd)
        rec short $EV -q -o "$o" sh -c 'sleep 1; stress-ng --cpu 4 --timeout 1 -q' ;;
    barrier-pinned-v7zstd) # 3 threads taking turns on CPU 0 while CPU 1 idles
        rec short $EV -q -o "$o" sh -c 'sleep 1; taskset -c 0 barrier 300 200000 3' ;;
    barrier-pinned-record)
        srec -o "$o" --sleep 1 -- taskset -c 0 barrier 300 200000 3 ;;
    barrier-unpinned-v7zstd)
        rec short $EV -q -o "$o" sh -c 'sleep 1; barrier 300 200000 3' ;;
    barrier-unpinned-record)
        srec -o "$o" --sleep 1 -- barrier 300 200000 3 ;;
    spin-pinned-record) # the same as scenario-pinned-v7zstd
        srec -o "$o" --sleep 1 -- taskset -c 0 pinned-spin 300 ;;
    spin-unpinned-v7zstd)
        rec short $EV -q -o "$o" sh -c 'sleep 1; pinned-spin 300' ;;
    spin-unpinned-record|spin-startup-record)
        # spin-startup-record: a recording in which the kernel happened to start both
        # spinners on one CPU (record until `check` shows it; 2 in 10 did here).
        srec -o "$o" --sleep 1 -- pinned-spin 300 ;;
    spin-overload-v7zstd) # 4 spinners on 2 CPUs
        rec short $EV -q -o "$o" sh -c 'sleep 1; pinned-spin 300 4' ;;
    spin-overload-record)
        srec -o "$o" --sleep 1 -- pinned-spin 300 4 ;;
    scenario-forkexec-v7zstd)
        rec short $EV -q -o "$o" sh -c \
            'sleep 1; for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; ls / >/dev/null; sh -c "exit 3"; done' ;;
    symbols-stack-v6) # full kallsyms, then trimmed by trim-v6-trace.py
        # Events with kernel addresses shown as symbols (%pS call_site, %ps function, print's
        # ip) and, with -T, a kernel_stack after every event.
        rec full -e sched:sched_switch -e sched:sched_waking -e timer:timer_start \
            -e workqueue:workqueue_queue_work -e kmem:kmalloc -e irq -T -q --file-version 6 \
            -o "$work/full.dat" sh -c "sleep 0.2; echo phase-start >$M; ls / >/dev/null; echo phase-end >$M; sleep 0.1"
        python3 "$here/trim-v6-trace.py" "$work/full.dat" "$o" >/dev/null ;;
    *)
        echo "unknown fixture $name" >&2
        return 1 ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- hackbench-v6 hackbench-v7zstd hackbench-v7none lost-events-v7zstd \
        hackbench-mono-v7zstd hackbench-x86tsc-v7zstd hackbench-counter-v7zstd \
        instance-v7zstd instance-lost-v7zstd markers-v7zstd scenario-pinned-v7zstd scenario-barrier-v7zstd \
        scenario-overload-v7zstd scenario-forkexec-v7zstd symbols-stack-v6 barrier-pinned-v7zstd \
        barrier-pinned-record barrier-unpinned-v7zstd barrier-unpinned-record spin-pinned-record \
        spin-unpinned-v7zstd spin-unpinned-record spin-overload-v7zstd spin-overload-record
fi
for n in "$@"; do
    record "$n"
done
