#!/usr/bin/env python3
"""Writes the perf.data reader fuzzer's seeds (fuzz/seeds/read_perf) from
testdata/perf/sched-pipe.data: its attribute records, a tracing data section cut to its
event formats (no printk formats, ten cmdlines), its first 40 samples, a few COMM, FORK
and EXIT records, a LOST record on CPU 1 and a FINISHED_ROUND; once in pipe mode and
once in file mode (header, attribute section with ids, data, feature table with
TRACING_DATA and NRCPUS), so the fuzzer starts from both layouts in a few kilobytes."""
import struct
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
data = (root / "testdata/perf/sched-pipe.data").read_bytes()


def records():
    pos = 16
    while pos < len(data):
        kind, misc, size = struct.unpack_from("<IHH", data, pos)
        extra = 0
        if kind == 66:
            extra = (struct.unpack_from("<I", data, pos + 8)[0] + 7) // 8 * 8
        yield kind, data[pos:pos + size], data[pos + size:pos + size + extra]
        pos += size + extra


def small_tracing_data(td):
    """The tracing data with its printk formats dropped and ten cmdlines kept."""
    p = td.index(b"\0", 10) + 1 + 6
    for _ in range(2):
        p = td.index(b"\0", p) + 1
        p += 8 + struct.unpack_from("<Q", td, p)[0]
    p += 4  # no ftrace formats
    p = td.index(b"\0", p + 4) + 1
    count = struct.unpack_from("<I", td, p)[0]
    p += 4
    for _ in range(count):
        p += 8 + struct.unpack_from("<Q", td, p)[0]
    p += 4  # kallsyms (empty in perf's tracing data)
    formats_end = p
    p += 4 + struct.unpack_from("<I", td, p)[0]
    size = struct.unpack_from("<Q", td, p)[0]
    cmdlines = b"".join(line + b"\n" for line in td[p + 8:p + 8 + size].split(b"\n")[:10])
    return td[:formats_end] + struct.pack("<I", 0) + struct.pack("<Q", len(cmdlines)) + cmdlines


attrs, samples, tasks = [], [], []
tracing = b""
for kind, record, extra in records():
    if kind == 64:
        attrs.append(record)
    elif kind == 66:
        tracing = small_tracing_data(extra)
    elif kind == 9 and len(samples) < 40:
        samples.append(record)
    elif kind in (3, 4, 7) and sum(1 for t in tasks if t[0] == kind) < 3:
        tasks.append((kind, record))
# A LOST record of the first attribute's first id on CPU 1, at the last sample's time
# (sample_id: TID, TIME, CPU, IDENTIFIER).
first_id = struct.unpack_from("<Q", attrs[0], 8 + 128)[0]
last_time = struct.unpack_from("<Q", samples[-1], 8 + 24)[0]
lost = struct.pack("<IHHQQiiQIIQ", 2, 0, 56, first_id, 5, -1, -1, last_time, 1, 0, first_id)
round_end = struct.pack("<IHH", 68, 0, 8)
body = b"".join(r for _, r in tasks) + b"".join(samples) + lost + round_end

padded = tracing + b"\0" * (-len(tracing) % 8)
pipe = b"PERFILE2" + struct.pack("<Q", 16) + b"".join(attrs)
pipe += struct.pack("<IHHII", 66, 0, 16, len(tracing), 0) + padded + body

# File mode: the attributes (128 bytes each) with their id sections, then the data and
# the features.
attr_entries, ids = b"", b""
attrs_at = 104
ids_at = attrs_at + len(attrs) * (128 + 16)
for record in attrs:
    attr, attr_ids = record[8:8 + 128], record[8 + 128:]
    attr_entries += attr + struct.pack("<QQ", ids_at + len(ids), len(attr_ids))
    ids += attr_ids
data_at = ids_at + len(ids)
table_at = data_at + len(body)
features_at = table_at + 32
nrcpus = struct.pack("<II", 2, 2)
header = b"PERFILE2" + struct.pack("<QQQQQQQQ", 104, 128 + 16, attrs_at, len(attr_entries), data_at, len(body), 0, 0)
header += struct.pack("<QQQQ", (1 << 1) | (1 << 7), 0, 0, 0)
table = struct.pack("<QQQQ", features_at, len(tracing), features_at + len(tracing), len(nrcpus))
file_mode = header + attr_entries + ids + body + table + tracing + nrcpus

out = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "fuzz/seeds/read_perf"
out.mkdir(parents=True, exist_ok=True)
(out / "pipe.data").write_bytes(pipe)
(out / "file.data").write_bytes(file_mode)
print(f"pipe.data {len(pipe)} bytes, file.data {len(file_mode)} bytes")
