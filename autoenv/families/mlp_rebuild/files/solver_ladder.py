"""predict.py INPUT.csv OUTPUT.csv: the exported network (mlp-json-v2, EXPORT.md) run forward on every row."""
import csv, json, math, os, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
weights = P["weights"]
if weights is None:  # the folder's CURRENT names the export in use
    with open(os.path.join(P["model_dir"], "CURRENT"), encoding="utf-8") as fh:
        weights = os.path.join(P["model_dir"], fh.read().strip())
with open(weights, encoding="utf-8") as fh:
    model = json.load(fh)


def sigmoid(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


ACT = {"relu": lambda z: max(0.0, z), "tanh": math.tanh, "sigmoid": sigmoid}[model["activation"].lower()]
NORM = model.get("normalization") or {}


def features_of(row):
    """The network's input for a row, or None when a value is empty or not a number, or outside a step's domain
    (log1p of -1 or less: EXPORT.md)."""
    raw = {}
    for f in model["features"]:
        try:
            raw[f] = float(row[f])
        except (TypeError, ValueError):
            return None
        if math.isnan(raw[f]):
            return None
    for step in model.get("preprocess", []):
        for f in step["features"]:
            if step["op"] == "log1p" and raw[f] <= -1:
                return None
            raw[f] = math.log1p(raw[f]) if step["op"] == "log1p" else min(max(raw[f], step["min"]), step["max"])
    x = [raw[f] for f in model["features"]]
    if NORM:
        x = [(v - m) / math.sqrt(var + NORM["eps"]) for v, m, var in zip(x, NORM["mean"], NORM["var"])]
    return x


def probabilities(x):
    for n, layer in enumerate(model["layers"]):
        b = layer["bias"]
        if "weight" in layer:
            w = layer["weight"]
            z = [b[i] + sum(w[i][j] * x[j] for j in range(len(x))) for i in range(len(b))]
        else:
            k = layer["kernel"]
            z = [b[i] + sum(k[j][i] * x[j] for j in range(len(x))) for i in range(len(b))]
        x = [ACT(v) for v in z] if n < len(model["layers"]) - 1 else z
    top = max(x)
    e = [math.exp(v - top) for v in x]
    return [v / sum(e) for v in e]


def main(src, dst):
    with open(src, newline="", encoding="utf-8") as fh, open(dst, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id", "label", "confidence"])
        for row in csv.DictReader(fh):
            x = features_of(row)
            if x is None:
                writer.writerow([row["id"], "invalid", ""])
                continue
            p = probabilities(x)
            k = max(range(len(p)), key=p.__getitem__)
            writer.writerow([row["id"], model["classes"][k], f"{p[k]:.4f}"])


if __name__ == "__main__":
    main(*sys.argv[1:3])
