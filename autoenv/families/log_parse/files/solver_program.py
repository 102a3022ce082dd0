import json, re
from datetime import datetime
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
LAYOUTS = {
    "TIMESTAMP LEVEL SERVICE[PID]: MESSAGE (took DURATIONms)":
        (r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})Z (DEBUG|INFO|WARN|ERROR) ([a-z]+)\[(\d+)\]: (.+) \(took (\d+)ms\)$", "%Y-%m-%dT%H:%M:%S", 0, 1, 2, 5),
    "[TIMESTAMP] LEVEL SERVICE pid=PID DURATIONms \"MESSAGE\"":
        (r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] (DEBUG|INFO|WARN|ERROR) ([a-z]+) pid=(\d+) (\d+)ms \"([^\"]*)\"$", "%Y-%m-%d %H:%M:%S", 0, 1, 2, 4),
}
regex, tfmt, it, il, isv, ims = LAYOUTS[P["layout"]]
pattern = re.compile(regex)
def ts(text):
    return datetime.strptime(text.rstrip("Z"), tfmt)
window = (ts(P["window"][0]), ts(P["window"][1])) if P["window"] else None
total = malformed = 0
by_level, target, durations = {}, {}, {}
with open(P["log"]) as fh:
    for line in fh.read().split("\n"):
        if not line.strip():
            continue
        m = pattern.match(line)
        if not m:
            malformed += 1
            continue
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
with open(P["out"], "w") as fh:
    json.dump(out, fh, indent=2, sort_keys=True)
print(json.dumps(out)[:300])
