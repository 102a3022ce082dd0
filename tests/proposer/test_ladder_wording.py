"""Three rules a capable model met unclear at the top of the new ladders (issue 42), now stated where a solver reads
them and held by the tests the tasks ship: mlp-rebuild's log1p domain, primer-tm's Wallace boundary and gc_percent
rounding, xlsx-variance's budgets (never negative). Read without a sandbox; tests/proposer/test_ladders.py
validates every level for real (oracle, nop, partial, tamper).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from autoenv.families.mlp_rebuild.ladder import predict
from autoenv.families.registry import FAMILIES
from autoenv.families.solver import fill_program
from autoenv.proposer.models import SeedCase

SOLVER = Path(predict.__code__.co_filename).with_name("files") / "solver_ladder.py"


def draft(family: str, level: int, seed: int):
    case = SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)
    return FAMILIES[family].draft(case, random.Random(seed), level=level)


def assigned(tests: str, name: str):
    """The literal a generated test module assigns to ``name`` (``NAME = json.loads('...')``, ``NAME: dict = {}``)."""
    for node in ast.parse(tests).body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if [t.id for t in targets if isinstance(t, ast.Name)] == [name]:
            value = node.value
            if isinstance(value, ast.Call):  # json.loads('...')
                return json.loads(ast.literal_eval(value.args[0]))
            return ast.literal_eval(value)
    raise AssertionError(f"{name} is not assigned in the tests")


@pytest.mark.parametrize("seed", [7, 104])
def test_mlp_log1p_outside_its_domain_is_invalid_told_and_tested(seed, tmp_path):
    task = draft("mlp-rebuild", 4, seed)
    assert "-1 or less" in task.files["environment/app/model/EXPORT.md"]
    assert "`log1p` of a value of -1 or less" in task.files["instruction.md"]
    model_dir = tmp_path / "model"
    for rel, text in task.files.items():
        if rel.startswith("environment/app/model/"):
            (model_dir / Path(rel).name).parent.mkdir(parents=True, exist_ok=True)
            (model_dir / Path(rel).name).write_text(text)
    model = json.loads((model_dir / (model_dir / "CURRENT").read_text().strip()).read_text())
    logged = next(step["features"][0] for step in model["preprocess"] if step["op"] == "log1p")
    corners = list(csv.DictReader(io.StringIO(task.files["tests/unseen_corners.csv"], newline="")))
    outside = [row["id"] for row in corners if row[logged] and float(row[logged]) <= -1]
    assert len(outside) == 2 and {row[logged] for row in corners if row["id"] in outside} == {"-1", "-2.5e+06"}
    expected = assigned(task.files["tests/test_outputs.py"], "HIDDEN")["unseen_corners.csv"]
    assert [rid for rid, label, _ in expected if label == "invalid" and rid in outside] == outside
    assert all(predict(model, row) == ("invalid", None) for row in corners if row["id"] in outside)
    # the reference solution's program (reading this model folder), run for real on the hidden corners, agrees
    # with the tests' expectation
    assert SOLVER.read_text().split("def features_of", 1)[1] in task.files["solution/solve.sh"]
    program = fill_program(SOLVER.read_text(), {"weights": None, "model_dir": str(model_dir)})
    (tmp_path / "predict.py").write_text(program)
    (tmp_path / "in.csv").write_text(task.files["tests/unseen_corners.csv"], newline="")
    run = subprocess.run(
        [sys.executable, tmp_path / "predict.py", tmp_path / "in.csv", tmp_path / "out.csv"], capture_output=True
    )
    assert run.returncode == 0, run.stderr
    got = list(csv.reader(io.StringIO((tmp_path / "out.csv").read_text(), newline="")))[1:]
    assert [[rid, label] for rid, label, _ in got] == [[rid, label] for rid, label, _ in expected]


@pytest.mark.parametrize("level", [3, 4])
def test_primer_wallace_boundary_is_worded_alike_in_both_protocol_files(level):
    task = draft("primer-tm", level, 7)
    conf = task.files["environment/app/protocol/tm.conf"]
    methods = task.files["environment/app/protocol/METHODS.txt"]
    assert "below the protocol's threshold" not in methods
    if level >= 4:
        assert "at most this many bases" in conf and "at most tm.conf's wallace_max_len bases" in methods
        longest = int(conf.split("wallace_max_len = ")[1].split()[0])
    else:
        assert "shorter than this" in conf and "fewer than tm.conf's short_below bases" in methods
        longest = int(conf.split("short_below = ")[1].split()[0]) - 1
    # the tests' hidden threshold case: a primer of exactly the longest Wallace length gets the Wallace Tm
    hidden = assigned(task.files["tests/test_outputs.py"], "HIDDEN")["hidden_threshold.fasta"][0]
    fasta = task.files["tests/hidden_threshold.fasta"].upper()
    seqs = ["".join(c for c in rec.split("\n", 1)[1] if c in "ACGT") for rec in fasta.split(">")[1:]]
    for (name, length, gc, tm), seq in zip(hidden, seqs):
        wallace = 2 * (seq.count("A") + seq.count("T")) + 4 * (seq.count("G") + seq.count("C"))
        assert (tm == wallace) == (length <= longest), (name, length, longest, tm)
        assert gc == round(100 * (seq.count("G") + seq.count("C")) / length, 1)
    assert "`tm` both rounded to 1 decimal place" in task.files["instruction.md"]


@pytest.mark.parametrize("level", [2, 3, 4])
def test_xlsx_budgets_are_never_negative_and_the_notes_say_so(level, tmp_path):
    task = draft("xlsx-variance", level, 7)
    (tmp_path / "v.xlsx").write_bytes(task.files["environment/app/variance.xlsx"])
    notes = " ".join(str(c.value) for c in openpyxl.load_workbook(tmp_path / "v.xlsx")["Notes"]["A"] if c.value)
    assert "Budgets are never negative" in notes
    case = assigned(task.files["tests/test_outputs.py"], "CASE")
    budgets = [row[3] for row in case["rows"]] + [b for b, _ in case["perturbed"]]
    budgets += [b for b, _ in case.get("corners", [])]
    assert budgets and min(budgets) >= 0
    if level >= 3:
        assert 0 in budgets, "the corner figures keep their budget of 0"


def test_config_repairs_changes_file_says_where_2x_cut_a_value_at_both_comment_marks():
    """A capable model read "2.x cut values at `#`" as "only `#`" and kept a ``; see ticket`` comment in a string
    value (config-repair level 4, an unseen config): the changes file names both marks, as the reference cuts them."""
    for seed in range(12):
        files = draft("config-repair", 3, seed).files
        changes = next(text for path, text in files.items() if path.endswith("CHANGES.md"))
        assert "cut values at a `#` or\n  `;` that follows white space" in changes
        assert "`max_items` accepts the `k` suffix" in changes
