import csv, json, math, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
model = json.load(open(P["weights"]))
acts = {"relu": lambda z: max(0.0, z), "tanh": math.tanh, "sigmoid": lambda z: 1 / (1 + math.exp(-z))}
act = acts[model["activation"]]

def probabilities(row):
    x = [float(row[f]) for f in model["features"]]
    norm = model.get("normalization")
    if norm:
        x = [(v - m) / s for v, m, s in zip(x, norm["mean"], norm["std"])]
    for i, layer in enumerate(model["layers"]):
        w, b = layer["weights"], layer["bias"]
        if P["out_in"]:
            z = [b[o] + sum(w[o][j] * x[j] for j in range(len(x))) for o in range(len(b))]
        else:
            z = [b[o] + sum(w[j][o] * x[j] for j in range(len(x))) for o in range(len(b))]
        x = [act(v) for v in z] if i < len(model["layers"]) - 1 else z
    m = max(x)
    e = [math.exp(v - m) for v in x]
    return [v / sum(e) for v in e]

def main(src, dst):
    with open(src, newline="") as fh, open(dst, "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id", "label", "confidence"])
        for row in csv.DictReader(fh):
            p = probabilities(row)
            k = max(range(len(p)), key=p.__getitem__)
            writer.writerow([row["id"], model["classes"][k], f"{p[k]:.4f}"])

if __name__ == "__main__":
    main(*sys.argv[1:3])
