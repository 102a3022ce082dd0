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

CASE: dict = {'assignee': 'nrahman',
              'engineers': [{'name': 'David Cohen', 'team': 'Edge platform', 'username': 'dcohen'},
                            {'name': 'Elena Petrova', 'team': 'Database reliability', 'username': 'epetrova'},
                            {'name': 'Ingrid Olsen', 'team': 'Search', 'username': 'iolsen'},
                            {'name': 'Jana Novak', 'team': 'Search', 'username': 'jnovak'},
                            {'name': 'Kofi Boateng', 'team': 'Payments', 'username': 'kboateng'},
                            {'name': 'Mei Chen', 'team': 'Messaging', 'username': 'mchen'},
                            {'name': 'Nadia Rahman', 'team': 'Edge platform', 'username': 'nrahman'},
                            {'name': 'Omar Haddad', 'team': 'Messaging', 'username': 'ohaddad'},
                            {'name': 'Pedro Alves', 'team': 'Payments', 'username': 'palves'},
                            {'name': 'Ravi Iyer', 'team': 'Database reliability', 'username': 'riyer'},
                            {'name': 'Tom Walsh', 'team': 'Caching', 'username': 'twalsh'},
                            {'name': 'Yuki Sato', 'team': 'Caching', 'username': 'ysato'}],
              'host': 'web-edge-2',
              'incident': 'INC-2768',
              'runbook_id': 'RB-810',
              'runbooks': {'RB-142': {'fix_type': 'permanent',
                                      'id': 'RB-142',
                                      'oncall': 'ohaddad',
                                      'owner_team': 'Messaging',
                                      'service': 'rabbitmq',
                                      'signature': 'disk resource limit alarm set',
                                      'steps': ['Purge the dead-letter queue after export',
                                                'Free the message store volume',
                                                'Raise disk_free_limit monitoring'],
                                      'title': 'rabbitmq: Disk free alarm',
                                      'verify': 'rabbitmq-diagnostics check_local_alarms'},
                           'RB-505': {'fix_type': 'permanent',
                                      'id': 'RB-505',
                                      'oncall': 'twalsh',
                                      'owner_team': 'Caching',
                                      'service': 'redis',
                                      'signature': 'MASTER aborted replication',
                                      'steps': ['Compare masterauth on the replica with the primary password',
                                                'Update masterauth',
                                                'Restart replication'],
                                      'title': 'redis: Replica cannot sync',
                                      'verify': 'redis-cli info replication'},
                           'RB-563': {'fix_type': 'workaround',
                                      'id': 'RB-563',
                                      'oncall': 'twalsh',
                                      'owner_team': 'Caching',
                                      'service': 'redis',
                                      'signature': 'OOM command not allowed',
                                      'steps': ['Check the eviction policy',
                                                'Switch maxmemory-policy to allkeys-lru',
                                                'Schedule a memory review'],
                                      'title': 'redis: Out of memory for writes',
                                      'verify': 'redis-cli info memory'},
                           'RB-651': {'fix_type': 'permanent',
                                      'id': 'RB-651',
                                      'oncall': 'jnovak',
                                      'owner_team': 'Search',
                                      'service': 'elasticsearch',
                                      'signature': '[parent] Data too large',
                                      'steps': ['Find the heavy aggregation in the slow log',
                                                "Cap the dashboard's query size",
                                                'Raise the heap to 16g'],
                                      'title': 'elasticsearch: Parent circuit breaker tripped',
                                      'verify': 'curl -s localhost:9200/_nodes/stats/breaker'},
                           'RB-709': {'fix_type': 'workaround',
                                      'id': 'RB-709',
                                      'oncall': 'mchen',
                                      'owner_team': 'Messaging',
                                      'service': 'rabbitmq',
                                      'signature': 'memory resource limit alarm set',
                                      'steps': ['Find the queue with the largest backlog',
                                                'Scale out its consumers',
                                                'Set a max-length policy'],
                                      'title': 'rabbitmq: Memory alarm',
                                      'verify': 'rabbitmq-diagnostics alarms'},
                           'RB-730': {'fix_type': 'permanent',
                                      'id': 'RB-730',
                                      'oncall': 'kboateng',
                                      'owner_team': 'Payments',
                                      'service': 'payments-api',
                                      'signature': 'Thread pool is EXHAUSTED',
                                      'steps': ['Take a thread dump',
                                                'Raise maxThreads to 400',
                                                'Add a replica'],
                                      'title': 'payments-api: Thread pool saturated',
                                      'verify': 'kubectl top pods -l app=payments-api'},
                           'RB-749': {'fix_type': 'workaround',
                                      'id': 'RB-749',
                                      'oncall': 'dcohen',
                                      'owner_team': 'Edge platform',
                                      'service': 'nginx',
                                      'signature': 'upstream timed out (110: Connection timed out)',
                                      'steps': ['Identify the slow upstream pool in the dashboard',
                                                'Drain the unhealthy upstream',
                                                'Raise proxy_read_timeout for the pool'],
                                      'title': 'nginx: Upstream timeouts',
                                      'verify': 'curl -sf http://127.0.0.1/healthz'},
                           'RB-765': {'fix_type': 'permanent',
                                      'id': 'RB-765',
                                      'oncall': 'kboateng',
                                      'owner_team': 'Payments',
                                      'service': 'payments-api',
                                      'signature': 'java.net.ConnectException: Connection refused',
                                      'steps': ['Check the database endpoint in the service config',
                                                'Fail over to the standby endpoint',
                                                'Restart the pods'],
                                      'title': 'payments-api: Database connection refused',
                                      'verify': 'kubectl rollout status deploy/payments-api'},
                           'RB-769': {'fix_type': 'permanent',
                                      'id': 'RB-769',
                                      'oncall': 'epetrova',
                                      'owner_team': 'Database reliability',
                                      'service': 'postgres',
                                      'signature': 'No space left on device',
                                      'steps': ['Check replication slots that hold back WAL',
                                                'Drop the stale slot',
                                                'Grow the WAL volume by 50%'],
                                      'title': 'postgres: WAL volume full',
                                      'verify': 'df -h /var/lib/postgresql'},
                           'RB-810': {'fix_type': 'workaround',
                                      'id': 'RB-810',
                                      'oncall': 'nrahman',
                                      'owner_team': 'Edge platform',
                                      'service': 'nginx',
                                      'signature': 'worker_connections are not enough',
                                      'steps': ['Confirm the connection count in stub_status',
                                                'Raise worker_connections to 4096',
                                                'Reload nginx'],
                                      'title': 'nginx: Worker connections exhausted',
                                      'verify': 'nginx -t'},
                           'RB-856': {'fix_type': 'permanent',
                                      'id': 'RB-856',
                                      'oncall': 'epetrova',
                                      'owner_team': 'Database reliability',
                                      'service': 'postgres',
                                      'signature': 'remaining connection slots are reserved',
                                      'steps': ['Find idle-in-transaction sessions in pg_stat_activity',
                                                'Terminate sessions idle for more than ten minutes',
                                                'Lower the application pool size and redeploy'],
                                      'title': 'postgres: Connection slots exhausted',
                                      'verify': "psql -c 'select count(*) from pg_stat_activity'"},
                           'RB-929': {'fix_type': 'workaround',
                                      'id': 'RB-929',
                                      'oncall': 'iolsen',
                                      'owner_team': 'Search',
                                      'service': 'elasticsearch',
                                      'signature': 'high disk watermark [90%] exceeded',
                                      'steps': ['Delete indices older than the retention period',
                                                'Clear the read-only block',
                                                'Add a data node'],
                                      'title': 'elasticsearch: High disk watermark',
                                      'verify': 'curl -s localhost:9200/_cluster/health'}},
              'server_sha256': 'e0bf399839d1e1b3606732dbcd2166031ac54db6161529f53f803bf7241d51b1',
              'status': 'mitigated',
              'verify': 'nginx -t'}

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
