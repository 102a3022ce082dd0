"""report.awk in Python, byte for byte (GNU Awk 5.2.1 under LC_ALL=C): the reference solution of
bench/awk_port_task.py's tasks, and what computes their expected reports (checked against gawk where it is
installed: ``bench/awk_port_task.py --check``)."""

import re
import sys

BLANKS = re.compile(rb"[ \t\n]+")
# strtod's longest decimal prefix after C isspace (gawk: a value starting with a letter, or 0x, is 0)
NUMBER = re.compile(rb"[ \t\n\r\f\v]*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
SPACE = b" \t\n\r\f\v"
SLOW_MS = 750


def to_number(field: bytes) -> float:
    """`field + 0`."""
    body = field.lstrip(SPACE)
    if re.match(rb"[+-]?0[xX]", body):
        return 0.0
    if len(body.rstrip(SPACE)) == 4 and body[:1] in b"+-" and body[1:4].lower() in (b"inf", b"nan"):
        return float(body[:4])
    found = NUMBER.match(field)
    return float(found.group(1)) if found else 0.0


def looks_numeric(field: bytes) -> bool:
    """gawk's strnum: the whole field (blanks around it allowed) is a decimal number."""
    body = field.strip(SPACE)
    if not body or re.match(rb"[+-]?0[xX]", body):
        return False
    if len(body) == 4 and body[:1] in b"+-" and body[1:].lower() in (b"inf", b"nan"):
        return True
    return re.fullmatch(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", body) is not None


def to_string(value: float) -> bytes:
    """A number as gawk turns it into a string (CONVFMT and OFMT are both %.6g): integral values as integers."""
    if value == int(value) and -(2**63) < value < 2**63:
        return b"%d" % int(value)
    if value == int(value):
        return b"%.0f" % value
    return b"%.6g" % value


def report(data: bytes) -> bytes:
    records = data.split(b"\n")
    if records and records[-1] == b"":
        records.pop()
    hits, total, worst, errors = {}, {}, {}, {}
    all_ms, all_n, cut, slow, longest = 0.0, 0, 0, [], b""
    for record in records:
        stripped = record.strip(b" \t\n")
        fields = BLANKS.split(stripped) if stripped else []
        if record.startswith(b"#") or not fields:
            continue
        if len(fields) < 5:
            cut += 1
            continue
        svc = fields[1].lower()
        ms = to_number(fields[3])
        hits[svc] = hits.get(svc, 0) + 1
        total[svc] = total.get(svc, 0.0) + ms
        worst.setdefault(svc, None)
        if ms > (worst[svc] or 0.0):
            worst[svc] = ms
        status = fields[2]
        bad = to_number(status) >= 500 if looks_numeric(status) else status >= b"500"
        if bad:
            errors[svc] = errors.get(svc, 0) + 1
        all_ms += ms
        all_n += 1
        if ms > SLOW_MS:
            slow.append(b" ".join([fields[0][:13], *fields[1:]]))
        who = fields[4][5:] if fields[4].startswith(b"user=") else fields[4]
        if len(who) > len(longest):
            longest = who
    out = [b"%-10s %5s %9s %7s %6s\n" % (b"service", b"hits", b"mean_ms", b"worst", b"5xx")]
    for svc in sorted(hits):
        shown = b"" if worst[svc] is None else to_string(worst[svc])
        out.append(b"%-10s %5d %9.2f %7s %6d\n" % (svc, hits[svc], total[svc] / hits[svc], shown, errors.get(svc, 0)))
    mean = to_string(all_ms / all_n) if all_n else b"n/a"
    out.append(b"requests: %d mean: %s\n" % (all_n, mean))
    out.append(b"slow (>%d ms): %d\n" % (SLOW_MS, len(slow)))
    out += [b"  " + line + b"\n" for line in slow]
    out.append(b"longest user: %s (%d bytes)\n" % (longest, len(longest)))
    out.append(b"cut lines: %d\n" % cut)
    return b"".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as fh:
        sys.stdout.buffer.write(report(fh.read()))
