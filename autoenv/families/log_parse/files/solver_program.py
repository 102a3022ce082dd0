import json, re, sys
from datetime import datetime
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
LAYOUTS = {
    "TIMESTAMP LEVEL SERVICE[PID]: MESSAGE (took DURATIONms)":
        (r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})Z (DEBUG|INFO|WARN|ERROR) ([a-z]+)\[(\d+)\]: (.+) \(took (\d+)ms\)$", "%Y-%m-%dT%H:%M:%S", 0, 1, 2, 5),
    "[TIMESTAMP] LEVEL SERVICE pid=PID DURATIONms \"MESSAGE\"":
        (r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] (DEBUG|INFO|WARN|ERROR) ([a-z]+) pid=(\d+) (\d+)ms \"([^\"]*)\"$", "%Y-%m-%d %H:%M:%S", 0, 1, 2, 4),
}
FIELDS = {"levelname": "(DEBUG|INFO|WARN|ERROR)", "name": "([a-z]+)", "process": r"(\d+)", "duration": r"(\d+)"}


def from_config(path):
    """The layout a logging config declares: its printf-style format and datefmt, turned into a regex."""
    text = open(path, encoding="utf-8").read()
    form = re.search(r"^format\s*=\s*(.+?)\s*$", text, re.M).group(1)
    datefmt = re.search(r"^datefmt\s*=\s*(.+?)\s*$", text, re.M).group(1)
    date_re = "".join(
        {"%Y": r"\d{4}"}.get(tok, r"\d{2}") if tok.startswith("%") else re.escape(tok)
        for tok in re.findall(r"%[a-zA-Z]|[^%]+", datefmt)
    )
    parts = re.split(r"%\((\w+)\)[sd]", form)
    regex, order = "^", []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            regex += re.escape(part)
            continue
        order.append(part)
        follows = parts[i + 1] if i + 1 < len(parts) else ""
        if part == "asctime":
            regex += "(" + date_re + ")"
        elif part == "message":
            regex += '([^"]*)' if follows.startswith('"') else "(.+)"
        else:
            regex += FIELDS[part]
    regex += "$"
    return (regex, datefmt, order.index("asctime"), order.index("levelname"), order.index("name"),
            order.index("duration"))


if P.get("layout") in LAYOUTS:
    regex, tfmt, it, il, isv, ims = LAYOUTS[P["layout"]]
else:
    import glob
    config = sorted(glob.glob("/app/conf/*.ini") + glob.glob("/app/conf/*.conf") + glob.glob("/app/conf/*.cfg"))[0]
    regex, tfmt, it, il, isv, ims = from_config(config)
pattern = re.compile(regex)


def ts(text):
    return datetime.strptime(text.rstrip("Z") if not tfmt.endswith("Z") else text, tfmt)


window = (ts(P["window"][0]), ts(P["window"][1])) if P["window"] else None
log_path = sys.argv[1] if len(sys.argv) > 2 else P["log"]
out_path = sys.argv[2] if len(sys.argv) > 2 else P["out"]
total = malformed = 0
by_level, target, durations, seen = {}, {}, {}, set()
with open(log_path, encoding="utf-8", newline="") as fh:
    for line in fh.read().split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip():
            continue
        m = pattern.match(line)
        if not m:
            malformed += 1
            continue
        if P.get("retries"):
            if line in seen:
                continue
            seen.add(line)
        g = m.groups()
        when, level, service, ms = ts(g[it]), g[il], g[isv], int(g[ims])
        if window and not (window[0] <= when < window[1]):
            continue
        total += 1
        by_level[level] = by_level.get(level, 0) + 1
        if level == P["level"]:
            target[service] = target.get(service, 0) + 1
        durations.setdefault(service, []).append(ms)
means = {s: sum(v) / len(v) for s, v in durations.items()}
out = {"total": total, "malformed": malformed, "by_level": by_level, P["key"]: target,
       "slowest_service": min(means, key=lambda s: (-means[s], s)) if means else None,
       "max_ms": max((ms for v in durations.values() for ms in v), default=0)}
with open(out_path, "w") as fh:
    json.dump(out, fh, indent=2, sort_keys=True)
print(json.dumps(out)[:300])
