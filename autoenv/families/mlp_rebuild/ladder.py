"""mlp-rebuild above level 1: an exporter's own format, unseen input files with corners, a preprocessing pipeline.

Level 2 no longer spells the network out: the export uses a framework's own key names (``weight``, PyTorch's
units x inputs, or ``kernel``, Keras' inputs x units), activation names and a variance-based normalisation, all
documented in ``/app/model/EXPORT.md`` and nowhere else. Level 3 runs ``predict.py`` on unseen files with the
corners real CSV exports have (CRLF, quoted fields with commas, extra columns, exponent notation, values large
enough to overflow a naive sigmoid or softmax, rows with a missing value, a file with no data row). Level 4 adds
a preprocessing pipeline (steps in order, before normalisation), layers of both kinds in one network and an older
export beside the current one (``CURRENT`` names the file in use). ``log1p`` is undefined at or below -1: EXPORT.md
and the instruction say such a row is ``invalid``, and the unseen corners hold two (-1 itself and -2.5e+06), so a
solver that reads the rule and one that guesses (NaN, -inf, a crash) are told apart.

:func:`predict` is the specification the tests' expected values come from, written apart from the scripted
solver's program (``files/solver_ladder.py``, which the reference solution also writes), so the two check each
other.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import textwrap
from typing import Any

#: What the tests run, and the files of the export.
PROGRAM = "/app/predict.py"
DOC = "model/EXPORT.md"

#: Activation names as the exporter writes them -> the function.
ACTIVATIONS = {
    "ReLU": lambda z: max(0.0, z),
    "Tanh": math.tanh,
    "Sigmoid": lambda z: 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z)),
}
EPS = 1e-5


def export(
    rng: random.Random, features: list[str], classes: list[str], sizes: list[int], stats: dict, rung: int
) -> dict[str, Any]:
    """A network in the exporter's format: every layer ``weight`` (units x inputs) or ``kernel`` (inputs x
    units), per network (level 2-3) or per layer (level 4)."""
    per_model = rng.choice(["weight", "kernel"])
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        scale = 1.6 / math.sqrt(a)
        w = [[round(rng.gauss(0, scale), 4) for _ in range(a)] for _ in range(b)]
        kind = rng.choice(["weight", "kernel"]) if rung >= 4 else per_model
        layer = {kind: w if kind == "weight" else [list(col) for col in zip(*w)]}
        layers.append(layer | {"bias": [round(rng.gauss(0, 0.3), 4) for _ in range(b)]})
    model: dict[str, Any] = {
        "format": "mlp-json-v2.1" if rung >= 4 else "mlp-json-v2",
        "features": features,
        "classes": classes,
        "activation": rng.choice(sorted(ACTIVATIONS)),
        "layers": layers,
        "normalization": {
            "mean": [round(stats[f][0], 3) for f in features],
            "var": [round(stats[f][1] ** 2, 4) for f in features],
            "eps": EPS,
        },
    }
    if rung >= 4:
        logged, clipped = rng.sample(features, 2)
        model["preprocess"] = [
            {"op": "clip", "features": [clipped], "min": round(stats[clipped][0] - stats[clipped][1], 2)}
            | {"max": round(stats[clipped][0] + 1.5 * stats[clipped][1], 2)},
            {"op": "log1p", "features": [logged]},
        ]
        rng.shuffle(model["preprocess"])
        # the normalisation's statistics are of the transformed feature: log1p's for the logged one
        i = features.index(logged)
        model["normalization"]["mean"][i] = round(math.log1p(abs(stats[logged][0])), 3)
        model["normalization"]["var"][i] = 0.25
    return model


def probabilities(model: dict[str, Any], row: dict[str, str]) -> list[float] | None:
    """The class probabilities for one CSV row (strings by column name), as the instruction and EXPORT.md say;
    None for a row with an empty or non-numeric feature value, or one whose value reaching a ``log1p`` step is -1
    or less (``ln(1 + x)`` is undefined there)."""
    try:
        raw = {f: float(row[f]) for f in model["features"]}
    except ValueError:
        return None
    for step in model.get("preprocess", []):
        for f in step["features"]:
            if step["op"] == "log1p":
                if raw[f] <= -1:
                    return None
                raw[f] = math.log1p(raw[f])
            else:
                raw[f] = min(max(raw[f], step["min"]), step["max"])
    norm = model["normalization"]
    x = [(raw[f] - m) / math.sqrt(v + norm["eps"]) for f, m, v in zip(model["features"], norm["mean"], norm["var"])]
    act = ACTIVATIONS[model["activation"]]
    for n, layer in enumerate(model["layers"]):
        b = layer["bias"]
        if "weight" in layer:
            z = [b[i] + sum(layer["weight"][i][j] * x[j] for j in range(len(x))) for i in range(len(b))]
        else:
            z = [b[i] + sum(layer["kernel"][j][i] * x[j] for j in range(len(x))) for i in range(len(b))]
        x = [act(v) for v in z] if n < len(model["layers"]) - 1 else z
    top = max(x)
    e = [math.exp(v - top) for v in x]
    return [v / sum(e) for v in e]


def predict(model: dict[str, Any], row: dict[str, str]) -> tuple[str, float | None]:
    """(label, confidence rounded to 6 places) for one row; ("invalid", None) for a row with a bad value."""
    p = probabilities(model, row)
    if p is None:
        return "invalid", None
    k = max(range(len(p)), key=p.__getitem__)
    return model["classes"][k], round(p[k], 6)


def margin(model: dict[str, Any], row: dict[str, str]) -> float:
    """How far the row's top class is from the next (a label the tests check must not hang on rounding)."""
    p = sorted(probabilities(model, row) or [1.0, 0.0])
    return p[-1] - p[-2]


def corner_rows(rng: random.Random, features: list[str], draw: Any, logged: str | None = None) -> list[dict[str, str]]:
    """Rows with the corners of real exports (as CSV strings): exponent notation, huge values, a missing value,
    a word where a number should be, unicode ids. ``draw()`` gives one ordinary row (feature -> float); no huge
    value goes to the ``logged`` feature by chance. Where a feature is ``logged``, two more rows give it a value
    outside log1p's domain (exactly -1, and -2.5e+06): ``invalid``, as EXPORT.md and the instruction say."""
    rows = []
    kinds = ["exp", "huge", "tiny", "empty", "word", "plain", "exp"] + (["at_minus_one", "below"] if logged else [])
    for i, kind in enumerate(kinds):
        row = {f: f"{v:.3f}" for f, v in draw().items()}
        f = rng.choice([f for f in features if f != logged])
        if kind == "exp":
            row = {k: f"{float(v):.4e}" for k, v in row.items()}
        elif kind == "huge":
            row[f] = "1e6"
        elif kind == "tiny":
            row[f] = "-2.5e+06"
        elif kind == "empty":
            row[f] = ""
        elif kind == "word":
            row[f] = rng.choice(["n/a", "?", "NULL"])
        elif kind == "at_minus_one" and logged:
            row[logged] = "-1"
        elif kind == "below" and logged:
            row[logged] = "-2.5e+06"
        rows.append({"id": f"c{i + 1:02d}-{rng.choice(['é', 'ß', 'ø', '東'])}", **row})
    return rows


def csv_text(rows: list[dict[str, str]], columns: list[str], *, crlf: bool = False, note: bool = False) -> str:
    """Rows as CSV text: ``columns`` in that order (``note``: an extra quoted free-text column among them)."""
    cols = ["id", *columns]
    if note:
        cols.insert(min(2, len(cols)), "note")  # after the id and the first feature
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(cols)
    notes = ['batch 7, "re-run"', "Müller, K.", "ok", "東京, lab 2"]
    for n, row in enumerate(rows):
        writer.writerow([notes[n % len(notes)] if c == "note" else row[c] for c in cols])
    return out.getvalue()


def doc(rung: int) -> str:
    """``/app/model/EXPORT.md``: the exporter's format, the only place it is described."""
    text = textwrap.dedent("""\
        # mlp-json-v2: how the trainer exports a network

        One JSON object:

        - `features`: the input features, in the order the network takes them;
        - `classes`: the class names, in the order of the network's outputs;
        - `activation`: `ReLU` (`max(0, z)`), `Tanh` (hyperbolic tangent) or `Sigmoid` (`1 / (1 + exp(-z))`),
          applied after every layer except the last;
        - `layers`: the dense layers, first to last, each with a `bias` (one value per unit) and its weights
          under one of two keys, as the framework that trained it stores them:
          - `weight` (PyTorch's `nn.Linear.weight`): shape units x inputs,
            `z[i] = bias[i] + sum_j weight[i][j] * x[j]`;
          - `kernel` (Keras' `Dense` kernel): shape inputs x units, `z[i] = bias[i] + sum_j kernel[j][i] * x[j]`;
        - `normalization`: per feature (in `features` order) the training data's `mean` and `var` (population
          variance) and one `eps`; the network's input is `(x - mean) / sqrt(var + eps)`.

        The last layer's outputs are logits; the class probabilities are their softmax.
        """)
    if rung >= 4:
        text += textwrap.dedent("""
            ## mlp-json-v2.1

            Adds `preprocess`: steps applied to the raw feature values before the normalisation, in the order
            listed, each to the features it names:

            - `{"op": "log1p", "features": [...]}`: `x = ln(1 + x)`, defined for `x > -1` only: a row whose
              value reaching this step is -1 or less has no prediction (it is invalid, like a row with a
              missing value);
            - `{"op": "clip", "features": [...], "min": a, "max": b}`: `x = min(max(x, a), b)`.

            A network may mix `weight` and `kernel` layers (layers converted from another framework keep their key).

            ## Which export is in use

            Each export is a file of its own in the model folder; older ones stay for rollbacks. The file
            `CURRENT` holds the name of the one in use.
            """)
    return text


def old_export(model: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A plausible older export (the red herring beside the current one): v2, other classes and weights."""
    old = json.loads(json.dumps(model))
    old["format"] = "mlp-json-v2"
    old.pop("preprocess", None)
    old["classes"] = [c.upper() for c in reversed(model["classes"])]
    for layer in old["layers"]:
        for key in ("weight", "kernel"):
            if key in layer:
                layer[key] = [[round(w + rng.gauss(0, 0.5), 4) for w in r] for r in layer[key]]
    return old


def instruction(rung: int, where: str) -> str:
    """The instruction above level 1; ``where`` is what it says of the export's location."""
    text = textwrap.dedent(f"""\
        # Rebuild the classifier from its weights

        A small neural network was trained elsewhere and exported {where}. The framework it was trained with
        is not available here (and there is no network), so re-implement its forward pass in pure Python
        (standard library only). The exporter's format (what each key holds, the shapes of the weights, the
        activations, the normalisation) is documented in `/app/{DOC}`; the predicted class is the one with the
        highest probability.

        Write `{PROGRAM}` so that

        ```
        python3 {PROGRAM} INPUT.csv OUTPUT.csv
        ```

        reads a CSV file with a header row containing `id` and every feature (in any order, possibly among
        other columns) and writes `OUTPUT.csv` with the header `id,label,confidence` and one line per input
        row (same order): the row's `id`, the predicted class name, and its probability with 4 decimal places.
        """)
    if rung >= 3:
        text += textwrap.dedent("""
            The tests run it on other files than the shipped one: their lines may end with `\\r\\n`, fields may
            be quoted (and hold commas or any UTF-8 text), numbers may be written in exponent notation
            (`1.5e+01`) or be very large (`-2.5e+06`: compute without overflowing), and a file may have no data
            row (then write just the header). A row whose value of some feature is empty or not a number gets
            the label `invalid` and an empty confidence.
            """)
    if rung >= 4:
        text += textwrap.dedent("""
            A row that a preprocessing step of the export cannot take (a `log1p` of a value of -1 or less: see
            `EXPORT.md`) is `invalid` too.
            """)
    return text + textwrap.dedent("""
        Then run it on `/app/data/inputs.csv` to produce `/app/predictions.csv`. Confidences are checked to
        within 0.001. Do not modify `/app/model/` or `/app/data/`.
        """)


def tests(model_sha: dict[str, str], shipped: list, hidden: dict[str, list]) -> str:
    """The tests of levels 2 and up: the model untouched, the shipped predictions, the program on hidden files."""
    return textwrap.dedent(f"""\
        import csv
        import hashlib
        import io
        import json
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        MODEL_SHA256 = json.loads({json.dumps(model_sha, sort_keys=True)!r})
        # (id, label, confidence; None: the row is invalid) for the shipped inputs and each unseen file
        EXPECTED_SHIPPED = json.loads({json.dumps(shipped)!r})
        HIDDEN = json.loads({json.dumps(hidden, sort_keys=True)!r})


        def read(text):
            rows = list(csv.reader(io.StringIO(text, newline="")))
            assert rows and rows[0] == ["id", "label", "confidence"], rows[:1]
            return rows[1:]


        def check(rows, expected):
            assert len(rows) == len(expected), f"{{len(rows)}} rows, expected {{len(expected)}}"
            for got, (rid, label, conf) in zip(rows, expected):
                assert len(got) == 3 and got[0] == rid and got[1] == label, (got, rid, label)
                if conf is None:
                    assert got[2] == "", got
                else:
                    assert len(got[2].split(".")[-1]) == 4, got
                    assert float(got[2]) == pytest.approx(conf, abs=1e-3), got


        def test_model_unchanged():
            for path, digest in MODEL_SHA256.items():
                assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest, path


        def test_shipped_predictions():
            assert Path("/app/predictions.csv").exists(), "missing /app/predictions.csv"
            check(read(Path("/app/predictions.csv").read_text()), EXPECTED_SHIPPED)


        @pytest.mark.parametrize("name", sorted(HIDDEN))
        def test_predict_on_unseen_files(name):
            work = agent_folder({{"in.csv": Path(__file__).with_name(name)}}, writable=True)
            run = run_agent(["python3", "{PROGRAM}", work / "in.csv", work / "out.csv"], text=True, timeout=60)
            assert run.returncode == 0, run.stderr[-2000:]
            check(read(read_agent_file(work / "out.csv")), HIDDEN[name])
        """)
