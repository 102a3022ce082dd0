"""grpstat 1.4 in Python, byte for byte: what csv-stat level 6's reference solution and the scripted solver write to
/app/grpstat.py, with the numbers and names the C program was compiled with (the solver finds them by running it).

Its ``report(data) -> (stdout, status)`` is the family's own; ``chunks`` (C's fgets) and the command line
(``main``) are what every legacy replacement ends with (``autoenv.families.legacy_texts.MAIN``, appended on writing).
"""

import json
import math
import re
import struct
import sys

PARAMS: dict = {}  # filled in by the recipe (solver.embed)
LINE_MAX, NAME_LEN, MAX_GROUPS = PARAMS["line_max"], PARAMS["name_len"], PARAMS["max_groups"]
COLUMNS = [PARAMS["group"].encode(), PARAMS["value"].encode(), b"status"]
OK = PARAMS["ok"].encode()
MAX_FIELDS = 16
SPACE = b" \t\n\v\f\r"  # C's isspace
HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INFINITE = re.compile(rb"([+-]?)inf(?:inity)?", re.I)
NAN = re.compile(rb"[+-]?nan", re.I)


def chomp(chunk):
    """The line as C sees it: up to its first NUL, without the newline and one carriage return before it."""
    line = chunk.split(b"\0", 1)[0]
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


def strtod(text):
    """What C's strtod reads at the start of ``text`` (None: nothing); nan is read as None too (the tool's 'bad')."""
    text = text.lstrip(SPACE)
    found = HEX.match(text)
    if found:
        try:
            return float.fromhex(found.group().decode())
        except OverflowError:
            return -math.inf if text[:1] == b"-" else math.inf
    if NAN.match(text):
        return None
    found = INFINITE.match(text)
    if found:
        return -math.inf if found.group(1) == b"-" else math.inf
    found = DECIMAL.match(text)
    return float(found.group()) if found else None


def f32(x):
    """``x`` rounded to a C float (32 bits), as C converts a double to float."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def number(x):
    """printf's %12.2f of ``x``: a NaN (only inf - inf makes one, and x86's is negative) is -nan."""
    return b"%12s" % b"-nan" if x != x else b"%12.2f" % x


class Group:
    def __init__(self):
        self.count, self.sum, self.max = 0, 0.0, 0.0

    def add(self, v):
        if self.count == 0 or v > self.max:
            self.max = v
        self.count += 1
        self.sum = f32(self.sum + v)

    def line(self, name):
        mean = f32(self.sum / self.count)
        return name.ljust(NAME_LEN - 1) + b" %6d " % self.count + number(mean) + b" " + number(self.max) + b"\n"


def report(data):
    """(standard output, exit status) of grpstat for a file holding ``data``."""
    lines = chunks(data)
    header = chomp(next(lines, b"")).split(b",")[:MAX_FIELDS]
    if not all(name in header for name in COLUMNS):
        return b"", 4
    gi, vi, si = (header.index(name) for name in COLUMNS)
    need = max(gi, vi, si)
    rows = skipped = bad = 0
    total, table = Group(), {}  # name -> Group, in the order first seen
    for chunk in lines:
        line = chomp(chunk)
        if not line:
            continue
        rows += 1
        fields = line.split(b",")[:MAX_FIELDS]
        if len(fields) <= need:
            bad += 1
            continue
        if fields[si] != OK:
            skipped += 1
            continue
        d = strtod(fields[vi])
        if d is None:
            bad += 1
            continue
        v = f32(d)
        name = fields[gi][: NAME_LEN - 1]
        total.add(v)
        if name not in table:
            if len(table) == MAX_GROUPS:
                continue
            table[name] = Group()
        table[name].add(v)
    out = [b"grpstat 1.4 report\n", b"rows %d\nskipped %d\nbad %d\n" % (rows, skipped, bad)]
    out.append(COLUMNS[0].ljust(NAME_LEN - 1) + b" %6s %12s %12s\n" % (b"count", b"mean", b"max"))
    out += [table[name].line(name) for name in sorted(table)]
    if total.count:
        out.append(total.line(b"TOTAL"))
    else:
        out.append(b"TOTAL".ljust(NAME_LEN - 1) + b" %6d %12s %12s\n" % (0, b"-", b"-"))
    return b"".join(out), 0
