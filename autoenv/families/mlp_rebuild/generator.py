"""Model-rebuild family: re-implement a small neural network's forward pass from its weights.

Seed failure: the base agent was given exported weights and tried to install
a deep-learning framework (no network), or transposed the weight matrices and
never noticed. The template exports a random MLP (layer sizes, activation,
weight layout, input normalisation, feature order all vary) to JSON and asks
for a standard-library ``predict.py``; the verifier also runs that program on
inputs the agent never saw, so hard-coding the shipped predictions fails.

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) leave the format to the exporter's EXPORT.md, add unseen files with
corners and a preprocessing pipeline beside an older export; level 1 is the task above, unchanged.
"""

from __future__ import annotations

import json
import math
import random
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.levels import load_ladder
from autoenv.families.mlp_rebuild import ladder
from autoenv.families.solver import fill_program, program_part

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "mlp-rebuild"
DESCRIPTION = "re-implement a small neural network's forward pass from exported weights"
KEYWORDS = ("weights", "neural", "mlp", "forward pass", "rebuild", "model", "inference", "torch", "pytorch")
CATEGORY = "machine-learning"
TAGS = ["python", "neural-network", "inference"]

FEATURES = ["sepal_len", "sepal_wid", "petal_len", "petal_wid", "mass_g", "temp_c", "age_days", "ph", "density", "hue"]
CLASSES = [
    ["setosa", "versicolor", "virginica"],
    ["low", "high"],
    ["red", "green", "blue", "amber"],
    ["ok", "warn", "fail"],
]

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file

ACTIVATIONS = {
    "relu": ("`relu(z) = max(0, z)`", lambda z: max(0.0, z)),
    "tanh": ("`tanh(z)` (hyperbolic tangent)", math.tanh),
    "sigmoid": ("`sigmoid(z) = 1 / (1 + exp(-z))`", lambda z: 1 / (1 + math.exp(-z))),
}


def forward(model: dict[str, Any], row: dict[str, float]) -> list[float]:
    x = [row[f] for f in model["features"]]
    if "normalization" in model:
        x = [(v - m) / s for v, m, s in zip(x, model["normalization"]["mean"], model["normalization"]["std"])]
    act = ACTIVATIONS[model["activation"]][1]
    layers = model["layers"]
    for i, layer in enumerate(layers):
        w, b = layer["weights"], layer["bias"]
        if model["layout"] == "out_in":
            z = [sum(w[o][j] * x[j] for j in range(len(x))) + b[o] for o in range(len(b))]
        else:
            z = [sum(w[j][o] * x[j] for j in range(len(x))) + b[o] for o in range(len(b))]
        x = [act(v) for v in z] if i < len(layers) - 1 else z
    m = max(x)
    e = [math.exp(v - m) for v in x]
    return [v / sum(e) for v in e]


def _rows(
    rng: random.Random, features: list[str], stats: dict[str, tuple[float, float]], n: int, prefix: str
) -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i + 1:03d}", **{f: round(rng.gauss(*stats[f]), 3) for f in features}} for i in range(n)]


def forward_pass() -> str:
    """``probabilities(row)``, the MLP's forward pass, as the scripted solver's ``files/solver_program.py`` writes it:
    one text for the solver and the reference solution. The solver reads the layout from the instruction (``P``),
    the reference from the weights file (``model``); the activation is ``act`` in one and ``ACT`` in the other."""
    head = program_part(__file__, "def probabilities(row):\n", '        if P["out_in"]:\n')
    layers = program_part(__file__, "            z = [b[o] + sum(w[o][j]", "        x = [act(v)")
    tail = program_part(__file__, "    m = max(x)\n", "\ndef main(src, dst):\n")
    return (
        head
        + '        if model["layout"] == "out_in":\n'
        + layers
        + '        x = [ACT(v) for v in z] if i < len(model["layers"]) - 1 else z\n'
        + tail
    )


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """An mlp-rebuild task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 2:
        return _above_level_one(case, rng, level)
    n_in = rng.randint(3, 6)
    features = rng.sample(FEATURES, n_in)
    classes = rng.choice(CLASSES)
    activation = rng.choice(sorted(ACTIVATIONS))
    layout = rng.choice(["out_in", "in_out"])
    hidden = [rng.randint(4, 8) for _ in range(rng.randint(1, 2))]
    normalise = rng.random() < 0.6
    stats = {f: (rng.uniform(-5, 50), rng.uniform(0.5, 8)) for f in features}
    csv_order = features[:]
    if rng.random() < 0.5:
        rng.shuffle(csv_order)
    for _ in range(40):
        sizes = [n_in] + hidden + [len(classes)]
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            scale = 1.6 / math.sqrt(a)
            w_out_in = [[round(rng.gauss(0, scale), 4) for _ in range(a)] for _ in range(b)]
            weights = w_out_in if layout == "out_in" else [list(col) for col in zip(*w_out_in)]
            layers.append({"weights": weights, "bias": [round(rng.gauss(0, 0.3), 4) for _ in range(b)]})
        model: dict[str, Any] = {
            "format": "mlp-json-v1",
            "features": features,
            "classes": classes,
            "activation": activation,
            "layout": layout,
            "layers": layers,
        }
        if normalise:
            model["normalization"] = {
                "mean": [round(stats[f][0], 3) for f in features],
                "std": [round(stats[f][1], 3) for f in features],
            }
        if not normalise:  # raw inputs: keep the scales sane for the network
            stats = {f: (rng.uniform(-1, 1), rng.uniform(0.5, 1.5)) for f in features}
        shipped = _rows(rng, features, stats, rng.randint(25, 40), "s")
        hidden_rows = _rows(rng, features, stats, 30, "h")
        probs = [forward(model, r) for r in shipped + hidden_rows]
        labels = [max(range(len(p)), key=p.__getitem__) for p in probs]
        margins = [sorted(p)[-1] - sorted(p)[-2] for p in probs]
        if len(set(labels)) >= 2 and min(margins) > 0.01:
            break

    def csv_text(rows: list[dict[str, Any]]) -> str:
        return (
            ",".join(["id"] + csv_order)
            + "\n"
            + "".join(",".join([r["id"]] + [f"{r[f]}" for f in csv_order]) + "\n" for r in rows)
        )

    def expected(rows: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
        out = []
        for r in rows:
            p = forward(model, r)
            k = max(range(len(p)), key=p.__getitem__)
            out.append((r["id"], classes[k], round(p[k], 6)))
        return out

    weights_json = json.dumps(model, indent=1)
    act_text = ACTIVATIONS[activation][0]
    layout_text = (
        "`weights[i][j]` is the weight from input `j` to unit `i` (shape: units x inputs)"
        if layout == "out_in"
        else "`weights[j][i]` is the weight from input `j` to unit `i` (shape: inputs x units)"
    )
    norm_text = (
        "- first normalise the inputs: `x[k] = (x[k] - normalization.mean[k]) / normalization.std[k]`;\n"
        if normalise
        else ""
    )
    instruction = textwrap.dedent(f"""\
        # Rebuild the classifier from its weights

        A small neural network was trained elsewhere and exported to
        `/app/model/weights.json`. The framework it was trained with is not
        available here (and there is no network), so re-implement its forward
        pass in pure Python (standard library only).

        The JSON holds `features` (the input order the network expects), `classes`
        (class names, in output order), `activation`, `layers` (each with
        `weights` and `bias`){" and `normalization`" if normalise else ""}. The network computes, for one input row:

        {norm_text}- `x` is the vector of feature values in the order of `features` (the CSV
          columns may be in a different order: match them by name);
        - every layer computes `z[i] = bias[i] + sum_j W(i, j) * x[j]` where {layout_text};
        - every layer except the last applies {act_text} to each `z[i]`; the last
          layer's `z` are the logits;
        - the class probabilities are the softmax of the logits; the predicted class
          is the one with the highest probability.

        Write `/app/predict.py` so that

        ```
        python3 /app/predict.py INPUT.csv OUTPUT.csv
        ```

        reads a CSV file with a header row containing `id` and every feature, and
        writes `OUTPUT.csv` with the header `id,label,confidence` and one line per
        input row (same order): the row's `id`, the predicted class name, and its
        probability with 4 decimal places.

        Then run it on `/app/data/inputs.csv` to produce `/app/predictions.csv`.
        Confidences are checked to within 0.001. Do not modify `/app/model/` or
        `/app/data/`.
        """)
    exp_shipped, exp_hidden = expected(shipped), expected(hidden_rows)
    tests = textwrap.dedent(f'''\
        import csv
        import hashlib
        import io
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        WEIGHTS = Path("/app/model/weights.json")
        WEIGHTS_SHA256 = "{sha256_text(weights_json)}"
        HIDDEN = Path(__file__).with_name("unseen_inputs.csv")
        # (id, label, confidence) for the shipped and the unseen inputs
        EXPECTED_SHIPPED = {exp_shipped!r}
        EXPECTED_UNSEEN = {exp_hidden!r}


        def read(text):
            rows = list(csv.reader(io.StringIO(text, newline="")))
            assert rows and rows[0] == ["id", "label", "confidence"], rows[:1]
            return rows[1:]


        def check(rows, expected):
            assert len(rows) == len(expected)
            for got, (rid, label, conf) in zip(rows, expected):
                assert got[0] == rid and got[1] == label, (got, rid, label)
                assert len(got[2].split(".")[-1]) == 4, got
                assert float(got[2]) == pytest.approx(conf, abs=1e-3), got


        def test_weights_unchanged():
            assert hashlib.sha256(WEIGHTS.read_bytes()).hexdigest() == WEIGHTS_SHA256


        def test_shipped_predictions():
            assert Path("/app/predictions.csv").exists(), "missing /app/predictions.csv"
            check(read(Path("/app/predictions.csv").read_text()), EXPECTED_SHIPPED)


        def test_predict_on_unseen_inputs():
            # the inputs alone, in a folder of their own: the program runs as nobody, away from these tests
            work = agent_folder({{"unseen.csv": HIDDEN}}, writable=True)
            run = run_agent(["python3", "/app/predict.py", work / "unseen.csv", work / "out.csv"], text=True, timeout=60)
            assert run.returncode == 0, run.stderr
            check(read(read_agent_file(work / "out.csv")), EXPECTED_UNSEEN)
        ''')  # noqa: E501
    solution = solve_sh(
        textwrap.dedent('''\
        cat > /app/predict.py <<'PY'
        """Forward pass of the exported MLP (standard library only)."""
        import csv, json, math, sys

        model = json.load(open("/app/model/weights.json"))
        ACT = {"relu": lambda z: max(0.0, z), "tanh": math.tanh, "sigmoid": lambda z: 1 / (1 + math.exp(-z))}[model["activation"]]

        ''')  # noqa: E501
        + forward_pass()
        + "\n"
        + program_part(__file__, "def main(src, dst):\n")
        + textwrap.dedent("""\
        PY
        python3 /app/predict.py /app/data/inputs.csv /app/predictions.csv
        head -n 5 /app/predictions.csv
        """)
    )
    name = task_name("mlp-rebuild", rng, f"{activation}-{layout.replace('_', '')}")
    app = {"model/weights.json": weights_json, "data/inputs.csv": csv_text(shipped)}
    unseen = {"unseen_inputs.csv": csv_text(hidden_rows)}
    files = task_files(case, NAME, CATEGORY, [*TAGS, activation], instruction, solution, tests, app=app, hidden=unseen)
    probe = exp_shipped[0]
    params = {
        "activation": activation,
        "layout": layout,
        "sizes": [n_in] + hidden + [len(classes)],
        "normalise": normalise,
        "shuffled_columns": csv_order != features,
        "leak_hint": f"confidence {probe[2]!r} for {probe[0]}",
        "stale_output": None,
        "output_path": "/app/predictions.csv",
    }
    return TaskDraft(name=name, family="mlp-rebuild", files=files, params=params)


def _above_level_one(case: SeedCase, rng: random.Random, rung: int) -> TaskDraft:
    """Levels 2-4 (:mod:`.ladder`): the exporter's own format, found in EXPORT.md; corners; a pipeline."""
    features = rng.sample(FEATURES, rng.randint(3, 6))
    classes = rng.choice(CLASSES)
    sizes = [len(features)] + [rng.randint(4, 8) for _ in range(rng.randint(1, 2))] + [len(classes)]
    stats = {f: (rng.uniform(-5, 50), rng.uniform(0.5, 8)) for f in features}
    columns = rng.sample(features, len(features))
    for _ in range(60):
        model = ladder.export(rng, features, classes, sizes, stats, rung)
        logged = next((s["features"][0] for s in model.get("preprocess", []) if s["op"] == "log1p"), None)

        def draw(logged: str | None = logged) -> dict[str, float]:
            row = {f: rng.gauss(*stats[f]) for f in features}
            return row | ({logged: abs(row[logged])} if logged else {})

        def rows(n: int, prefix: str) -> list[dict[str, str]]:
            return [{"id": f"{prefix}{i + 1:03d}", **{f: f"{v:.3f}" for f, v in draw().items()}} for i in range(n)]

        shipped, unseen = rows(rng.randint(25, 40), "s"), rows(20, "h")
        corners = ladder.corner_rows(rng, features, draw, logged) if rung >= 3 else []
        labels = {ladder.predict(model, r)[0] for r in shipped}
        if len(labels) >= 2 and min(ladder.margin(model, r) for r in shipped + unseen + corners) > 0.01:
            break
    hidden = {"unseen_inputs.csv": ladder.csv_text(unseen, rng.sample(features, len(features)), note=True)}
    if rung >= 3:
        hidden["unseen_corners.csv"] = ladder.csv_text(corners, columns, crlf=True, note=True)
        hidden["unseen_empty.csv"] = ladder.csv_text([], columns, crlf=True)
    model_json = json.dumps(model, indent=1)
    app = {"data/inputs.csv": ladder.csv_text(shipped, columns), ladder.DOC: ladder.doc(rung)}
    if rung >= 4:
        current = f"mlp-{rng.choice(['2024-03', '2024-09', '2025-01'])}.json"
        app |= {
            f"model/{current}": model_json,
            "model/mlp-2023-11.json": json.dumps(ladder.old_export(model, rng), indent=1),
            "model/CURRENT": current + "\n",
        }
        where, weights = "into the folder `/app/model/`", None
    else:
        app["model/weights.json"] = model_json
        where, weights = "to `/app/model/weights.json`", "/app/model/weights.json"
    model_sha = {f"/app/{rel}": sha256_text(text) for rel, text in app.items() if rel.startswith("model/")}
    shipped_expected = [[r["id"], *ladder.predict(model, r)] for r in shipped]
    hidden_expected = {
        name: [[r["id"], *ladder.predict(model, r)] for r in rs]
        for name, rs in [("unseen_inputs.csv", unseen), ("unseen_corners.csv", corners), ("unseen_empty.csv", [])]
        if name in hidden
    }
    tests = ladder.tests(model_sha, shipped_expected, hidden_expected)
    # solver_ladder.py repeats solver_program.py's forward pass (duplicates lists the pair): each is a whole program
    # written into a task or a sandbox alone, where it can import neither the other nor autoenv.
    program = fill_program(
        (Path(__file__).with_name("files") / "solver_ladder.py").read_text(),
        {"weights": weights, "model_dir": "/app/model"},
    )
    solution = solve_sh(
        f"cat > {ladder.PROGRAM} <<'PY'\n{program}PY\n"
        f"python3 {ladder.PROGRAM} /app/data/inputs.csv /app/predictions.csv\nhead -n 5 /app/predictions.csv\n"
    )
    instruction = ladder.instruction(rung, where)
    files = task_files(
        case, NAME, CATEGORY, [*TAGS, model["activation"].lower()], instruction, solution, tests, app=app, hidden=hidden
    )
    probe = shipped_expected[0]
    params = {
        "activation": model["activation"],
        "sizes": sizes,
        "layers": [next(k for k in layer if k != "bias") for layer in model["layers"]],
        "preprocess": [step["op"] for step in model.get("preprocess", [])],
        "leak_hint": f"confidence {probe[2]!r} for {probe[0]}",
        "stale_output": None,
        "output_path": "/app/predictions.csv",
    }
    return TaskDraft(
        name=task_name(NAME, rng, f"l{rung}-{model['activation'].lower()}"), family=NAME, files=files, params=params
    )
