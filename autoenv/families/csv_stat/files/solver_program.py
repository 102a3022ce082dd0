import csv, json, math, statistics, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS

def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None

def stat(xs):
    kind = P["stat"]
    if kind == "mean":
        return sum(xs) / len(xs)
    if kind == "median":
        return statistics.median(xs)
    if kind == "std":
        mu = sum(xs) / len(xs)
        return math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs))
    if kind == "p90":
        return sorted(xs)[math.ceil(0.9 * len(xs)) - 1]
    if kind == "range":
        return max(xs) - min(xs)
    if kind == "sum":
        return sum(xs)
    raise SystemExit("unknown statistic " + kind)

data_path = sys.argv[1] if len(sys.argv) > 2 else P["data"]
out_path = sys.argv[2] if len(sys.argv) > 2 else P["out"]
groups = {}
with open(data_path, newline="", encoding="utf-8") as fh:
    for row in csv.DictReader(fh):
        if P.get("naive"):  # trust the data as it is: no validity rules, no name normalisation
            groups.setdefault(row[P["group"]], []).append(float(row[P["value"]]))
            continue
        x = number(row[P["value"]])
        if row[P["status_col"]] != P["ok"] or x is None or (P["no_negative"] and x < 0):
            continue
        groups.setdefault(row[P["group"]].strip().lower(), []).append(x)
allx = [x for xs in groups.values() for x in xs]
with open(out_path, "w", encoding="utf-8") as out:
    out.write(P["header"] + "\n")
    for name in sorted(groups):
        out.write(f"{name},{len(groups[name])},{stat(groups[name]):.3f}\n")
    out.write(f"ALL,{len(allx)},{stat(allx):.3f}\n")
print("groups:", sorted(groups), "valid rows:", len(allx))
