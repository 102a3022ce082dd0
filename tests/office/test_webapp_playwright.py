"""The incident web app driven through its pages in Debian's Chromium (Playwright).

The bundled task's app is copied to a temporary folder, its database created
as the Dockerfile does, and the server started on a free port. A browser then
does what the task asks of an agent, by the pages only: open the symptom
page, follow the link to the runbook library, open runbooks until one matches
the incident's service and log, read its on-call engineer, fix type and
verification command, go back to the incident and fill in and submit the
resolution form. The saved record is then checked in the app's SQLite
storage, and the task's own verifier (tests/test_outputs.py) must accept it.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.office.helpers import EXAMPLES, app_copy, case_of, run_verifier

TASK = EXAMPLES / "incident-runbook-webapp"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def server(tmp_path):
    app = app_copy(TASK, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, str(app / "server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, f"server did not start: {line!r}"
        yield app, f"http://127.0.0.1:{m.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')"
    )
    if not CHROMIUM:
        pytest.skip("Debian chromium is not installed (scripts/system-deps.sh installs it)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def test_oracle_steps_through_the_pages(server, page):
    app, base = server
    case = case_of(TASK)
    incident = case["incident"]

    # 1. the symptom page
    page.goto(f"{base}/")
    page.click(f"a.incident-link:text-is('{incident}')")
    assert page.url.endswith(f"/symptom/{incident}")
    service = page.inner_text("#service").strip()
    host = page.inner_text("#host").strip()
    log = page.inner_text("#log")

    # 2. the runbook library, one runbook page after another
    page.click("#runbook-library")
    assert page.url.endswith("/runbooks")
    links = page.eval_on_selector_all("a.runbook-link", "els => els.map(e => e.textContent.trim())")
    assert len(links) >= 8
    found = None
    for runbook_id in links:
        page.goto(f"{base}/runbooks")
        page.click(f"a.runbook-link:text-is('{runbook_id}')")
        if page.inner_text("#service").strip() == service and page.inner_text("#signature").strip() in log:
            found = {
                "id": runbook_id,
                "oncall": page.inner_text("#oncall").strip(),
                "fix": page.inner_text("#fix-type").strip(),
                "verify": page.inner_text("#verify").strip(),
            }
            break
    assert found is not None, "no runbook matches the incident"

    # 3. the resolution form, reached from the symptom page
    page.goto(f"{base}/symptom/{incident}")
    page.click("#resolve-link")
    option = page.locator("#assignee option", has_text=found["oncall"])
    page.select_option("#assignee", value=option.get_attribute("value"))
    page.fill("#runbook_id", found["id"])
    page.fill("#note", f"Applied {found['id']} on {host}. Verified with: {found['verify']}")
    page.select_option("#status", "resolved" if found["fix"].startswith("Permanent") else "mitigated")
    page.click("#save")
    page.wait_for_url(re.compile(rf"/incidents/{incident}\?saved=1$"))
    assert page.inner_text("#flash") == "Resolution saved."

    # the record, in the app's own storage
    conn = sqlite3.connect(app / "data" / "incidents.db")
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT * FROM incidents WHERE id = ?", (incident,)).fetchone()
    assert (row["runbook_id"], row["assignee"], row["status"]) == (case["runbook_id"], case["assignee"], case["status"])
    assert host == case["host"] and case["verify"] in row["note"] and host in row["note"]
    audit = conn.execute("SELECT * FROM audit_log WHERE incident_id = ?", (incident,)).fetchall()
    assert len(audit) == 1 and audit[0]["action"] == "resolve"
    conn.close()

    # and the task's verifier accepts what the browser saved
    result = run_verifier(TASK, app)
    assert result.returncode == 0, result.stdout[-3000:]


def test_form_rejects_bad_submissions_in_the_browser(server, page):
    app, base = server
    incident = case_of(TASK)["incident"]
    page.goto(f"{base}/incidents/{incident}/resolve")
    page.fill("#runbook_id", "RB-000")
    page.click("#save")
    errors = page.inner_text("#errors")
    assert "choose the assignee" in errors and "RB-000 does not exist" in errors and "note is empty" in errors
    conn = sqlite3.connect(app / "data" / "incidents.db")
    assert conn.execute("SELECT status FROM incidents WHERE id = ?", (incident,)).fetchone()[0] == "open"
    assert conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0] == 0
    conn.close()
    # nothing was saved, so the verifier says 0
    assert run_verifier(TASK, app).returncode != 0
