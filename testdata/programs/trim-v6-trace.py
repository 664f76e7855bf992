#!/usr/bin/env python3
"""Makes a small copy of a version-6 trace.dat file for the fixture corpus.

Real trace.dat files carry the recording machine's whole /proc/kallsyms (1-3 MB) although
their events refer to a handful of kernel addresses. This copy keeps every byte of the
original except:

- kallsyms: only the symbols that can matter when an address in the trace is looked up
  the way libtraceevent does it (the symbols at the greatest address at or below it and
  at the smallest address above it). Candidate addresses are all long-sized words of the
  per-CPU data that fall inside the symbol table's range, so nothing that an event field
  holds is missed (a few unrelated symbols may be kept). At most 8 symbols sharing one
  address are kept (a table whose addresses were hidden, all 0, keeps 8 lines).
- event formats (not ftrace's own) of events that do not occur in the data are dropped,
  and systems left without formats with them;
- with --max-pages N: each CPU's data is cut to its first N pages.

Everything else (headers, formats, printk formats, cmdlines, options, the trace clock,
pages) is copied as is; the per-CPU data offsets are rewritten for the new layout. Files with buffer instances
are refused (their options hold offsets this script does not move).

usage: trim-v6-trace.py IN.dat OUT.dat [--max-pages N]
"""

import argparse
import bisect
import struct
import sys

MAGIC = b"\x17\x08\x44tracing"
GROUP_LIMIT = 8


class Reader:
    def __init__(self, data, endian):
        self.data = data
        self.pos = 0
        self.endian = endian

    def take(self, n):
        if self.pos + n > len(self.data):
            sys.exit(f"truncated input at byte {self.pos}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def uint(self, size):
        return int.from_bytes(self.take(size), "little" if self.endian == 0 else "big")

    def cstr(self):
        end = self.data.index(b"\0", self.pos)
        text = self.data[self.pos:end]
        self.pos = end + 1
        return text


def parse_kallsyms_line(line):
    """(address, registered) the way libtraceevent reads a line; None if unreadable."""
    parts = line.split()
    if len(parts) < 3:
        return None
    try:
        address = int(parts[0][:16], 16)
    except ValueError:
        return None
    kind, name = parts[1][:1], parts[2]
    registered = not name.startswith(b"$") and kind not in (b"a", b"A")
    return address, registered


def keep_lines(kallsyms, candidates):
    lines = kallsyms.split(b"\n")
    entries = []  # (address, line index) of registered symbols
    for index, line in enumerate(lines):
        parsed = parse_kallsyms_line(line)
        if parsed is None:
            break  # libtraceevent stops at the first line it cannot read
        if parsed[1]:
            entries.append((parsed[0], index))
    if not entries:
        return kallsyms
    entries.sort()
    addresses = [a for a, _ in entries]
    by_address = {}
    for address, index in entries:
        by_address.setdefault(address, []).append(index)
    low, high = addresses[0], addresses[-1]
    wanted = set()
    for candidate in candidates:
        if candidate < low or candidate > high + (1 << 24):
            continue
        at = bisect.bisect_right(addresses, candidate)
        for neighbour in (at - 1, at):
            if 0 <= neighbour < len(addresses):
                wanted.add(addresses[neighbour])
    kept = sorted(i for a in wanted for i in sorted(by_address[a])[:GROUP_LIMIT])
    return b"".join(lines[i] + b"\n" for i in kept)


def event_ids(pages, page_size, long_size, endian):
    """The `common_type` of every record in ring-buffer pages (u16 at the payload's start)."""
    order = "<" if endian == 0 else ">"
    ids = set()
    for start in range(0, len(pages), page_size):
        page = pages[start:start + page_size]
        header = 8 + long_size
        commit = int.from_bytes(page[8:header], "little" if endian == 0 else "big")
        end = min(header + (commit & ((1 << 27) - 1)), len(page))
        pos = header
        while pos + 4 <= end:
            word = struct.unpack_from(order + "I", page, pos)[0]
            type_len = word & 31 if endian == 0 else word >> 27
            pos += 4
            if type_len == 0:
                length = struct.unpack_from(order + "I", page, pos)[0]
                payload, pos = pos + 4, pos + length
            elif type_len <= 28:
                payload, pos = pos, pos + 4 * type_len
            elif type_len == 29:
                if pos + 4 > end:
                    break
                pos += struct.unpack_from(order + "I", page, pos)[0]
                continue
            else:
                pos += 4
                continue
            if payload + 2 <= end:
                ids.add(struct.unpack_from(order + "H", page, payload)[0])
    return ids


def commit_size(header_page):
    """The size of the page header's `commit` field: the kernel's long size."""
    for line in header_page.split(b"\n"):
        if b" commit;" in line and b"size:" in line:
            return int(line.split(b"size:")[1].split(b";")[0])
    return None


def format_id(text):
    for line in text.split(b"\n"):
        if line.startswith(b"ID:"):
            return int(line[3:])
    return None


def words(data, size, endian):
    order = "<" if endian == 0 else ">"
    code = "I" if size == 4 else "Q"
    for offset in range(0, len(data) - size + 1, 4):
        yield struct.unpack_from(order + code, data, offset)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--max-pages", type=int, default=None)
    args = parser.parse_args()
    data = open(args.input, "rb").read()
    if not data.startswith(MAGIC):
        sys.exit("not a trace.dat file")
    r = Reader(data, 0)
    r.pos = len(MAGIC)
    if r.cstr() != b"6":
        sys.exit("only version 6 files are handled")
    endian = r.uint(1)
    r.endian = endian
    long_size = r.uint(1)
    page_size = r.uint(4)
    headers = {}
    for label in (b"header_page", b"header_event"):
        if r.cstr() != label:
            sys.exit(f"expected {label!r}")
        headers[label] = r.take(r.uint(8))
    kernel_long_size = commit_size(headers[b"header_page"]) or long_size
    for _ in range(r.uint(4)):  # ftrace formats
        r.take(r.uint(8))
    systems_at = r.pos
    systems = []
    for _ in range(r.uint(4)):  # event systems
        name = r.cstr()
        systems.append((name, [r.take(r.uint(8)) for _ in range(r.uint(4))]))
    kallsyms_at = r.pos
    kallsyms = r.take(r.uint(4))
    after_kallsyms = r.pos
    r.take(r.uint(4))  # printk formats
    r.take(r.uint(8))  # cmdlines
    cpus = r.uint(4)
    label = r.take(10)
    if label == b"options  \0":
        while True:
            option = r.uint(2)
            if option == 0:
                break
            if option == 3:
                sys.exit("files with buffer instances are not handled")
            r.take(r.uint(4))
        label = r.take(10)
    if label != b"flyrecord\0":
        sys.exit(f"expected flyrecord, found {label!r}")
    table_at = r.pos
    cpu_data = []
    offsets = []
    for _ in range(cpus):
        offset, size = r.uint(8), r.uint(8)
        offsets.append(offset)
        if args.max_pages is not None:
            size = min(size, args.max_pages * page_size)
        cpu_data.append(data[offset:offset + size])
    candidates = set()
    for chunk in cpu_data:
        candidates.update(words(chunk, long_size, endian))
    new_kallsyms = keep_lines(kallsyms, candidates)
    order = "<" if endian == 0 else ">"
    used = set()
    for chunk in cpu_data:
        used |= event_ids(chunk, page_size, kernel_long_size, endian)
    head = bytearray(data[:systems_at])
    kept_systems = [(n, [f for f in fs if format_id(f) in used]) for n, fs in systems]
    kept_systems = [(n, fs) for n, fs in kept_systems if fs]
    head += struct.pack(order + "I", len(kept_systems))
    for name, formats in kept_systems:
        head += name + b"\0" + struct.pack(order + "I", len(formats))
        for text in formats:
            head += struct.pack(order + "Q", len(text)) + text
    head += struct.pack(order + "I", len(new_kallsyms)) + new_kallsyms
    head += data[after_kallsyms:table_at]
    table_size = 16 * cpus
    # What follows the table up to the first page: the trace clock (u64 size, text).
    table_end = table_at + table_size
    trailer = data[table_end:min([o for o in offsets if o >= table_end] or [table_end])]
    trailer = trailer[:8 + int.from_bytes(trailer[:8], "little" if endian == 0 else "big")] if len(trailer) >= 8 else b""
    table_size += len(trailer)
    offset = -(-(len(head) + table_size) // page_size) * page_size
    table = bytearray()
    body = bytearray()
    for chunk in cpu_data:
        table += struct.pack(order + "QQ", offset, len(chunk))
        body += chunk
        offset += len(chunk)
    table += trailer
    padding = b"\0" * (-(len(head) + table_size) % page_size)
    with open(args.output, "wb") as out:
        out.write(head + table + padding + body)
    print(
        f"{args.output}: {len(head) + table_size + len(padding) + len(body)} bytes "
        f"(kallsyms {len(kallsyms)} -> {len(new_kallsyms)} bytes)"
    )


if __name__ == "__main__":
    main()
