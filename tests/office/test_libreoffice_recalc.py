"""LibreOffice agrees with the tasks' own formula evaluator.

Spreadsheet verifiers compute formulas with ``formula_eval`` (the task image
has no spreadsheet application). Here the reference solutions' workbooks are
recalculated by LibreOffice headless (``soffice --convert-to xlsx`` computes
every formula and stores the values) and every formula cell's value is
compared with what ``formula_eval`` computes, on the inputs as given and on
the perturbed inputs the verifiers use to reject pasted numbers.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from autoenv.families.office.formula_eval import Evaluator, cells_from_workbook
from tests.office.helpers import EXAMPLES, app_copy, case_of, run_solution

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not SOFFICE,
        reason="LibreOffice (soffice) is not installed (scripts/system-deps.sh installs libreoffice-calc-nogui)",
    ),
]


def perturbed_inputs(task_name: str, case: dict) -> dict[tuple[str, str], object]:
    """The input overrides the task's verifier uses in its 'follows the inputs' pass."""
    if task_name == "variance-formulas-xlsx":
        out = {}
        for i, (budget, actual) in enumerate(case["perturbed"]):
            r = case["first_row"] + i
            out[(case["sheet"], f"{case['cols']['budget']}{r}")] = budget
            out[(case["sheet"], f"{case['cols']['actual']}{r}")] = actual
        return out
    cells, p = case["cells"], case["perturbed"]
    out = {
        ("Inputs", cells[k]): p[k] for k in ("opening", "covenant", "variable", "fixed", "investment", "invest_month")
    }
    out.update({("Inputs", ref): p["multipliers"][name] for name, ref in cells["multipliers"].items()})
    out.update(
        {("Inputs", f"{cells['revenue_col']}{cells['revenue_first_row'] + i}"): v for i, v in enumerate(p["revenue"])}
    )
    return out


def recalc(files: list[Path], outdir: Path, profile: Path) -> None:
    cmd = [
        SOFFICE,
        f"-env:UserInstallation=file://{profile}",
        "--headless",
        "--norestore",
        "--calc",
        "--convert-to",
        "xlsx",
        "--outdir",
        str(outdir),
        *map(str, files),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    missing = [f.name for f in files if not (outdir / f.name).exists()]
    assert not missing, f"LibreOffice did not convert {missing}: {result.stdout}{result.stderr}"


@pytest.fixture(scope="module")
def lo_profile(tmp_path_factory):
    """One LibreOffice user profile for the module: its first start is the slow part."""
    return tmp_path_factory.mktemp("lo-profile")


@pytest.mark.parametrize("task_name", ["variance-formulas-xlsx", "cashflow-scenarios-memo"])
def test_libreoffice_computes_what_the_verifier_computes(task_name, tmp_path, lo_profile):
    task = EXAMPLES / task_name
    case = case_of(task)
    app = app_copy(task, tmp_path)
    solved = run_solution(task, app)
    assert solved.returncode == 0, solved.stderr
    book = next(app.glob("*.xlsx"))

    variants = {"original": {}, "perturbed": perturbed_inputs(task_name, case)}
    files = []
    for name, overrides in variants.items():
        wb = openpyxl.load_workbook(book)
        for (sheet, ref), value in overrides.items():
            wb[sheet][ref] = value
        path = tmp_path / "in" / f"{book.stem}-{name}.xlsx"
        path.parent.mkdir(exist_ok=True)
        wb.save(path)
        files.append(path)
    recalc(files, tmp_path / "out", lo_profile)

    compared = 0
    for name, path in zip(variants, files):
        formulas = openpyxl.load_workbook(path)
        computed = openpyxl.load_workbook(tmp_path / "out" / path.name, data_only=True)
        evaluator = Evaluator(cells_from_workbook(formulas))
        for ws in formulas.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    if not (isinstance(cell.value, str) and cell.value.startswith("=")):
                        continue
                    ours = evaluator.value(ws.title, cell.coordinate)
                    theirs = computed[ws.title][cell.coordinate].value
                    where = f"{name} {ws.title}!{cell.coordinate} {cell.value}"
                    if isinstance(ours, str):
                        assert theirs == ours, f"{where}: LibreOffice {theirs!r}, formula_eval {ours!r}"
                    else:
                        assert isinstance(theirs, (int, float)) and math.isclose(
                            theirs, ours, rel_tol=1e-9, abs_tol=1e-6
                        ), f"{where}: LibreOffice {theirs!r}, formula_eval {ours!r}"
                    compared += 1
    expected = 2 * (2 * len(case["rows"]) + 4) if task_name == "variance-formulas-xlsx" else 2 * 39
    assert compared == expected
