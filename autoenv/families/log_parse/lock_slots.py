"""log-parse level 7: schedule a night's batch jobs into slots by the clashes a database log records, a parse and
then a search the solver can check but not easily finish.

The levels below ask for a log read by written or recovered rules, which a capable model does (bench/README). This
one asks for what its knowledge does not guarantee: 600 jobs (``/app/jobs/jobs.txt``) are to run in 5 slots, no two
that clashed last month in one, and the clashes are in last month's database log (``/app/logs/db.log``) as lock
waits and deadlocks between jobs, among lines that are not clashes (jobs starting and finishing, waits on the
database's own processes). The graph is config-repair's maintenance windows' (:mod:`autoenv.families.colouring.
planted`, 13.5 clashes per job), each clash recorded by one to three lines. The tests check ``/app/jobs/slots.tsv``
against their own copy of the job list and of the clashing pairs; the reference writes the planted schedule. The
scripted solver reads the log with the instruction's two line formats and runs :mod:`autoenv.families.colouring`'s
search for a minute, so it passes only when the search lands, as a model does.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from autoenv.families import colouring
from autoenv.families.colouring import planted

if TYPE_CHECKING:
    from autoenv.families.base import TaskDraft
    from autoenv.shared.seed import SeedCase

SLOTS = 5
#: The level's night: 600 jobs at 13.5 clashes per job (bench/README: a capable model on this level).
JOBS = 600
DEGREE = 13.5
SCHEDULE = "/app/jobs/slots.tsv"
HEADER = ("job", "slot")
#: What marks the level's instruction (the scripted solver's recipe reads the level from it).
MARKER = "deadlock detected between job"
#: The two kinds of line that record a clash, as the instruction states them (the scripted solver's reading).
CLASH_LINES = (
    r"job (\S+) waited \d+ ms for a lock on table \S+ held by job (\S+)",
    r"deadlock detected between job (\S+) and job (\S+);",
)
#: How the scripted solver reads the level and runs the search on it.
SOLVER = colouring.SheetLevel(
    marker=MARKER,
    inputs=("/app/jobs/jobs.txt", "/app/logs/db.log"),
    source="/app/",
    sheet=SCHEDULE,
    header=HEADER,
    colours=r"\*\*(\d+) slots\*\*",
    reader=(("reader", "log"), ("items", "jobs/jobs.txt"), ("log", "logs/db.log"), ("patterns", CLASH_LINES)),
)
AREAS = ["billing", "cart", "catalog", "crm", "finance", "fleet", "hr", "inventory", "ledger", "loyalty", "orders"]
AREAS += ["payments", "payroll", "pricing", "returns", "sales", "shipping", "stock", "supplier", "tax", "web"]
KINDS = ["export", "import", "rollup", "sync", "reindex", "backup", "purge", "report", "etl", "dedupe"]
TABLES = ["orders", "invoices", "customers", "stock_levels", "shipments", "payments", "ledger_lines", "prices"]
DAEMONS = ["autovacuum", "checkpointer", "walwriter", "replication"]
INSTRUCTION = """\
# Schedule tonight's batch jobs

The warehouse database runs {n} batch jobs every night (`/app/jobs/jobs.txt`, one name per line). Last month they
all started at once and got in each other's way; from tonight they run in **{k} slots**, one after the other, each
job in exactly one slot. **Two jobs that clashed last month may not run in the same slot.** Last month's database log
is `/app/logs/db.log`; two jobs clashed if a line of it records

- a lock wait of one for the other: `job A waited N ms for a lock on table T held by job B`, or
- a deadlock between them: `deadlock detected between job A and job B` (whichever of the two was rolled back),

whichever job waited for which and however long. Waits on the database's own processes (`held by autovacuum`, ...)
are not clashes, and nothing else in the log is.

Nothing else counts: slots may hold different numbers of jobs. The DBA says the jobs fitted {k} slots when they were
set up, so it can be done. Write the schedule as `/app/jobs/slots.tsv`: a header line `job<TAB>slot`, then one line
per job with its name and its slot, a number from 1 to {k}, every job of `jobs.txt` exactly once. The tests check the
schedule against the job list and the clashes the log records. This machine has Python 3.12 (standard library only)
and one CPU; nothing can be installed.
"""


def database_log(rng: random.Random, jobs: list[str], pairs: list[tuple[str, str]]) -> str:
    """Last month's log: each clash as one to three lock waits or deadlocks, among starts, finishes, waits on the
    database's own processes and checkpoints, in a drawn order with rising timestamps."""
    events: list[str] = []
    for pair in pairs:
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            a, b = rng.sample(pair, 2)
            if rng.random() < 0.15:
                loser = rng.choice((a, b))
                events.append(f"ERROR:  deadlock detected between job {a} and job {b}; job {loser} rolled back")
            else:
                ms = rng.randrange(5, 30_000)
                events.append(f"LOG:  job {a} waited {ms} ms for a lock on table {rng.choice(TABLES)} held by job {b}")
    for name in jobs:
        for _ in range(rng.randrange(2, 6)):
            events.append(f"LOG:  job {name} started")
            events.append(f"LOG:  job {name} finished in {rng.randrange(3, 900)} s")
        if rng.random() < 0.4:
            ms, held, table = rng.randrange(5, 5_000), rng.choice(DAEMONS), rng.choice(TABLES)
            events.append(f"LOG:  job {name} waited {ms} ms for a lock on table {table} held by {held}")
    events += ["LOG:  checkpoint complete"] * (len(events) // 40)
    rng.shuffle(events)
    t = datetime(2026, 11, 1, 1, 0, tzinfo=UTC)
    lines = []
    for event in events:
        t += timedelta(milliseconds=rng.randrange(1, 120_000))
        lines.append(f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} UTC [{rng.randrange(1000, 99999)}] {event}")
    return "\n".join(lines) + "\n"


def generate(case: SeedCase, rng: random.Random, *, family: str, n: int = JOBS, degree: float = DEGREE) -> TaskDraft:
    """The level's task for ``rng``'s draw (``n`` and ``degree`` other than the level's: bench experiments)."""
    order = planted.names(rng, n, AREAS, KINDS)
    pairs, slot = planted.graph(rng, order, SLOTS, degree)
    names = sorted(order)
    jobs = "".join(f"{s}\n" for s in names)
    return colouring.sheet_draft(
        case,
        rng,
        family=family,
        level=SOLVER,
        colours=SLOTS,
        assignment=slot,
        instruction=INSTRUCTION.format(n=n, k=SLOTS),
        data={"jobs/jobs.txt": jobs, "logs/db.log": database_log(rng, names, pairs)},
        items=("jobs.txt", jobs),
        clashes=("clashes.tsv", "job_a\tjob_b\n" + "".join(f"{a}\t{b}\n" for a, b in pairs)),
        category="data-processing",
        tags=["logs", "regex", "scheduling", "python", "search"],
        params={"jobs": n, "degree": degree, "slots": SLOTS},
    )
