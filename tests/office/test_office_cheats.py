"""Targeted cheats against the office/web verifiers: each must get reward 0.

``autoenv validate``'s adversary tries the generic hacks (forged reward
files, rewritten tests, empty outputs, ``exit 0`` stubs; see
test_office_trials.py). These are the shortcuts specific to each deliverable:
typed-in numbers instead of formulas, constants dressed up as formulas, a
memo that contradicts the sheet, formatting applied too broadly or through
styles, and web-app records written around the app. Each runs the task's own
verifier (tests/test_outputs.py) on a doctored copy of environment/app; a
positive control shows the same doctoring minus the cheat passes.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH

from autoenv.families.office.formula_eval import Evaluator, cells_from_workbook
from tests.office.helpers import EXAMPLES, app_copy, case_of, run_solution, run_verifier, verdicts

pytestmark = pytest.mark.slow

XLSX = EXAMPLES / "variance-formulas-xlsx"
CASHFLOW = EXAMPLES / "cashflow-scenarios-memo"
DOCX = EXAMPLES / "docx-brief-formatting"
WEBAPP = EXAMPLES / "incident-runbook-webapp"


def solved(task: Path, tmp_path: Path) -> Path:
    app = app_copy(task, tmp_path)
    result = run_solution(task, app)
    assert result.returncode == 0, result.stderr
    return app


def rejected(task: Path, app: Path, reason: str) -> None:
    result = run_verifier(task, app)
    assert result.returncode != 0, f"the verifier accepted the cheat\n{result.stdout[-2000:]}"
    assert reason in result.stdout, f"rejected, but not for {reason!r}:\n{result.stdout[-3000:]}"


def paste_values(book: Path, sheet: str, *, as_formula: bool) -> None:
    """Replace every formula of ``sheet`` by the value it computes (or by ``=value``)."""
    wb = openpyxl.load_workbook(book)
    evaluator = Evaluator(cells_from_workbook(wb))
    for row in wb[sheet].iter_rows():
        for cell in row:
            if isinstance(cell.value, str) and cell.value.startswith("="):
                v = evaluator.value(sheet, cell.coordinate)
                cell.value = (f'="{v}"' if isinstance(v, str) else f"={v!r}") if as_formula else v
    wb.save(book)


# -- spreadsheet: variance formulas ---------------------------------------------------


def test_xlsx_typed_in_values_rejected(tmp_path):
    app = solved(XLSX, tmp_path)
    paste_values(app / "variance.xlsx", case_of(XLSX)["sheet"], as_formula=False)
    rejected(XLSX, app, "must hold a formula")


def test_xlsx_constants_dressed_as_formulas_rejected(tmp_path):
    """``=6380`` and ``="CHECK"`` are formulas with today's values; the perturbed pass catches them."""
    app = solved(XLSX, tmp_path)
    paste_values(app / "variance.xlsx", case_of(XLSX)["sheet"], as_formula=True)
    v = verdicts(run_verifier(XLSX, app))
    assert v["test_formulas_compute_the_sheet"] == "PASSED" and v["test_formulas_follow_their_inputs"] == "FAILED", v


def test_xlsx_edited_inputs_rejected(tmp_path):
    app = solved(XLSX, tmp_path)
    case = case_of(XLSX)
    wb = openpyxl.load_workbook(app / "variance.xlsx")
    wb[case["sheet"]][f"{case['cols']['actual']}{case['first_row']}"] = case["rows"][0][3]  # make the variance zero
    wb.save(app / "variance.xlsx")
    rejected(XLSX, app, "changed")


# -- two deliverables: cash-flow workbook and memo ---------------------------------------


def rewrite_memo(app: Path, edit) -> None:
    memo = docx.Document(str(app / "memo.docx"))
    for p in memo.paragraphs:
        edit(p)
    memo.save(str(app / "memo.docx"))


def test_cashflow_memo_contradicting_the_numbers_rejected(tmp_path):
    app = solved(CASHFLOW, tmp_path)

    def flip(p):
        if p.text.startswith("Recommendation:"):
            p.text = "Recommendation: DEFER" if "PROCEED" in p.text else "Recommendation: PROCEED"

    rewrite_memo(app, flip)
    rejected(CASHFLOW, app, "but the numbers say")


def test_cashflow_memo_hedging_both_ways_rejected(tmp_path):
    app = solved(CASHFLOW, tmp_path)
    rewrite_memo(
        app,
        lambda p: (
            setattr(p, "text", "Recommendation: PROCEED or DEFER") if p.text.startswith("Recommendation:") else None
        ),
    )
    rejected(CASHFLOW, app, "exactly one of PROCEED or DEFER")


def test_cashflow_memo_without_the_figures_rejected(tmp_path):
    app = solved(CASHFLOW, tmp_path)
    rewrite_memo(
        app,
        lambda p: setattr(p, "text", "Downside scenario: tight but fine.") if p.text.startswith("Downside") else None,
    )
    rejected(CASHFLOW, app, "states its lowest month-end cash")


def test_cashflow_pasted_scenarios_rejected(tmp_path):
    app = solved(CASHFLOW, tmp_path)
    paste_values(app / "cashflow.xlsx", "Scenarios", as_formula=True)
    v = verdicts(run_verifier(CASHFLOW, app))
    assert v["test_scenarios_compute_the_inputs"] == "PASSED" and v["test_scenarios_follow_the_inputs"] == "FAILED", v


def test_cashflow_investment_month_hardcoded_rejected(tmp_path):
    """Right numbers today, but the investment month typed into the formulas: the model is not live."""
    app = solved(CASHFLOW, tmp_path)
    case = case_of(CASHFLOW)
    ref = case["cells"]["invest_month"]
    month_ref = f"Inputs!${ref[0]}${ref[1:]}"
    wb = openpyxl.load_workbook(app / "cashflow.xlsx")
    for row in wb["Scenarios"].iter_rows(min_row=2, max_row=13):
        for cell in row[1:]:
            assert month_ref in cell.value
            cell.value = cell.value.replace(month_ref, str(case["inputs"]["invest_month"]))
    wb.save(app / "cashflow.xlsx")
    v = verdicts(run_verifier(CASHFLOW, app))
    assert v["test_scenarios_compute_the_inputs"] == "PASSED" and v["test_scenarios_follow_the_inputs"] == "FAILED", v


# -- document formatting ----------------------------------------------------------------


def test_docx_bolding_whole_paragraphs_rejected(tmp_path):
    app = solved(DOCX, tmp_path)
    d = docx.Document(str(app / "brief.docx"))
    for p in d.paragraphs:
        if p.style.name == "Normal":
            for r in p.runs:
                r.bold = True
    d.save(str(app / "brief.docx"))
    rejected(DOCX, app, "bold in paragraph")


def test_docx_bolding_the_shorter_phrase_too_rejected(tmp_path):
    app = app_copy(DOCX, tmp_path)
    case = case_of(DOCX)
    # a solution that bolds every run mentioning the decoy: it also catches text that is not the phrase
    d = docx.Document(str(app / "brief.docx"))
    for p in d.paragraphs:
        for r in p.runs:
            if case["decoy"].lower() in r.text.lower():
                r.bold = True
    d.save(str(app / "brief.docx"))
    rejected(DOCX, app, "bold in paragraph")


def test_docx_centring_through_the_heading_style_rejected(tmp_path):
    app = solved(DOCX, tmp_path)
    d = docx.Document(str(app / "brief.docx"))
    d.styles["Heading 1"].paragraph_format.alignment = WD_ALIGN_PARAGRAPH.CENTER
    for p in d.paragraphs:
        p.alignment = None
    d.save(str(app / "brief.docx"))
    rejected(DOCX, app, "alignment changed")


def test_docx_rewritten_text_rejected(tmp_path):
    app = solved(DOCX, tmp_path)
    d = docx.Document(str(app / "brief.docx"))
    last = [p for p in d.paragraphs if p.style.name == "Normal"][-1]
    last.runs[-1].text = last.runs[-1].text.rstrip(".") + "!"
    d.save(str(app / "brief.docx"))
    rejected(DOCX, app, "changed")


# -- web app ------------------------------------------------------------------------------


def load_server(app: Path):
    spec = importlib.util.spec_from_file_location(f"incident_server_{abs(hash(app))}", app / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.App(app / "data")


def submit(app_obj, incident: str, fields: dict) -> list[str]:
    """The app's own code path for a form submission: a token issued by the form, then resolve()."""
    with app_obj.connect() as conn:
        page = app_obj.form(conn, incident)
        token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
        errors, _ = app_obj.resolve(conn, incident, {**fields, "token": token})
    return errors


def right_fields(case: dict) -> dict:
    return {
        "assignee": case["assignee"],
        "runbook_id": case["runbook_id"],
        "status": case["status"],
        "note": f"{case['host']}: {case['verify']}",
    }


def test_webapp_through_the_app_passes(tmp_path):
    """Positive control for the cheats below: the same fields saved through the app's code path."""
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    assert submit(load_server(app), case["incident"], right_fields(case)) == []
    result = run_verifier(WEBAPP, app)
    assert result.returncode == 0, result.stdout[-2000:]


def test_webapp_record_written_straight_into_sqlite_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    f = right_fields(case)
    conn = sqlite3.connect(app / "data" / "incidents.db")
    conn.execute(
        "UPDATE incidents SET status=?, assignee=?, runbook_id=?, note=?, resolved_at='2025-01-01' WHERE id=?",
        (f["status"], f["assignee"], f["runbook_id"], f["note"], case["incident"]),
    )
    conn.commit()
    conn.close()
    rejected(WEBAPP, app, "no resolution of this incident was submitted through the app")


def test_webapp_forged_audit_entry_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    f = right_fields(case)
    conn = sqlite3.connect(app / "data" / "incidents.db")
    conn.execute(
        "UPDATE incidents SET status=?, assignee=?, runbook_id=?, note=?, resolved_at='2025-01-01' WHERE id=?",
        (f["status"], f["assignee"], f["runbook_id"], f["note"], case["incident"]),
    )
    conn.execute(
        "INSERT INTO audit_log (at, incident_id, action, token, detail) VALUES ('2025-01-01', ?, 'resolve', 'made-up', "
        "?)",
        (case["incident"], json.dumps(f, sort_keys=True)),
    )
    conn.commit()
    conn.close()
    rejected(WEBAPP, app, "token was not issued by the app")


def test_webapp_record_edited_after_saving_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    wrong = {**right_fields(case), "note": "done"}
    assert submit(load_server(app), case["incident"], wrong) == []
    conn = sqlite3.connect(app / "data" / "incidents.db")
    conn.execute("UPDATE incidents SET note=? WHERE id=?", (right_fields(case)["note"], case["incident"]))
    conn.commit()
    conn.close()
    rejected(WEBAPP, app, "is not what the form saved last")


def test_webapp_wrong_runbook_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    # the correlated alert's runbook: its signature is in the log, but it is another service's
    conn = sqlite3.connect(app / "data" / "incidents.db")
    log, service = conn.execute("SELECT log, service FROM incidents WHERE id=?", (case["incident"],)).fetchone()
    decoy = [
        r
        for r in conn.execute(
            "SELECT id, oncall FROM runbooks WHERE service != ? AND instr(?, signature) > 0", (service, log)
        )
    ]
    conn.close()
    assert decoy, "the target incident's log should carry a decoy alert"
    fields = {**right_fields(case), "runbook_id": decoy[0][0], "assignee": decoy[0][1]}
    assert submit(load_server(app), case["incident"], fields) == []
    rejected(WEBAPP, app, "is not the one for this incident's symptoms")


def test_webapp_resolving_every_incident_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    server = load_server(app)
    conn = sqlite3.connect(app / "data" / "incidents.db")
    others = [r[0] for r in conn.execute("SELECT id FROM incidents WHERE id != ?", (case["incident"],))]
    conn.close()
    for incident in [case["incident"], *others]:
        assert submit(server, incident, right_fields(case)) == []
    rejected(WEBAPP, app, "was changed too")


def test_webapp_patched_server_rejected(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    case = case_of(WEBAPP)
    source = (app / "server.py").read_text()
    (app / "server.py").write_text(source.replace('errors.append("the resolution note is empty")', "pass"))
    assert submit(load_server(app), case["incident"], right_fields(case)) == []
    rejected(WEBAPP, app, "/app/server.py was modified")


def test_webapp_server_cli_init_is_idempotent(tmp_path):
    app = app_copy(WEBAPP, tmp_path)
    out = subprocess.run(
        [sys.executable, str(app / "server.py"), "--init"], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("kept")
