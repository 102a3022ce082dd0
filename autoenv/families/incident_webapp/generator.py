"""Family ``incident-webapp``: resolve an incident through a small web app's pages and form.

The app (``incident_app.py``, shipped as ``/app/server.py``) serves a symptom
page per incident, a runbook library and a resolution form; it keeps its
records in SQLite. The solver must match the incident's symptoms to the right
runbook (same service, signature in the log excerpt; the excerpt also carries
a correlated alert whose signature belongs to another service's runbook), read
the on-call engineer, fix type and verification command from the runbook page,
and submit the form. Randomised: services, hosts, runbook ids, engineers, fix
types, which incident is the target and the log noise.

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) leave the rules to the team's process in ``/app/docs``, add a
superseded runbook and an on-call rota, and take curl out of the image; level 1 is the task above, unchanged.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

from autoenv.families.incident_webapp import ladder
from autoenv.families.levels import load_ladder
from autoenv.families.office import common

NAME = "incident-webapp"
DESCRIPTION = "resolve an incident through a web app: symptom page, runbook library, resolution form"
KEYWORDS = ("web", "browser", "form", "http", "curl", "web app", "incident", "runbook", "page")
FILES = Path(__file__).with_name("files")
APP_SOURCE = FILES / "server.py"
PICK_SOURCE = FILES / "webapp_pick.py"
CLIENT_SOURCE = FILES / "webapp_client.py"
PORT = 8080

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file

# service -> (host prefix, owner team, failure modes); a mode is
# (title, signature, log line containing the signature, steps, verification command)
SERVICES = {
    "postgres": (
        "db-prod",
        "Database reliability",
        [
            (
                "Connection slots exhausted",
                "remaining connection slots are reserved",
                "FATAL:  remaining connection slots are reserved for non-replication superuser connections",
                [
                    "Find idle-in-transaction sessions in pg_stat_activity",
                    "Terminate sessions idle for more than ten minutes",
                    "Lower the application pool size and redeploy",
                ],
                "psql -c 'select count(*) from pg_stat_activity'",
            ),
            (
                "WAL volume full",
                "No space left on device",
                'PANIC:  could not write to file "pg_wal/xlogtemp.3121": No space left on device',
                ["Check replication slots that hold back WAL", "Drop the stale slot", "Grow the WAL volume by 50%"],
                "df -h /var/lib/postgresql",
            ),
        ],
    ),
    "nginx": (
        "web-edge",
        "Edge platform",
        [
            (
                "Upstream timeouts",
                "upstream timed out (110: Connection timed out)",
                "[error] 2211#2211: *90412 upstream timed out (110: Connection timed out) while reading response "
                "header from upstream",
                [
                    "Identify the slow upstream pool in the dashboard",
                    "Drain the unhealthy upstream",
                    "Raise proxy_read_timeout for the pool",
                ],
                "curl -sf http://127.0.0.1/healthz",
            ),
            (
                "Worker connections exhausted",
                "worker_connections are not enough",
                "[alert] 2209#2209: 1024 worker_connections are not enough",
                ["Confirm the connection count in stub_status", "Raise worker_connections to 4096", "Reload nginx"],
                "nginx -t",
            ),
        ],
    ),
    "redis": (
        "cache",
        "Caching",
        [
            (
                "Out of memory for writes",
                "OOM command not allowed",
                "-OOM command not allowed when used memory > 'maxmemory'.",
                ["Check the eviction policy", "Switch maxmemory-policy to allkeys-lru", "Schedule a memory review"],
                "redis-cli info memory",
            ),
            (
                "Replica cannot sync",
                "MASTER aborted replication",
                "# MASTER aborted replication with an error: NOAUTH Authentication required.",
                [
                    "Compare masterauth on the replica with the primary password",
                    "Update masterauth",
                    "Restart replication",
                ],
                "redis-cli info replication",
            ),
        ],
    ),
    "kafka": (
        "kafka-broker",
        "Streaming",
        [
            (
                "Under-replicated partitions",
                "Shrinking ISR from",
                "INFO [Partition orders-7 broker=2] Shrinking ISR from 2,3,1 to 2 (kafka.cluster.Partition)",
                ["List under-replicated partitions", "Restart the lagging broker", "Rebalance leadership"],
                "kafka-topics.sh --bootstrap-server localhost:9092 --describe --under-replicated-partitions",
            ),
            (
                "Log directory offline",
                "Stopping serving logs in dir",
                "ERROR Stopping serving logs in dir /var/lib/kafka/data (kafka.log.LogManager)",
                ["Check the disk with smartctl", "Move partitions off the failed directory", "Replace the disk"],
                "kafka-log-dirs.sh --bootstrap-server localhost:9092 --describe",
            ),
        ],
    ),
    "elasticsearch": (
        "search",
        "Search",
        [
            (
                "High disk watermark",
                "high disk watermark [90%] exceeded",
                "[WARN ][o.e.c.r.a.DiskThresholdMonitor] high disk watermark [90%] exceeded on [node-2], shards will "
                "be relocated away from this node",
                ["Delete indices older than the retention period", "Clear the read-only block", "Add a data node"],
                "curl -s localhost:9200/_cluster/health",
            ),
            (
                "Parent circuit breaker tripped",
                "[parent] Data too large",
                "[WARN ][o.e.i.b.HierarchyCircuitBreakerService] [parent] Data too large, data for [<http_request>] "
                "would be larger than limit",
                [
                    "Find the heavy aggregation in the slow log",
                    "Cap the dashboard's query size",
                    "Raise the heap to 16g",
                ],
                "curl -s localhost:9200/_nodes/stats/breaker",
            ),
        ],
    ),
    "rabbitmq": (
        "mq",
        "Messaging",
        [
            (
                "Memory alarm",
                "memory resource limit alarm set",
                "[warning] <0.512.0> memory resource limit alarm set on node rabbit@mq-1",
                ["Find the queue with the largest backlog", "Scale out its consumers", "Set a max-length policy"],
                "rabbitmq-diagnostics alarms",
            ),
            (
                "Disk free alarm",
                "disk resource limit alarm set",
                "[warning] <0.498.0> disk resource limit alarm set on node rabbit@mq-1",
                [
                    "Purge the dead-letter queue after export",
                    "Free the message store volume",
                    "Raise disk_free_limit monitoring",
                ],
                "rabbitmq-diagnostics check_local_alarms",
            ),
        ],
    ),
    "payments-api": (
        "pay-api",
        "Payments",
        [
            (
                "Database connection refused",
                "java.net.ConnectException: Connection refused",
                "ERROR c.a.p.DataSource - java.net.ConnectException: Connection refused (Connection refused)",
                [
                    "Check the database endpoint in the service config",
                    "Fail over to the standby endpoint",
                    "Restart the pods",
                ],
                "kubectl rollout status deploy/payments-api",
            ),
            (
                "Thread pool saturated",
                "Thread pool is EXHAUSTED",
                "WARN  o.a.t.u.t.ThreadPoolExecutor - Thread pool is EXHAUSTED! Thread Name: http-nio-8443",
                ["Take a thread dump", "Raise maxThreads to 400", "Add a replica"],
                "kubectl top pods -l app=payments-api",
            ),
        ],
    ),
}
NOISE = {
    "postgres": [
        "LOG:  checkpoint complete: wrote 3141 buffers (19.2%)",
        'LOG:  automatic vacuum of table "app.public.orders"',
    ],
    "nginx": [
        "[notice] 2209#2209: signal process started",
        "[warn] 2211#2211: *90377 an upstream response is buffered to a temporary file",
    ],
    "redis": ["* Background saving started by pid 7712", "* DB saved on disk"],
    "kafka": [
        "INFO [Log partition=orders-3] Rolled new log segment",
        "INFO [GroupCoordinator 2]: Stabilized group billing generation 41",
    ],
    "elasticsearch": [
        "[INFO ][o.e.c.m.MetadataCreateIndexService] creating index [logs-2025.06.01]",
        "[INFO ][o.e.m.j.JvmGcMonitorService] [gc][41873] overhead, spent [311ms] collecting",
    ],
    "rabbitmq": ["[info] <0.733.0> accepting AMQP connection", "[info] <0.733.0> connection closed"],
    "payments-api": ["INFO  c.a.p.Health - readiness probe ok", "INFO  c.a.p.Batch - settled 412 payments"],
}
ENGINEERS = [
    "Jana Novak",
    "Omar Haddad",
    "Mei Chen",
    "Lukas Weber",
    "Ana Souza",
    "Kofi Boateng",
    "Sara Lind",
    "Ravi Iyer",
    "Elena Petrova",
    "Tom Walsh",
    "Yuki Sato",
    "Nadia Rahman",
    "Pedro Alves",
    "Ingrid Olsen",
    "David Cohen",
    "Aisha Bello",
]
SEVERITIES = ["SEV-1", "SEV-2", "SEV-3"]


def _username(name: str) -> str:
    first, last = name.lower().split()
    return f"{first[0]}{last}"


def build_seed(rng: random.Random) -> tuple[dict, dict]:
    """(seed.json content, expected resolution of the target incident)."""
    services = rng.sample(sorted(SERVICES), 6)
    names = rng.sample(ENGINEERS, 12)
    teams = {svc: SERVICES[svc][1] for svc in services}
    engineers = []
    by_team: dict[str, list[str]] = {}
    for i, svc in enumerate(services):
        for name in names[2 * i : 2 * i + 2]:
            engineers.append({"username": _username(name), "name": name, "team": teams[svc]})
            by_team.setdefault(teams[svc], []).append(_username(name))
    ids = rng.sample(range(100, 1000), 2 * len(services))
    runbooks, mode_of = [], {}
    for svc in services:
        for title, signature, line, steps, verify in SERVICES[svc][2]:
            rb_id = f"RB-{ids.pop()}"
            runbooks.append(
                {
                    "id": rb_id,
                    "title": f"{svc}: {title}",
                    "service": svc,
                    "signature": signature,
                    "owner_team": teams[svc],
                    "oncall": rng.choice(by_team[teams[svc]]),
                    "fix_type": rng.choice(["permanent", "workaround"]),
                    "steps": steps,
                    "verify": verify,
                }
            )
            mode_of[rb_id] = line
    runbooks.sort(key=lambda r: r["id"])

    incident_services = rng.sample(services, 4)
    incident_ids = rng.sample(range(1000, 10000), 4)
    incidents, chosen = [], []
    for svc, number in zip(incident_services, incident_ids):
        runbook = rng.choice([r for r in runbooks if r["service"] == svc])
        host = f"{SERVICES[svc][0]}-{rng.randrange(1, 9)}"
        lines = [*NOISE[svc], mode_of[runbook["id"]]]
        rng.shuffle(lines)
        # a correlated alert from another service: its signature matches another service's runbook
        other = rng.choice([r for r in runbooks if r["service"] != svc])
        lines.insert(
            rng.randrange(len(lines) + 1),
            f"[alertmanager] correlated alert from {SERVICES[other['service']][0]}-{rng.randrange(1, 9)}: "
            f"{mode_of[other['id']]}",
        )
        stamp = f"2025-06-{rng.randrange(1, 28):02d}T{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:00Z"
        log = "\n".join(f"{stamp[:10]} {stamp[11:19]} {line}" for line in lines)
        incidents.append(
            {
                "id": f"INC-{number}",
                "title": f"{svc} alerts on {host}",
                "service": svc,
                "host": host,
                "severity": rng.choice(SEVERITIES),
                "opened_at": stamp,
                "log": log,
            }
        )
        chosen.append(runbook)
    for incident in incidents:  # the rule must pick exactly one runbook per incident
        hits = [r for r in runbooks if r["service"] == incident["service"] and r["signature"] in incident["log"]]
        assert len(hits) == 1, (incident["id"], [r["id"] for r in hits])
    target = rng.randrange(len(incidents))
    runbook, incident = chosen[target], incidents[target]
    expected = {
        "incident": incident["id"],
        "runbook_id": runbook["id"],
        "assignee": runbook["oncall"],
        "host": incident["host"],
        "verify": runbook["verify"],
        "status": "resolved" if runbook["fix_type"] == "permanent" else "mitigated",
    }
    incidents.sort(key=lambda x: x["id"])
    engineers.sort(key=lambda x: x["username"])
    return {"engineers": engineers, "runbooks": runbooks, "incidents": incidents}, expected


INSTRUCTION = """\
# Resolve an incident in the incident tracker

Your team's incident tracker is a small web application in `/app`: its code
is `/app/server.py` and it keeps its records in the SQLite database
`/app/data/incidents.db`. Start it in the background with
`python3 /app/server.py --port {port}` and use it at
`http://127.0.0.1:{port}/` with `curl` (there is no browser here).

Incident **{incident}** is open. Using the application:

1. Read the incident's symptom page, `/symptom/{incident}`: its service,
   host and log excerpt.
2. In the runbook library, `/runbooks`, find the runbook for this incident:
   the runbook **for the incident's service** whose symptom signature occurs
   in the incident's log excerpt. (Excerpts also carry correlated alerts from
   other services.)
3. Record the resolution with the incident's resolution form,
   `/incidents/{incident}/resolve`, and save it:
   - **Assignee**: the on-call engineer named on that runbook;
   - **Runbook id**: that runbook's id;
   - **Note**: must contain the incident's host exactly as shown on the
     symptom page and the runbook's verification command, verbatim;
   - **Status**: `resolved` if the runbook's fix type is a permanent fix,
     `mitigated` if it is a workaround.

Submit the form as the application serves it: every form carries a one-time
token, and a resolution only counts if the application saved it. Do not
change the application's code or data by other means, and leave the other
incidents as they are.
"""


def solve_sh(incident: str) -> str:
    return f"""\
#!/bin/bash
# Reference solution: drive the app with curl, as the instruction asks.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
INCIDENT="{incident}"
BASE="http://127.0.0.1:{PORT}"
WORK=/tmp/oracle-incident
mkdir -p "$WORK/runbooks"
if ! curl -fsS "$BASE/" >/dev/null 2>&1; then
  nohup python3 /app/server.py --port {PORT} >"$WORK/server.log" 2>&1 &
  for _ in $(seq 100); do curl -fsS "$BASE/" >/dev/null 2>&1 && break; sleep 0.1; done
fi
curl -fsS "$BASE/symptom/$INCIDENT" -o "$WORK/symptom.html"
curl -fsS "$BASE/runbooks" -o "$WORK/library.html"
for id in $(python3 "$HERE/pick.py" runbook-ids "$WORK/library.html"); do
  curl -fsS "$BASE/runbooks/$id" -o "$WORK/runbooks/$id.html"
done
curl -fsS "$BASE/incidents/$INCIDENT/resolve" -o "$WORK/form.html"
python3 "$HERE/pick.py" resolution "$WORK" > "$WORK/fields"
args=()
while IFS= read -r field; do args+=(--data-urlencode "$field"); done < "$WORK/fields"
code=$(curl -sS -o "$WORK/saved.html" -w '%{{http_code}}' "${{args[@]}}" "$BASE/incidents/$INCIDENT/resolve")
[ "$code" = 303 ] || {{ echo "form rejected (HTTP $code)"; cat "$WORK/saved.html"; exit 1; }}
curl -fsS "$BASE/incidents/$INCIDENT" | grep -o '<dd id="[a-z_]*">[^<]*</dd>'
"""


def generate(task_dir: Path, rng: random.Random, seed_case=None, level: int = DEFAULT_LEVEL) -> None:
    """An incident-webapp task of ``level`` (:data:`LADDER`); level 1 writes exactly the tasks of earlier
    releases."""
    task_dir = Path(task_dir)
    seed, expected = build_seed(rng)
    app = task_dir / "environment" / "app"
    if level >= 2:
        common.write(app / ladder.PROCESS, ladder.process(level))
    if level >= 3:
        common.write(app / ladder.ROTA, ladder.compose(seed, expected, rng))
    common.write(app / "server.py", APP_SOURCE.read_text(), executable=True)
    common.write(app / "data" / "seed.json", json.dumps(seed, indent=2) + "\n")
    common.write(
        task_dir / "environment" / "Dockerfile",
        common.dockerfile(apt=() if level >= 4 else ("curl",))
        + (
            "# the app's database is created at build time; the agent works with the app, not the seed file\n"
            "RUN python3 /app/server.py --init && rm /app/data/seed.json\n"
        ),
    )
    text = INSTRUCTION.format(port=PORT, incident=expected["incident"])
    if level >= 2:
        text = ladder.instruction(level, PORT, expected["incident"])
    common.write(task_dir / "instruction.md", common.reflow(text))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    if level >= 2:  # the general client (the scripted solver's program): it reads the process's documents too
        common.write_python_solution(task_dir, CLIENT_SOURCE, {"incident": expected["incident"], "port": PORT})
    else:
        common.write(task_dir / "solution" / "solve.sh", solve_sh(expected["incident"]), executable=True)
        shutil.copyfile(PICK_SOURCE, task_dir / "solution" / "pick.py")
    case = dict(expected)
    case["server_sha256"] = hashlib.sha256(APP_SOURCE.read_bytes()).hexdigest()
    case["runbooks"] = {r["id"]: r for r in seed["runbooks"]}
    case["engineers"] = seed["engineers"]
    common.write_tests(task_dir, FILES / "webapp_tests.py", case, unprivileged=True)
