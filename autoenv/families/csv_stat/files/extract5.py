"""csv-stat level 5's extracts: the shipped one (plain) and the unseen ones (every corner the dictionary allows).

One text: the generator runs it for the shipped and the small unseen extracts, and the hidden tests hold it to
write the large extract at grading time (a 60,000-row file is not shipped in the task).
"""
import csv, io, random
from datetime import datetime, timedelta, timezone

OFFSETS = ["Z", "Z", "+00:00", "-08:00", "-05:00", "+05:30", "+09:00", "+01:00"]
MISSING = ["", "NA", "n/a", "N/A", "null", "NULL", "None", "-", "?", " na "]
NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity"]
NOTES = ["", "", "checked", "late, resent", 'said "fine"', "line one\nline two", "two\r\nlines, a comma", "ok"]


def stamp(rng, spec, corners):
    """A time stamp in the period (now and then, with corners, a few hours outside it, in another zone)."""
    start = datetime.fromisoformat(spec["start"])
    end = datetime.fromisoformat(spec["end"])
    span = (end - start).total_seconds()
    if corners and rng.random() < 0.06:  # near a boundary: inside or outside depending on the offset
        moment = rng.choice([start, end]) + timedelta(minutes=rng.randint(-600, 600))
    else:
        moment = start + timedelta(seconds=rng.uniform(0, span - 1))
    moment = moment.replace(microsecond=0)
    if not corners:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    zone = rng.choice(OFFSETS)
    if zone == "Z":
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    sign = 1 if zone[0] == "+" else -1
    delta = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    local = moment.astimezone(timezone(sign * delta))
    return local.isoformat()


def value_text(rng, spec, corners):
    x = round(rng.gauss(spec["mu"], spec["sd"]), 2)
    r = rng.random()
    if r < 0.05:
        return rng.choice(MISSING) if corners else rng.choice(["", "NA"])
    if r < 0.08:
        return f"{-abs(x):.2f}"
    if not corners:
        return f"{x:.2f}"
    if r < 0.11:
        return rng.choice(NOT_FINITE)
    if r < 0.14:
        return f"{abs(x) + 1000:,.2f}"  # a thousands separator (the field is quoted)
    if r < 0.18:
        return f"{x:.4e}"
    if r < 0.22:
        return f" +{x:.2f} " if x >= 0 else f" {x:.2f} "
    return f"{x:.2f}"


def make(seed, n, spec, corners, bom=False, crlf=False):
    """An extract of ``n`` records (bytes): ``spec`` names the columns, groups, status and period."""
    rng = random.Random(seed)
    group, value, ok = spec["group"], spec["value"], spec["ok"]
    columns = ["id", "ts", group, value, "status", "note"]
    if corners:
        columns.append("channel")
        rng.shuffle(columns)
    header = [rng.choice([c, c.upper(), c.title(), f" {c} "]) if corners else c for c in columns]
    rows, ids = [], []
    for i in range(n):
        if corners and ids and rng.random() < 0.08:
            rid = rng.choice(ids[-500:])  # a corrected record sent again: the last one counts
        else:
            rid = f"{spec['prefix']}{i:07d}"
            ids.append(rid)
        canonical, spellings = rng.choice(spec["names"] if corners else spec["names"][: spec["plain"]])
        name = rng.choice([canonical, canonical, *spellings]) if corners else rng.choice(spellings[:2] + [canonical])
        status = ok if rng.random() > 0.1 else rng.choice(spec["others"])
        if corners and status == ok:
            status = rng.choice([ok, ok, ok.upper(), f" {ok.title()} "])
        cells = {
            "id": rid,
            "ts": stamp(rng, spec, corners),
            group: name,
            value: value_text(rng, spec, corners),
            "status": status,
            "note": rng.choice(NOTES if corners else ["", "checked", "ok"]),
            "channel": rng.choice(["web", "batch", "manual"]),
        }
        rows.append([cells[c] for c in columns])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(row)
        if corners and rng.random() < 0.01:
            writer.writerow([""] * len(columns))  # a row without a single non-blank cell
    return (("\ufeff" if bom else "") + out.getvalue()).encode("utf-8")
