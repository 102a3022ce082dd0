"""Verifier of an incident-webapp task: reads the app's own storage (SQLite).

What is checked: the target incident's record (assignee, runbook id, note,
status); that the record was saved through the app's resolution form (the
app's audit_log holds a 'resolve' entry with exactly these fields whose
one-time form token the app issued for this incident and marked used); that
the app's code and its runbook/engineer data are unchanged and no other
incident was touched.

What is not enforced: the agent runs as root next to the database, so it
could write the token, audit and incident rows itself with sqlite3. Doing so
means reproducing the app's whole write path; the audit check stops the
shortcut of updating the incident row alone.
"""

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

CASE: dict = {}  # filled in by the generator

APP = Path(os.environ.get("OFFICE_TASK_DIR", "/app"))
DB = APP / "data" / "incidents.db"


@pytest.fixture(scope="module")
def db():
    assert DB.is_file(), f"{DB} is missing"
    conn = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def incident(db):
    row = db.execute("SELECT * FROM incidents WHERE id = ?", (CASE["incident"],)).fetchone()
    assert row is not None, f"incident {CASE['incident']} is gone"
    return row


def test_app_code_untouched():
    digest = hashlib.sha256((APP / "server.py").read_bytes()).hexdigest()
    assert digest == CASE["server_sha256"], "/app/server.py was modified"


def test_record_assignee_and_runbook(incident):
    assert incident["runbook_id"] == CASE["runbook_id"], f"runbook {incident['runbook_id']!r} is not the one for this incident's symptoms"
    assert incident["assignee"] == CASE["assignee"], f"assignee {incident['assignee']!r} is not the runbook's on-call engineer"


def test_record_status(incident):
    assert incident["status"] == CASE["status"], f"status {incident['status']!r} does not follow from the runbook's fix type"


def test_record_note(incident):
    note = incident["note"] or ""
    assert CASE["host"] in note, "the note does not name the affected host"
    assert CASE["verify"] in note, "the note does not quote the runbook's verification command"


def test_saved_through_the_app(db, incident):
    entries = db.execute(
        "SELECT * FROM audit_log WHERE incident_id = ? AND action = 'resolve' ORDER BY seq", (CASE["incident"],)
    ).fetchall()
    assert entries, "no resolution of this incident was submitted through the app's form"
    last = entries[-1]
    detail = json.loads(last["detail"])
    saved = {k: incident[k] for k in ("assignee", "runbook_id", "note", "status")}
    assert detail == saved, f"the stored record {saved} is not what the form saved last ({detail})"
    assert incident["resolved_at"] == last["at"], "the record was changed after it was saved through the form"
    token = db.execute("SELECT * FROM form_tokens WHERE token = ?", (last["token"],)).fetchone()
    assert token is not None and token["incident_id"] == CASE["incident"], "the saved form's token was not issued by the app for this incident"
    assert token["used_at"] == last["at"] and token["issued_at"] <= token["used_at"], "the form token's use does not match the save"


def test_nothing_else_changed(db):
    for row in db.execute("SELECT * FROM incidents WHERE id != ?", (CASE["incident"],)):
        assert row["status"] == "open" and row["assignee"] is None and row["runbook_id"] is None, f"incident {row['id']} was changed too"
    runbooks = {r["id"]: {**dict(r), "steps": json.loads(r["steps"])} for r in db.execute("SELECT * FROM runbooks")}
    assert runbooks == CASE["runbooks"], "the runbook library was modified"
    engineers = [dict(r) for r in db.execute("SELECT * FROM engineers ORDER BY username")]
    assert engineers == CASE["engineers"], "the engineer list was modified"
