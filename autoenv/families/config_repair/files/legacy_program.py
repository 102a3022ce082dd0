"""cfgnorm 1.4 in Python, byte for byte: what config-repair level 5's reference solution and the scripted solver
write to /app/cfgnorm.py, with the three numbers the C program was compiled with (the solver finds them by running
it).

Its ``report(data) -> (stdout, status)`` is the family's own; ``chunks`` (C's fgets) and the command line
(``main``) are what every legacy replacement ends with (``autoenv.families.legacy_texts.MAIN``, appended on writing).
"""

import json
import re
import sys

PARAMS: dict = {}  # filled in by the recipe (solver.embed)
LINE_MAX, NAME_LEN, MAX_KEYS = PARAMS["line_max"], PARAMS["name_len"], PARAMS["max_keys"]
MAX_ENTRIES = 128
BLANKS = b" \t"
DIGITS = re.compile(rb"[+-]?[0-9]+")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def shown(value):
    """A value as the tool prints it: unquoted, an int of 32 bits, true/false, or as it is."""
    if len(value) >= 2 and value[:1] == b'"' and value[-1:] == b'"':
        return value[1:-1]
    if DIGITS.fullmatch(value):
        number = min(max(int(value), LONG_MIN), LONG_MAX)  # strtol saturates at a 64-bit long
        return b"%d" % ((number + 2**31) % 2**32 - 2**31)  # the cast to int keeps the low 32 bits
    folded = value.lower()  # ASCII only, as strcasecmp in the C locale
    if folded in (b"yes", b"on", b"true"):
        return b"true"
    if folded in (b"no", b"off", b"false"):
        return b"false"
    return value


def load(data):
    """The tool's report of ``data`` and its error count."""
    out = []
    errors = 0
    table = {}  # (section, key) -> value, in the order first set
    current = b""
    for number, chunk in enumerate(chunks(data), 1):

        def complain(message):
            nonlocal errors
            out.append(b"cfgnorm: line %d: %s\n" % (number, message))
            errors += 1

        line = chunk.split(b"\0", 1)[0]
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        line = line.lstrip(BLANKS)
        if not line or line[:1] in (b"#", b";"):
            continue
        if line[:1] == b"[":
            close = line.find(b"]")
            if close < 0:
                complain(b"unterminated section header")
            else:
                current = line[1:close][: NAME_LEN - 1]
            continue
        key, equals, value = line.partition(b"=")
        if not equals:
            complain(b"missing '='")
            continue
        key = key.rstrip(BLANKS)
        if not key:
            complain(b"empty key")
            continue
        key = key[: NAME_LEN - 1].lower()
        value = value.lstrip(BLANKS).rstrip(b" ")
        if (current, key) in table:
            table[(current, key)] = value
        elif sum(section == current for section, _ in table) >= MAX_KEYS:
            complain(b"section [%s] is full, '%s' dropped" % (current, key))
        elif len(table) == MAX_ENTRIES:
            complain(b"too many settings, '%s' dropped" % key)
        else:
            table[(current, key)] = value
    out += [b"%s.%s=%s\n" % (section, key, shown(value)) for (section, key), value in table.items()]
    out.append(b"; %d settings, %d errors\n" % (len(table), errors))
    return b"".join(out), errors


def report(data):
    """What the tool prints for ``data``, and its status: the number of errors, as main's int reaches the shell."""
    out, errors = load(data)
    return out, errors % 256
