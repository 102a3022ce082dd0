"""csv-stat level 5's reference program: ``python3 groupstat.py IN OUT`` by every rule of the data dictionary.

One text serves three: the task's solution (solve.sh writes it as /app/groupstat.py), the hidden tests (their
reference for the extracts they generate) and the scripted solver's recipe (which, as an engineer who knows the
house's exports, writes the same program; without ``ok`` in PARAMS it reads the status and the period from
/app/data/DICTIONARY.md). One pass, a dict per id: linear in the rows.
"""
import csv, json, math, re, statistics, sys, unicodedata
from datetime import datetime, timezone
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = dict(PARAMS)
if "ok" not in P:  # the recipe's program: the status and the period are in the data dictionary
    text = open("/app/data/DICTIONARY.md", encoding="utf-8").read()
    P["ok"] = re.search(r"status is `([^`]+)`", text).group(1)
    P["start"], P["end"] = re.search(r"from `([^`]+)` \(inclusive\) to `([^`]+)` \(exclusive\)", text).groups()
MISSING = {"", "na", "n/a", "null", "none", "-", "?"}
START = datetime.fromisoformat(P["start"]).astimezone(timezone.utc)
END = datetime.fromisoformat(P["end"]).astimezone(timezone.utc)


def number(text):
    t = text.strip().replace(",", "")
    if t.lower() in MISSING:
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def key(name):
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def in_period(stamp):
    try:
        moment = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return START <= moment.astimezone(timezone.utc) < END


# STAT: def stat(xs), the statistics of files/solver_program.py (level5.reference_text puts it here)


def summary(path):
    """The summary's lines for the extract at ``path``."""
    last = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        names = [n.strip().casefold() for n in next(reader, [])]
        if names:
            col = {c: names.index(c) for c in ("id", "ts", "status", P["group"].casefold(), P["value"].casefold())}
            width = len(names)
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                row += [""] * (width - len(row))
                rid = row[col["id"]].strip()
                last[rid] = (
                    row[col["ts"]], row[col["status"]], row[col[P["group"].casefold()]], row[col[P["value"].casefold()]]
                )
    groups = {}
    for stamp, status, name, raw in last.values():
        x = number(raw)
        if status.strip().casefold() != P["ok"].casefold() or x is None or x < 0 or not in_period(stamp):
            continue
        groups.setdefault(key(name), []).append(x)
    everything = [x for xs in groups.values() for x in xs]
    lines = [P["header"]]
    lines += [f"{name},{len(groups[name])},{stat(groups[name]):.3f}" for name in sorted(groups)]
    lines.append(f"ALL,{len(everything)},{stat(everything):.3f}" if everything else "ALL,0,")
    return lines


if __name__ == "__main__":
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write("\n".join(summary(sys.argv[1])) + "\n")
