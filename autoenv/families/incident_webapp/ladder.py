"""incident-webapp above level 1: the team's process found in /app/docs, a superseded runbook, an on-call rota, no curl.

Level 2 no longer tells the rules (which runbook, which assignee, what the note holds, which status): they are
the team's incident process, ``/app/docs/process.md``. Level 3 composes: the library keeps a superseded runbook
that matches the symptoms as well as its replacement (a red herring whose on-call, fix type and id all differ),
and the runbook's on-call engineer is away on the day the incident was opened, so the assignee is the deputy the
rota (``/app/docs/rota.md``) names. Level 4 takes curl out of the image: the app is driven with what is there
(Python's ``urllib``, say).
"""

from __future__ import annotations

import random
import textwrap
from datetime import date, timedelta
from typing import Any

PROCESS = "docs/process.md"
ROTA = "docs/rota.md"


def process(rung: int) -> str:
    """``/app/docs/process.md``: the rules level 1's instruction spells out (and, at level 3, two more)."""
    superseded = (
        " A runbook whose title says it is superseded is kept for history only: follow the runbook that replaces it."
        if rung >= 3
        else ""
    )
    assignee = (
        "the runbook's on-call engineer, unless the on-call rota (`/app/docs/rota.md`) has them away on the day "
        "the incident was opened (UTC): then the deputy the rota names for that absence"
        if rung >= 3
        else "the runbook's on-call engineer"
    )
    return textwrap.dedent(f"""\
        # Incident process

        How an open incident is resolved in the tracker.

        1. **Symptoms.** The incident's symptom page (`/symptom/<incident>`) shows its service, host, opening
           time and a log excerpt. Excerpts also carry correlated alerts from other services: those are not the
           incident's symptoms.
        2. **Runbook.** The runbook to follow is the one in the library (`/runbooks`) **for the incident's
           service** whose symptom signature occurs in the incident's log excerpt.{superseded}
        3. **Resolution.** Fill in the incident's resolution form (`/incidents/<incident>/resolve`) and save it:
           - Assignee: {assignee};
           - Runbook id: the id of the runbook followed;
           - Note: the incident's host exactly as the symptom page shows it and the runbook's verification
             command, verbatim;
           - Status: `resolved` when the runbook's fix is a permanent fix, `mitigated` when it is a workaround.
        """)


def instruction(rung: int, port: int, incident: str) -> str:
    """The instruction above level 1: where the app is and which incident; the rules are the process's."""
    tools = (
        "(there is no browser here, and no `curl` either: use what the image has)"
        if rung >= 4
        else "with `curl` (there is no browser here)"
    )
    refers = " and the documents it refers to" if rung >= 3 else ""
    return textwrap.dedent(f"""\
        # Resolve an incident in the incident tracker

        Your team's incident tracker is a small web application in `/app`: its code
        is `/app/server.py` and it keeps its records in the SQLite database
        `/app/data/incidents.db`. Start it in the background with
        `python3 /app/server.py --port {port}` and use it at
        `http://127.0.0.1:{port}/` {tools}.

        Incident **{incident}** is open. Resolve it through the application's
        resolution form exactly as your team's incident process says
        (`/app/{PROCESS}`{refers}).

        Submit the form as the application serves it: every form carries a one-time
        token, and a resolution only counts if the application saved it. Do not
        change the application's code or data by other means, and leave the other
        incidents as they are.
        """)


def compose(seed: dict[str, Any], expected: dict[str, Any], rng: random.Random) -> str:
    """Level 3's two traps, in place: a superseded copy of the target's runbook in the library, and the on-call
    away on the incident's day (``expected["assignee"]`` becomes the deputy). Returns the rota's text."""
    runbooks = {r["id"]: r for r in seed["runbooks"]}
    target = runbooks[expected["runbook_id"]]
    used = {int(r["id"][3:]) for r in seed["runbooks"]}
    decoy_id = f"RB-{rng.choice([n for n in range(100, 1000) if n not in used])}"
    team = [e for e in seed["engineers"] if e["team"] == target["owner_team"]]
    oncall = next(e for e in team if e["username"] == target["oncall"])
    deputy = next(e for e in team if e["username"] != target["oncall"])
    decoy = dict(target) | {
        "id": decoy_id,
        "title": f"{target['title']} (superseded by {target['id']})",
        "oncall": deputy["username"],
        "fix_type": "workaround" if target["fix_type"] == "permanent" else "permanent",
        "steps": [f"Superseded: follow {target['id']}", *target["steps"][:2]],
    }
    seed["runbooks"] = sorted([*seed["runbooks"], decoy], key=lambda r: r["id"])
    incident = next(i for i in seed["incidents"] if i["id"] == expected["incident"])
    day = date.fromisoformat(incident["opened_at"][:10])
    away = [(oncall["name"], day - timedelta(days=rng.randint(0, 3)), day + timedelta(days=rng.randint(0, 3)))]
    away.append((oncall["name"], day - timedelta(days=rng.randint(20, 30)), day - timedelta(days=rng.randint(10, 15))))
    others = [e for e in seed["engineers"] if e["team"] != target["owner_team"]]
    for other in rng.sample(others, 3):
        start = day + timedelta(days=rng.randint(-20, 20))
        away.append((other["name"], start, start + timedelta(days=rng.randint(1, 6))))
    rng.shuffle(away)

    def deputy_of(name: str) -> str:  # every team has two engineers: each is the other's deputy
        team_of = next(e["team"] for e in seed["engineers"] if e["name"] == name)
        return next(e["name"] for e in seed["engineers"] if e["team"] == team_of and e["name"] != name)

    expected["assignee"] = deputy["username"]
    rows = "".join(f"| {name} | {a} | {b} | {deputy_of(name)} |\n" for name, a, b in away)
    return (
        "# On-call rota: absences\n\n"
        "Engineers away from the dates below (both days included, UTC). While an engineer is away, the deputy\n"
        "named on the row takes their on-call duties.\n\n"
        "| engineer | away from | away until | deputy |\n| --- | --- | --- | --- |\n" + rows
    )
