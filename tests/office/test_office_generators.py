"""The office/web family generators: well-formed, randomised, reproducible tasks; the bundled ones are theirs.

Fast checks on the host: every family's output passes ``autoenv task check``,
two seeds give different tasks and one seed the same bytes, the bundled tasks
are exactly the generators' output for their seeds, and each family's
reference solution satisfies its verifier while the untouched files do not
(run on a copy of environment/app; the sandbox trials are in
test_office_trials.py).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import docx
import openpyxl
import pytest
from harbor.models.task.config import VerifierEnvironmentMode
from harbor.models.task.task import Task

from autoenv.families.office.bundled import BUNDLED, generate, office_families
from autoenv.families.registry import family_for
from autoenv.proposer.models import SeedCase
from autoenv.taskfmt.check import check_task
from tests.office.helpers import EXAMPLES, app_copy, run_solution, run_verifier

FAMILIES = office_families()
OFFICE_SUFFIXES = (".docx", ".xlsx")


def tree(task: Path) -> dict[str, bytes]:
    return {
        p.relative_to(task).as_posix(): p.read_bytes()
        for p in sorted(task.rglob("*"))
        if p.is_file() and not {".autoenv", "__pycache__"} & set(p.parts)
    }


def office_content(path: Path):
    """What a reader sees in a .docx/.xlsx (independent of library versions' zip details)."""
    if path.suffix == ".docx":
        d = docx.Document(str(path))
        return [(p.style.name, p.alignment, [(r.text, r.bold, r.italic) for r in p.runs]) for p in d.paragraphs]
    wb = openpyxl.load_workbook(path)
    return {
        (ws.title, c.coordinate): (c.value, c.number_format)
        for ws in wb.worksheets
        for row in ws.iter_rows()
        for c in row
        if c.value is not None
    }


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_variants_are_well_formed_different_and_reproducible(family, tmp_path):
    a = generate(family, tmp_path / "a", seed=101)
    b = generate(family, tmp_path / "b", seed=202)
    again = generate(family, tmp_path / "again", seed=101)
    for task in (a, b):
        assert check_task(task) == [], [str(p) for p in check_task(task)]
        for rel in (
            "instruction.md",
            "task.toml",
            "environment/Dockerfile",
            "solution/solve.sh",
            "tests/test.sh",
            "tests/test_outputs.py",
        ):
            assert (task / rel).is_file(), rel
        config = Task(task).config  # Harbor's own loader: graded in a fresh sandbox with /app collected
        assert config.verifier.environment_mode == VerifierEnvironmentMode.SEPARATE and "/app" in config.artifacts
    assert tree(a) == tree(again), "the same seed must give the same task, byte for byte"
    ta, tb = tree(a), tree(b)
    assert ta["tests/test_outputs.py"] != tb["tests/test_outputs.py"], "different seeds must give different targets"
    data = [rel for rel in ta if rel.startswith("environment/app/") and rel in tb and ta[rel] != tb[rel]]
    assert data, "different seeds must give different data"


def test_seed_case_is_recorded(tmp_path):
    case = SeedCase(
        id="sheet-pasted-values",
        task="budget workbook",
        failure_mode="typed numbers instead of formulas",
        target_skill="spreadsheet formulas",
        family="xlsx-variance",
    )
    assert family_for(case).name == "xlsx-variance"
    task = generate("xlsx-variance", tmp_path / "t", seed=1, seed_case=case)
    assert 'seed_case = "sheet-pasted-values"' in (task / "task.toml").read_text()
    hint = SeedCase(
        id="x",
        task="a word document",
        failure_mode="lost italic formatting in the docx",
        target_skill="docx formatting",
    )
    assert family_for(hint).name == "docx-formatting"


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_task_is_the_generators_output(name, tmp_path):
    family, seed = BUNDLED[name]
    fresh = tree(generate(family, tmp_path / name, seed=seed))
    bundled = tree(EXAMPLES / name)
    assert sorted(fresh) == sorted(bundled), "files differ; rewrite with: python -m autoenv.families.office bundled"
    for rel, data in fresh.items():
        if rel.endswith(OFFICE_SUFFIXES):
            assert office_content(tmp_path / name / rel) == office_content(EXAMPLES / name / rel), rel
        else:
            assert data == bundled[rel], (
                f"{rel} differs from the generator's output; rewrite with: python -m autoenv.families.office bundled"
            )


@pytest.mark.parametrize("name", [n for n in sorted(BUNDLED) if n != "incident-runbook-webapp"])
def test_reference_solution_passes_and_untouched_files_fail(name, tmp_path):
    task = EXAMPLES / name
    app = app_copy(task, tmp_path)
    untouched = run_verifier(task, app)
    assert untouched.returncode != 0, "the verifier accepts the untouched files"
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in app.iterdir() if p.is_file()}
    solved = run_solution(task, app)
    assert solved.returncode == 0, solved.stderr
    assert before != {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in app.iterdir() if p.is_file()}
    result = run_verifier(task, app)
    assert result.returncode == 0, result.stdout[-3000:]


def test_generated_seeds_cover_both_decisions(tmp_path):
    """The cash-flow family must not always recommend the same thing."""
    from autoenv.families.cashflow_memo.generator import build_workbook

    decisions = set()
    for seed in range(8):
        case = build_workbook(random.Random(seed), tmp_path / f"{seed}.xlsx")
        lows = {}
        for name, mult in case["inputs"]["multipliers"].items():
            cash, low, inp = case["inputs"]["opening"], None, case["inputs"]
            for month, revenue in enumerate(inp["revenue"], start=1):
                cash += (
                    revenue * mult * (1 - inp["variable"])
                    - inp["fixed"]
                    - (inp["investment"] if month == inp["invest_month"] else 0)
                )
                low = cash if low is None else min(low, cash)
            lows[name] = low
        decisions.add(all(lows[s] >= case["inputs"]["covenant"] for s in case["rule_scenarios"]))
    assert decisions == {True, False}


def test_seed_cases_load_and_name_office_families():
    paths = sorted((EXAMPLES.parent / "seed_cases" / "office").glob("*.yaml"))
    assert paths
    for path in paths:
        case = SeedCase.load(path)
        assert case.family in FAMILIES and family_for(case).name == case.family


def test_adapter_to_the_template_interface(tmp_path):
    """A folder family's draft is the scripted proposer's TaskDraft (binary fixtures as bytes) and writes the same
    task."""
    case = SeedCase.load(EXAMPLES.parent / "seed_cases" / "office" / "spreadsheet-typed-values.yaml")
    d = FAMILIES["xlsx-variance"].draft(case, random.Random(5))
    assert isinstance(d.files["environment/app/variance.xlsx"], bytes) and isinstance(d.files["instruction.md"], str)
    written = d.write(tmp_path / "drafts")
    assert check_task(written) == []
    assert "tests/test.sh" in d.executable or (written / "tests" / "test.sh").stat().st_mode & 0o111
    assert set(FAMILIES) == {"incident-webapp", "docx-formatting", "xlsx-variance", "cashflow-memo"}
    again = FAMILIES["docx-formatting"].draft(case, random.Random(5))
    assert again.family == "docx-formatting" and isinstance(again.files["environment/app/brief.docx"], bytes)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_scripted_solver_recipe_reads_every_variant(family, tmp_path):
    """The family's recipe recovers from the instruction alone what the task's own constants say."""
    from tests.office.helpers import case_of

    recipe = FAMILIES[family].recipe
    for seed in range(12):
        task = generate(family, tmp_path / f"{family}-{seed}", seed=seed)
        params = recipe.match((task / "instruction.md").read_text())
        assert params is not None, f"seed {seed}: the recipe does not recognise the instruction"
        case = case_of(task)
        if family == "xlsx-variance":
            assert {k: params[k] for k in ("sheet", "first_row", "total_row", "sign", "tolerance")} == {
                k: case[k] for k in ("sheet", "first_row", "total_row", "sign", "tolerance")
            }
            assert params["n_rows"] == len(case["rows"])
            assert all(params["cols"][k] == case["cols"][k] for k in params["cols"])
        elif family == "docx-formatting":
            assert (params["phrase"], params["name"], params["heading"]) == (
                case["phrase"],
                case["name"],
                case["heading"],
            )
        elif family == "incident-webapp":
            assert params["incident"] == case["incident"]
        else:
            assert params == {"scenarios": case["scenarios"], "rule_scenarios": case["rule_scenarios"]}
    others = [p for p in EXAMPLES.iterdir() if (p / "instruction.md").is_file() and p.name not in BUNDLED]
    assert all(recipe.match((p / "instruction.md").read_text()) is None for p in others), (
        "the recipe must not claim other tasks"
    )
