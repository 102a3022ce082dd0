"""Helper of the incident-webapp reference solution: reads the pages solve.sh saved with curl.

  pick.py runbook-ids LIBRARY.html   the runbook ids linked from the library page, one a line
  pick.py resolution WORKDIR         the form fields to POST, one name=value a line

The matching rule is the instruction's: the runbook of the incident's service
whose symptom signature occurs in the incident's log excerpt.
"""

import html
import re
import sys
from pathlib import Path


def by_id(page, element_id):
    m = re.search(rf'id="{re.escape(element_id)}"[^>]*>(.*?)</', page, re.S)
    if not m:
        raise SystemExit(f"no element #{element_id} on the page")
    return html.unescape(m.group(1)).strip()


def runbook_ids(library):
    return re.findall(r'class="runbook-link" href="/runbooks/([^"]+)"', library)


def resolution(workdir):
    workdir = Path(workdir)
    symptom = (workdir / "symptom.html").read_text()
    service, host, log = by_id(symptom, "service"), by_id(symptom, "host"), by_id(symptom, "log")
    matches = []
    for path in sorted((workdir / "runbooks").glob("*.html")):
        page = path.read_text()
        if by_id(page, "service") == service and by_id(page, "signature") in log:
            matches.append((path.stem, page))
    if len(matches) != 1:
        raise SystemExit(f"expected one matching runbook, found {[m[0] for m in matches]}")
    runbook_id, page = matches[0]
    form = (workdir / "form.html").read_text()
    engineers = {html.unescape(name).strip(): html.unescape(user)
                 for user, name in re.findall(r'<option value="([^"]+)"[^>]*>([^<(]+)\(', form)}
    oncall = by_id(page, "oncall")
    token = re.search(r'name="token" value="([^"]+)"', form).group(1)
    status = "resolved" if by_id(page, "fix-type").startswith("Permanent") else "mitigated"
    note = f"Followed {runbook_id} on {host}; verified with: {by_id(page, 'verify')}"
    return {"token": token, "assignee": engineers[oncall], "runbook_id": runbook_id, "note": note, "status": status}


if __name__ == "__main__":
    if sys.argv[1] == "runbook-ids":
        print("\n".join(runbook_ids(Path(sys.argv[2]).read_text())))
    else:
        for name, value in resolution(sys.argv[2]).items():
            print(f"{name}={value}")
