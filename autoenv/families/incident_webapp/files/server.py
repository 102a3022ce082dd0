#!/usr/bin/env python3
"""Incident tracker: a small web app (standard library only).

Copied into incident-webapp tasks as /app/server.py. Pages:

  /                               open and closed incidents
  /symptom/<incident>             the incident's symptom page: service, host, log excerpt
  /runbooks                       the runbook library (?q= filters by id, title or service)
  /runbooks/<runbook>             one runbook: service, symptom signature, on-call engineer, fix type, steps
  /incidents/<incident>           the incident record
  /incidents/<incident>/resolve   the resolution form (GET) and its submission (POST)

Storage is SQLite (data/incidents.db next to this file, or --data DIR). Every
resolution form carries a one-time token issued when the form is shown; a
saved resolution marks its token used and appends an ``audit_log`` row with
the submitted fields.

  python3 server.py --port 8080 [--host 127.0.0.1] [--data DIR]
  python3 server.py --init [--data DIR]      create the database from data/seed.json and exit
"""

from __future__ import annotations

import argparse
import contextlib
import email.parser
import email.policy
import html
import json
import re
import secrets
import sqlite3
import sys
import threading
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

SCHEMA = """
CREATE TABLE engineers (username TEXT PRIMARY KEY, name TEXT NOT NULL, team TEXT NOT NULL);
CREATE TABLE runbooks (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, service TEXT NOT NULL, signature TEXT NOT NULL,
    owner_team TEXT NOT NULL, oncall TEXT NOT NULL REFERENCES engineers(username),
    fix_type TEXT NOT NULL CHECK (fix_type IN ('permanent', 'workaround')),
    steps TEXT NOT NULL, verify TEXT NOT NULL
);
CREATE TABLE incidents (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, service TEXT NOT NULL, host TEXT NOT NULL,
    severity TEXT NOT NULL, opened_at TEXT NOT NULL, log TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open', assignee TEXT, runbook_id TEXT, note TEXT, resolved_at TEXT
);
CREATE TABLE form_tokens (token TEXT PRIMARY KEY, incident_id TEXT NOT NULL, issued_at TEXT NOT NULL, used_at TEXT);
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, incident_id TEXT NOT NULL,
    action TEXT NOT NULL, token TEXT, detail TEXT NOT NULL
);
"""

STATUSES = ("resolved", "mitigated")
FIX_LABELS = {"permanent": "Permanent fix", "workaround": "Workaround (needs follow-up)"}
WRITE_LOCK = threading.Lock()

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #222; }
nav a { margin-right: 1rem; } table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3rem .6rem; }
dt { font-weight: bold; margin-top: .4rem; } pre { background: #f4f4f4; padding: .6rem; overflow-x: auto; }
label { display: block; margin-top: .8rem; font-weight: bold; } textarea { width: 100%; height: 6rem; }
.errors { color: #a00; } .flash { color: #070; }
"""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def e(value: object) -> str:
    return html.escape("" if value is None else str(value))


class App:
    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.db_path = self.data_dir / "incidents.db"

    # -- storage ----------------------------------------------------------------------

    @contextlib.contextmanager
    def connect(self):
        conn = sqlite3.connect(self.db_path, timeout=10)
        conn.row_factory = sqlite3.Row
        try:
            yield conn
        finally:
            conn.close()

    def init(self) -> bool:
        """Create the database from seed.json when it does not exist; True if created."""
        if self.db_path.exists():
            return False
        seed = json.loads((self.data_dir / "seed.json").read_text())
        tmp = self.db_path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        conn.executescript(SCHEMA)
        conn.executemany("INSERT INTO engineers VALUES (:username, :name, :team)", seed["engineers"])
        conn.executemany(
            "INSERT INTO runbooks VALUES (:id, :title, :service, :signature, :owner_team, :oncall, :fix_type, :steps, :verify)",
            [{**r, "steps": json.dumps(r["steps"])} for r in seed["runbooks"]],
        )
        conn.executemany(
            "INSERT INTO incidents (id, title, service, host, severity, opened_at, log) "
            "VALUES (:id, :title, :service, :host, :severity, :opened_at, :log)",
            seed["incidents"],
        )
        conn.commit()
        conn.close()
        tmp.replace(self.db_path)
        return True

    # -- pages ------------------------------------------------------------------------

    def page(self, title: str, body: str) -> str:
        return (
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{STYLE}</style></head><body>\n"
            "<nav><a href=\"/\" id=\"nav-incidents\">Incidents</a><a href=\"/runbooks\" id=\"nav-runbooks\">Runbook library</a></nav>\n"
            f"<h1>{e(title)}</h1>\n{body}\n</body></html>\n"
        )

    def index(self, conn) -> str:
        rows = "".join(
            f"<tr><td><a class=\"incident-link\" href=\"/symptom/{quote(r['id'])}\">{e(r['id'])}</a></td>"
            f"<td>{e(r['title'])}</td><td>{e(r['service'])}</td><td>{e(r['severity'])}</td><td>{e(r['status'])}</td></tr>\n"
            for r in conn.execute("SELECT * FROM incidents ORDER BY id")
        )
        return self.page("Incidents", "<table id=\"incidents\"><tr><th>Incident</th><th>Title</th><th>Service</th>"
                                      f"<th>Severity</th><th>Status</th></tr>\n{rows}</table>")

    def symptom(self, conn, incident_id: str) -> str | None:
        r = conn.execute("SELECT * FROM incidents WHERE id = ?", (incident_id,)).fetchone()
        if r is None:
            return None
        body = (
            "<dl id=\"incident\">"
            f"<dt>Service</dt><dd id=\"service\">{e(r['service'])}</dd>"
            f"<dt>Host</dt><dd id=\"host\">{e(r['host'])}</dd>"
            f"<dt>Severity</dt><dd id=\"severity\">{e(r['severity'])}</dd>"
            f"<dt>Opened</dt><dd id=\"opened\">{e(r['opened_at'])}</dd>"
            f"<dt>Status</dt><dd id=\"status\">{e(r['status'])}</dd></dl>\n"
            f"<h2>Log excerpt</h2>\n<pre id=\"log\">{e(r['log'])}</pre>\n"
            "<p>Look up the matching runbook in the <a id=\"runbook-library\" href=\"/runbooks\">runbook library</a>, "
            f"then <a id=\"resolve-link\" href=\"/incidents/{quote(r['id'])}/resolve\">record the resolution</a>.</p>"
        )
        return self.page(f"{r['id']}: {r['title']}", body)

    def runbooks(self, conn, q: str) -> str:
        rows = conn.execute("SELECT id, title, service FROM runbooks ORDER BY id").fetchall()
        if q:
            needle = q.lower()
            rows = [r for r in rows if needle in r["id"].lower() or needle in r["title"].lower() or needle in r["service"].lower()]
        table = "".join(
            f"<tr><td><a class=\"runbook-link\" href=\"/runbooks/{quote(r['id'])}\">{e(r['id'])}</a></td>"
            f"<td class=\"title\">{e(r['title'])}</td><td class=\"service\">{e(r['service'])}</td></tr>\n"
            for r in rows
        )
        body = (
            f"<form method=\"get\" action=\"/runbooks\"><input name=\"q\" id=\"q\" value=\"{e(q)}\" placeholder=\"id, title or service\">"
            "<button type=\"submit\" id=\"search\">Search</button></form>\n"
            f"<p>{len(rows)} runbook(s)</p>\n<table id=\"runbooks\"><tr><th>Runbook</th><th>Title</th><th>Service</th></tr>\n{table}</table>"
        )
        return self.page("Runbook library", body)

    def runbook(self, conn, runbook_id: str) -> str | None:
        r = conn.execute(
            "SELECT r.*, e.name AS oncall_name FROM runbooks r JOIN engineers e ON e.username = r.oncall WHERE r.id = ?",
            (runbook_id,),
        ).fetchone()
        if r is None:
            return None
        steps = "".join(f"<li>{e(s)}</li>" for s in json.loads(r["steps"]))
        body = (
            "<dl id=\"runbook\">"
            f"<dt>Service</dt><dd id=\"service\">{e(r['service'])}</dd>"
            f"<dt>Symptom signature</dt><dd><code id=\"signature\">{e(r['signature'])}</code></dd>"
            f"<dt>Owner team</dt><dd id=\"team\">{e(r['owner_team'])}</dd>"
            f"<dt>On-call engineer</dt><dd id=\"oncall\">{e(r['oncall_name'])}</dd>"
            f"<dt>Fix type</dt><dd id=\"fix-type\">{e(FIX_LABELS[r['fix_type']])}</dd></dl>\n"
            f"<h2>Steps</h2><ol id=\"steps\">{steps}</ol>\n"
            f"<h2>Verification</h2><p>Run <code id=\"verify\">{e(r['verify'])}</code> and check that it succeeds.</p>"
        )
        return self.page(f"{r['id']}: {r['title']}", body)

    def record(self, conn, incident_id: str, flash: str = "") -> str | None:
        r = conn.execute("SELECT * FROM incidents WHERE id = ?", (incident_id,)).fetchone()
        if r is None:
            return None
        body = (
            (f"<p class=\"flash\" id=\"flash\">{e(flash)}</p>\n" if flash else "")
            + "<dl id=\"record\">"
            f"<dt>Status</dt><dd id=\"status\">{e(r['status'])}</dd>"
            f"<dt>Assignee</dt><dd id=\"assignee\">{e(r['assignee'] or '')}</dd>"
            f"<dt>Runbook</dt><dd id=\"runbook_id\">{e(r['runbook_id'] or '')}</dd>"
            f"<dt>Note</dt><dd id=\"note\">{e(r['note'] or '')}</dd>"
            f"<dt>Resolved at</dt><dd id=\"resolved_at\">{e(r['resolved_at'] or '')}</dd></dl>\n"
            f"<p><a href=\"/symptom/{quote(r['id'])}\">Back to the symptom page</a></p>"
        )
        return self.page(f"Incident record {r['id']}", body)

    def form(self, conn, incident_id: str, *, errors: list[str] | None = None, values: dict | None = None) -> str | None:
        r = conn.execute("SELECT * FROM incidents WHERE id = ?", (incident_id,)).fetchone()
        if r is None:
            return None
        values = values or {}
        token = secrets.token_hex(16)
        with WRITE_LOCK:
            conn.execute("INSERT INTO form_tokens (token, incident_id, issued_at) VALUES (?, ?, ?)", (token, incident_id, now()))
            conn.commit()
        engineers = conn.execute("SELECT * FROM engineers ORDER BY name").fetchall()
        options = "".join(
            f"<option value=\"{e(x['username'])}\"{' selected' if values.get('assignee') == x['username'] else ''}>"
            f"{e(x['name'])} ({e(x['team'])})</option>"
            for x in engineers
        )
        statuses = "".join(
            f"<option value=\"{s}\"{' selected' if values.get('status') == s else ''}>{s}</option>" for s in STATUSES
        )
        error_list = ("<ul class=\"errors\" id=\"errors\">" + "".join(f"<li>{e(x)}</li>" for x in errors) + "</ul>\n") if errors else ""
        body = (
            f"{error_list}<p>Incident <a href=\"/symptom/{quote(r['id'])}\">{e(r['id'])}</a>: {e(r['title'])} "
            f"(service {e(r['service'])}, host {e(r['host'])}).</p>\n"
            f"<form method=\"post\" action=\"/incidents/{quote(r['id'])}/resolve\" id=\"resolve-form\">\n"
            f"<input type=\"hidden\" name=\"token\" value=\"{token}\">\n"
            "<label for=\"assignee\">Assignee</label>"
            f"<select name=\"assignee\" id=\"assignee\"><option value=\"\">(choose an engineer)</option>{options}</select>\n"
            "<label for=\"runbook_id\">Runbook id</label>"
            f"<input name=\"runbook_id\" id=\"runbook_id\" value=\"{e(values.get('runbook_id', ''))}\" placeholder=\"RB-...\">\n"
            "<label for=\"note\">Resolution note</label>"
            f"<textarea name=\"note\" id=\"note\">{e(values.get('note', ''))}</textarea>\n"
            f"<label for=\"status\">Status</label><select name=\"status\" id=\"status\">{statuses}</select>\n"
            "<p><button type=\"submit\" id=\"save\">Save resolution</button></p>\n</form>"
        )
        return self.page(f"Resolve {r['id']}", body)

    def resolve(self, conn, incident_id: str, fields: dict[str, str]) -> tuple[list[str], dict]:
        """Validate and save a submitted resolution; returns (errors, cleaned values)."""
        values = {k: (fields.get(k) or "").strip() for k in ("assignee", "runbook_id", "note", "status", "token")}
        errors = []
        if conn.execute("SELECT 1 FROM incidents WHERE id = ?", (incident_id,)).fetchone() is None:
            return [f"unknown incident {incident_id}"], values
        token = conn.execute("SELECT * FROM form_tokens WHERE token = ?", (values["token"],)).fetchone()
        if token is None or token["incident_id"] != incident_id:
            errors.append("the form token is missing or invalid: load the resolution form and submit it as served")
        elif token["used_at"] is not None:
            errors.append("this form was already submitted: load the resolution form again")
        if conn.execute("SELECT 1 FROM engineers WHERE username = ?", (values["assignee"],)).fetchone() is None:
            errors.append("choose the assignee from the list of engineers")
        if conn.execute("SELECT 1 FROM runbooks WHERE id = ?", (values["runbook_id"],)).fetchone() is None:
            errors.append(f"runbook {values['runbook_id'] or '(empty)'} does not exist")
        if not values["note"]:
            errors.append("the resolution note is empty")
        if values["status"] not in STATUSES:
            errors.append(f"status must be one of: {', '.join(STATUSES)}")
        if errors:
            return errors, values
        at = now()
        detail = {k: values[k] for k in ("assignee", "runbook_id", "note", "status")}
        with WRITE_LOCK:
            conn.execute("UPDATE form_tokens SET used_at = ? WHERE token = ? AND used_at IS NULL", (at, values["token"]))
            conn.execute(
                "UPDATE incidents SET status = ?, assignee = ?, runbook_id = ?, note = ?, resolved_at = ? WHERE id = ?",
                (values["status"], values["assignee"], values["runbook_id"], values["note"], at, incident_id),
            )
            conn.execute(
                "INSERT INTO audit_log (at, incident_id, action, token, detail) VALUES (?, ?, 'resolve', ?, ?)",
                (at, incident_id, values["token"], json.dumps(detail, sort_keys=True)),
            )
            conn.commit()
        return [], values


def parse_body(content_type: str, body: bytes) -> dict[str, str]:
    """Form fields from an urlencoded or multipart/form-data body."""
    if content_type.startswith("multipart/form-data"):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
        )
        fields = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name:
                fields[name] = part.get_payload(decode=True).decode("utf-8", "replace")
        return fields
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


class Handler(BaseHTTPRequestHandler):
    app: App
    server_version = "IncidentTracker/1.0"

    def log_message(self, fmt, *args):  # one line per request on stderr
        sys.stderr.write(f"{self.address_string()} {fmt % args}\n")

    def send(self, status: int, text: str, *, location: str | None = None) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(data)

    def not_found(self) -> None:
        self.send(HTTPStatus.NOT_FOUND, self.app.page("Not found", f"<p>No page at {e(self.path)}.</p>"))

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = parse_qs(url.query)
        with self.app.connect() as conn:
            if path == "/":
                return self.send(HTTPStatus.OK, self.app.index(conn))
            if path == "/runbooks":
                return self.send(HTTPStatus.OK, self.app.runbooks(conn, query.get("q", [""])[0].strip()))
            m = re.fullmatch(r"/symptom/([^/]+)", path)
            if m:
                page = self.app.symptom(conn, m.group(1))
            elif m := re.fullmatch(r"/runbooks/([^/]+)", path):
                page = self.app.runbook(conn, m.group(1))
            elif m := re.fullmatch(r"/incidents/([^/]+)/resolve", path):
                page = self.app.form(conn, m.group(1))
            elif m := re.fullmatch(r"/incidents/([^/]+)", path):
                flash = "Resolution saved." if query.get("saved") else ""
                page = self.app.record(conn, m.group(1), flash)
            else:
                page = None
        if page is None:
            return self.not_found()
        self.send(HTTPStatus.OK, page)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        m = re.fullmatch(r"/incidents/([^/]+)/resolve", path)
        if not m:
            return self.send(HTTPStatus.METHOD_NOT_ALLOWED, self.app.page("Not allowed", "<p>POST goes to /incidents/&lt;id&gt;/resolve.</p>"))
        length = int(self.headers.get("Content-Length") or 0)
        fields = parse_body(self.headers.get("Content-Type", ""), self.rfile.read(length))
        incident_id = m.group(1)
        with self.app.connect() as conn:
            errors, values = self.app.resolve(conn, incident_id, fields)
            if errors:
                page = self.app.form(conn, incident_id, errors=errors, values=values)
                if page is None:
                    return self.not_found()
                return self.send(HTTPStatus.BAD_REQUEST, page)
        self.send(HTTPStatus.SEE_OTHER, self.app.page("Saved", "<p>Resolution saved.</p>"), location=f"/incidents/{quote(incident_id)}?saved=1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Incident tracker web app")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / "data", help="folder with seed.json / incidents.db")
    parser.add_argument("--init", action="store_true", help="create the database from seed.json and exit")
    args = parser.parse_args(argv)
    app = App(args.data)
    created = app.init()
    if args.init:
        print(f"{'created' if created else 'kept'} {app.db_path}")
        return 0
    Handler.app = app
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"Incident tracker on http://{args.host}:{server.server_port}/ (data {app.db_path})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
