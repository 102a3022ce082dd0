"""A scripted client for an incident-webapp task (the scripted solver's program; standard library only).

It does what the instruction asks with HTTP requests: start the app if it is
not up, read the symptom page, open every runbook in the library, pick the one
for the incident's service whose signature occurs in the log excerpt, read
the resolution form (its token and the engineer list) and submit it. Where the
team's process documents more (levels 3 and 4: /app/docs), it follows them too:
a superseded runbook gives way to its replacement, and an on-call engineer the
rota has away on the incident's day to the deputy it names.
"""

import html
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

CASE: dict = {}  # filled in by the generator

BASE = f"http://127.0.0.1:{CASE.get('port', 8080)}"


def get(path):
    with urllib.request.urlopen(BASE + path, timeout=10) as response:
        return response.read().decode()


def by_id(page, element_id):
    m = re.search(rf'id="{re.escape(element_id)}"[^>]*>(.*?)</', page, re.S)
    if not m:
        raise SystemExit(f"no element #{element_id} on the page")
    return html.unescape(m.group(1)).strip()


def ensure_server():
    try:
        get("/")
        return
    except (urllib.error.URLError, OSError):
        pass
    subprocess.Popen(["python3", "/app/server.py", "--port", str(CASE.get("port", 8080))], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(100):
        try:
            get("/")
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise SystemExit("the app did not start")


def title_of(page):
    m = re.search(r"<h1>(.*?)</h1>", page, re.S)
    return html.unescape(m.group(1)) if m else ""


def on_duty(oncall, day, rota="/app/docs/rota.md"):
    """The rota's deputy when ``oncall`` is away on ``day`` (YYYY-MM-DD; both ends included), else ``oncall``."""
    if not os.path.exists(rota):
        return oncall
    for line in open(rota, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] == oncall and cells[1] <= day <= cells[2]:
            return cells[3]
    return oncall


def main():
    ensure_server()
    incident = CASE["incident"]
    symptom = get(f"/symptom/{incident}")
    service, host, log = by_id(symptom, "service"), by_id(symptom, "host"), by_id(symptom, "log")
    matches = []
    for runbook_id in re.findall(r'class="runbook-link" href="/runbooks/([^"]+)"', get("/runbooks")):
        page = get(f"/runbooks/{runbook_id}")
        if by_id(page, "service") == service and by_id(page, "signature") in log:
            matches.append((runbook_id, page))
    if len(matches) > 1:  # a superseded runbook is kept for history: follow its replacement
        matches = [m for m in matches if "superseded" not in title_of(m[1]).lower()]
    if len(matches) != 1:
        raise SystemExit(f"expected one matching runbook, found {[m[0] for m in matches]}")
    runbook_id, page = matches[0]
    form = get(f"/incidents/{incident}/resolve")
    engineers = {html.unescape(name).strip(): html.unescape(user)
                 for user, name in re.findall(r'<option value="([^"]+)"[^>]*>([^<(]+)\(', form)}
    fields = {
        "token": re.search(r'name="token" value="([^"]+)"', form).group(1),
        "assignee": engineers[on_duty(by_id(page, "oncall"), by_id(symptom, "opened")[:10])],
        "runbook_id": runbook_id,
        "note": f"Followed {runbook_id} on {host}; verified with: {by_id(page, 'verify')}",
        "status": "resolved" if by_id(page, "fix-type").startswith("Permanent") else "mitigated",
    }
    request = urllib.request.Request(BASE + f"/incidents/{incident}/resolve", data=urllib.parse.urlencode(fields).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:  # follows the 303 to the record page
        record = response.read().decode()
    print({k: by_id(record, k) for k in ("status", "assignee", "runbook_id", "note")})


if __name__ == "__main__":
    main()
