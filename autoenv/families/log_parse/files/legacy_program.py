"""logsum 2.3 in Python, byte for byte: what log-parse level 5's reference solution and the scripted solver write to
/app/logsum.py, with the three numbers the C program was compiled with (the solver finds them by running it).

Its ``report(data) -> (stdout, status)`` is the family's own; ``chunks`` (C's fgets) and the command line
(``main``) are what every legacy replacement ends with (``autoenv.families.legacy_texts.MAIN``, appended on writing).
"""

import json
import sys

PARAMS: dict = {}  # filled in by the recipe (solver.embed)
LINE_MAX, SVC_LEN, MAX_SVC = PARAMS["line_max"], PARAMS["svc_len"], PARAMS["max_svc"]
LEVELS = [b"DEBUG", b"INFO", b"WARN", b"ERROR"]
U32 = 2**32


def parse(record):
    """(level index, service name, duration) of a valid record, else None."""
    if record[:1] != b"[" or len(record) < 22 or record[20:22] != b"] ":
        return None
    rest = record[22:]
    level_token, space, rest = rest.partition(b" ")
    level = next((i for i, name in enumerate(LEVELS) if level_token.startswith(name)), None)
    if not space or level is None:
        return None
    name, space, rest = rest.partition(b" ")
    if not space or not name:
        return None
    if not rest.startswith(b"pid="):
        return None
    i = 4
    if not rest[i : i + 1].isdigit():
        return None
    while rest[i : i + 1].isdigit():
        i += 1
    if rest[i : i + 1] != b" ":
        return None
    i += 1
    if not rest[i : i + 1].isdigit():
        return None
    value = 0
    while rest[i : i + 1].isdigit():
        value = (value * 10 + rest[i] - 48) % U32
        i += 1
    if rest[i : i + 3] != b"ms ":
        return None
    return level, name[: SVC_LEN - 1], value


def report(data):
    """What the tool prints for ``data``, and its status (0)."""
    records = malformed = 0
    levels = [0, 0, 0, 0]
    table = {}  # name -> [count, total, max], in the order first seen
    for chunk in chunks(data):
        line = chunk.split(b"\0", 1)[0]
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            continue
        records += 1
        parsed = parse(line)
        if parsed is None:
            malformed += 1
            continue
        level, name, ms = parsed
        levels[level] += 1
        if name not in table:
            if len(table) == MAX_SVC:
                continue
            table[name] = [0, 0, 0]
        row = table[name]
        row[0] += 1
        row[1] = (row[1] + ms) % U32
        row[2] = max(row[2], ms)
    width = SVC_LEN - 1
    out = [b"logsum 2.3 report\n", b"records %d\n" % records, b"malformed %d\n" % malformed]
    out += [b"%-5s %d\n" % (name, count) for name, count in zip(LEVELS, levels)]
    out.append(b"service".ljust(width) + b" %6s %8s %8s\n" % (b"count", b"mean_ms", b"max_ms"))
    for name, (count, total, most) in sorted(table.items(), key=lambda item: (-item[1][0], item[0])):
        out.append(name.ljust(width) + b" %6d %8d %8d\n" % (count, total // count, most))
    return b"".join(out), 0
