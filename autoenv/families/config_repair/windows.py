"""config-repair level 7: plan a fleet's maintenance windows, a search the solver can check but not easily finish.

The levels below ask for a config read by written or recovered rules, which a capable model does (bench/README).
This one asks for what its knowledge does not guarantee: the fleet's 600 services (``/app/fleet/services.txt``) and
their dependencies (``/app/fleet/dependencies.tsv``, either direction counts, some pairs listed twice) are to be
patched in 5 nightly windows, no two dependent services in one. :mod:`autoenv.families.colouring.planted` planted a
window for every service and drew the dependencies between services of different planted windows at 13.5 per
service: just under where random graphs stop being 5-colourable (about 13.7), above where their colourings
condense into a few clusters (about 13.2: few sheets fit but the planted one's neighbours), and below where belief
propagation finds a planted colouring (16). The tests check
``/app/fleet/windows.tsv`` against their own copy of the two files and that rule, nothing else; the reference writes
the planted plan. The scripted solver runs :mod:`autoenv.families.colouring`'s search for a minute and ships the
best plan it found, so it passes only when the search lands, as a model does.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from autoenv.families import colouring
from autoenv.families.colouring import planted

if TYPE_CHECKING:
    from autoenv.families.base import TaskDraft
    from autoenv.shared.seed import SeedCase

WINDOWS = 5
#: The level's fleet: 600 services at 13.5 dependencies per service (bench/README: a capable model on this level).
SERVICES = 600
DEGREE = 13.5
PLAN = "/app/fleet/windows.tsv"
HEADER = ("service", "window")
#: What marks the level's instruction (the scripted solver's recipe reads the level from it).
MARKER = "nightly maintenance"
WORDS = ["auth", "billing", "cart", "catalog", "checkout", "search", "ledger", "mailer", "media", "notify", "orders"]
WORDS += ["pricing", "profile", "quota", "ranking", "reports", "session", "shipping", "stock", "tax", "tokens", "users"]
SUFFIX = ["api", "worker", "db", "cache", "gateway", "sync", "index", "queue", "cron", "proxy"]
#: How the scripted solver reads the level and runs the search on it.
SOLVER = colouring.SheetLevel(
    marker=MARKER,
    inputs=("/app/fleet/services.txt", "/app/fleet/dependencies.tsv"),
    source="/app/fleet",
    sheet=PLAN,
    header=HEADER,
    colours=r"\*\*(\d+) nightly maintenance\s+windows\*\*",
    reader=(("reader", "pairs"), ("items", "services.txt"), ("clashes", "dependencies.tsv")),
)
INSTRUCTION = """\
# Plan the fleet's maintenance windows

The fleet's {n} services (`/app/fleet/services.txt`, one name per line) are patched in the **{k} nightly maintenance
windows** of next week, each service in exactly one. A service is down during its window, so **two services that
depend on each other may not be patched in the same window**: `/app/fleet/dependencies.tsv` lists the dependencies
(`service<TAB>depends_on`, one per row; a dependency in either direction counts, and a pair may be listed more than
once).

Nothing else counts: windows may hold different numbers of services. Last quarter's plan fitted the {k} windows, so
it can be done, but it is lost. Write the new plan as `/app/fleet/windows.tsv`: a header line `service<TAB>window`,
then one line per service with its name and its window, a number from 1 to {k}, every service of `services.txt`
exactly once. The tests check the plan against the two files and that rule. This machine has Python 3.12 (standard
library only) and one CPU; nothing can be installed.
"""


def fleet(rng: random.Random, n: int, degree: float) -> tuple[list[str], list[tuple[str, str]], dict[str, int]]:
    """Service names (sorted), dependency rows (a random direction each, 5% listed twice) and the planted window."""
    order = planted.names(rng, n, WORDS, SUFFIX)
    pairs, window = planted.graph(rng, order, WINDOWS, degree)
    rows = []
    for a, b in pairs:
        rows.append((a, b) if rng.random() < 0.5 else (b, a))
        if rng.random() < 0.05:
            rows.append((b, a))
    rng.shuffle(rows)
    return sorted(order), rows, window


def generate(
    case: SeedCase, rng: random.Random, *, family: str, n: int = SERVICES, degree: float = DEGREE
) -> TaskDraft:
    """The level's task for ``rng``'s draw (``n`` and ``degree`` other than the level's: bench experiments)."""
    names, rows, window = fleet(rng, n, degree)
    services = "".join(f"{s}\n" for s in names)
    deps = "service\tdepends_on\n" + "".join(f"{a}\t{b}\n" for a, b in rows)
    return colouring.sheet_draft(
        case,
        rng,
        family=family,
        level=SOLVER,
        colours=WINDOWS,
        assignment=window,
        instruction=INSTRUCTION.format(n=n, k=WINDOWS),
        data={"fleet/services.txt": services, "fleet/dependencies.tsv": deps},
        items=("services.txt", services),
        clashes=("dependencies.tsv", deps),  # the rows as shipped: either direction, some twice
        category="system-administration",
        tags=["ops", "scheduling", "python", "search"],
        params={"services": n, "degree": degree, "windows": WINDOWS},
    )
