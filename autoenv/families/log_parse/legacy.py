"""log-parse level 5: retire a legacy C tool whose behaviour is the specification.

The earlier levels tell the rules (or put them in a file a careful solver reads first), and a capable model passes
them nearly always (bench/README). Here nothing is told: the task ships ``/usr/local/bin/logsum``, a stripped
static binary built from ``files/logsum.c`` with three numbers drawn per task (its line buffer, its name buffer,
its service table), and asks for ``/app/logsum.py`` printing the same bytes for any log. What a 2003 C program
does with long lines, NUL bytes, long or non-ASCII names, 32-bit sums, level prefixes and a full table is found
only by running it on such input; the tests run the replacement on hidden logs made of exactly those corners,
with the tool and its licence removed first (a copy of the binary in /app cannot run, and is refused).

What every legacy-tool level shares (the build, the expected outputs, the task's files and tests, the solver's
turns) is :mod:`autoenv.families.legacy_tool`'s; this module draws the numbers, the inputs and the instruction.
"""

from __future__ import annotations

import random
import textwrap
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft
from autoenv.families.legacy_tool import LegacyTool

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

#: The drawn parameters and the C names the tool is compiled with them as.
MACROS = {"line_max": "LINE_MAX_", "svc_len": "SVC_LEN", "max_svc": "MAX_SVC"}
LOGSUM = LegacyTool("logsum", "2.3", __file__, MACROS, "log-parse level 5", "logs", "LOG")
#: The three compile-time numbers, drawn per task: what the solver has to find by running the tool.
CHOICES = {"line_max": (96, 112, 128, 160), "svc_len": (9, 10, 11, 13), "max_svc": (12, 14, 16, 20)}
SAMPLE = "/app/logs/app.log"

SERVICES = ["auth", "billing", "search", "gateway", "mailer", "reports", "ledger", "tokens"]
LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]
MESSAGES = ["request served", "cache miss", "retrying upstream", "user login", "query slow", "job finished"]


def line(ts: datetime, level: str, service: str, pid: int, ms: int | str, msg: str) -> str:
    """One record as the services write it (the tool's one layout)."""
    return f'[{ts:%Y-%m-%d %H:%M:%S}] {level} {service} pid={pid} {ms}ms "{msg}"'


def sample_log(rng: random.Random, services: list[str], start: datetime) -> str:
    """The log shipped in /app/logs: ordinary records and the usual malformed ones, none of the hidden corners
    (short lines, short ASCII names, small numbers, fewer services than the tool tracks)."""
    lines, ts = [], start
    for _ in range(rng.randint(180, 320)):
        ts += timedelta(seconds=rng.randint(1, 60))
        good = line(ts, rng.choices(LEVELS, [2, 10, 3, 2])[0], rng.choice(services), rng.randint(100, 9999),
                    rng.randint(1, 900), rng.choice(MESSAGES))  # fmt: skip
        roll = rng.random()
        if roll < 0.03:
            lines.append(good[: rng.randint(8, 30)])  # a truncated write
        elif roll < 0.05:
            lines.append(good.replace(" INFO ", " info ").replace(" ERROR ", " error "))
        elif roll < 0.06:
            lines.append("Traceback (most recent call last):")
        elif roll < 0.08:
            lines.append("")
        else:
            lines.append(good)
    return "\n".join(lines) + "\n"


def hidden_logs(rng: random.Random, params: dict[str, int], services: list[str], start: datetime) -> dict[str, Any]:
    """The logs the tests run the replacement on, one corner each (None: a path that does not exist)."""
    line_max, keep, table = params["line_max"], params["svc_len"] - 1, params["max_svc"]
    ts = [start]

    def at() -> datetime:
        ts[0] += timedelta(seconds=rng.randint(1, 30))
        return ts[0]

    def rec(level: str = "INFO", service: str | None = None, ms: int | str | None = None, msg: str = "ok") -> str:
        return line(at(), level, service or rng.choice(services), rng.randint(100, 999),
                    rng.randint(1, 500) if ms is None else ms, msg)  # fmt: skip

    def padded(total: int, **kw: Any) -> str:
        """A record whose line (without its newline) is ``total`` bytes long."""
        base = rec(msg="", **kw)
        return base[:-1] + "x" * max(0, total - len(base)) + '"'

    # the line buffer: lines on both sides of its size, and one whose cut falls where a whole record starts
    head = rec("WARN", services[1], 5, "")[:-1]  # its message left open: the tool never reads it
    smuggled = head + "y" * (line_max - 1 - len(head)) + rec("ERROR", services[0], 77, "inner")
    long_lines = [padded(n) for n in (line_max - 3, line_max - 2, line_max - 1, line_max, line_max + 7)]
    long_lines += [padded(2 * line_max + 11, level="ERROR"), smuggled, rec()]
    # the name buffer: names at, over and far over its size (two become one), upper case, a UTF-8 name cut inside
    stem = (services[2] + "frontendcluster")[: keep + 6]
    names = [stem[:keep], stem[: keep + 1], stem, services[2].capitalize(), services[2], "zürich" + "é" * keep]
    name_lines = [rec(rng.choice(LEVELS), name) for name in names for _ in range(rng.randint(1, 3))]
    # 32-bit durations: the largest, one past it, a sum that wraps, leading zeros
    numbers = [rec("INFO", services[3], ms) for ms in ("4294967295", "4294967296", "0007", "99999999999")]
    numbers += [rec("WARN", services[-2], 3_000_000_000) for _ in range(2)] + [rec("ERROR", services[-2], 12)]
    # level names by prefix, in any case
    level_lines = [rec(lv) for lv in ("WARNING", "ERRORS", "INFORMATION", "DEBUGGING", "Warn", "ERR", "info", "WARN")]
    # bytes: NUL after and before the duration, a line starting with NUL, \r\r\n, spaces, a tab, a lone \r\n
    good = rec("ERROR", services[-1], 41, "nul after")
    bad = rec("ERROR", services[-1], 42, "nul before")
    cut = bad.index("42ms")
    raw = [
        good.encode() + b"\0tail",
        bad[:cut].encode() + b"\0" + bad[cut:].encode(),
        b"\0" + rec("INFO").encode(),
        rec("WARN", services[-1], 9).encode() + b"\r\r",
        b"     ",
        b"\t",
        rec("INFO").replace("ms ", "ms\t").encode(),
        b"\r",
        rec("DEBUG", services[-1], 1, "caf\xc3\xa9 \xff\xfe").encode(),
    ]
    # the service table: more services than it holds, with ties in the counts
    many = [f"svc{i:02d}" for i in range(table + 6)]
    rng.shuffle(many)
    many_lines = [rec("INFO", name, 10 + i) for i, name in enumerate(many) for _ in range(1 + i % 3)]
    crlf = "".join(rec(rng.choice(LEVELS)) + "\r\n" for _ in range(12))
    return {
        "long_lines.log": ("\n".join(long_lines) + "\n").encode(),
        "names.log": ("\n".join(name_lines) + "\n").encode(),
        "numbers.log": ("\n".join(numbers) + "\n").encode(),
        "levels.log": ("\n".join(level_lines) + "\n").encode(),
        "bytes.log": b"\n".join(raw) + b"\n",
        "many_services.log": ("\n".join(many_lines) + "\n").encode(),
        "crlf.log": crlf.encode(),
        "empty.log": b"",
        "blank_lines.log": b"\n\r\n\n",
        "no_newline_at_end.log": rec("ERROR").encode(),
        "missing.log": None,
    }


def instruction(services: list[str], *, archived: bool = False) -> str:
    removed = (
        "The tool was removed from every machine before\n        anyone wrote down what it does."
        if archived
        else "The tool is being removed from every machine, and nobody has\n        ever written down what it does."
    )
    summarises = "summarised" if archived else "summarises"
    return textwrap.dedent(f"""\
        # Retire the legacy `logsum`

        The operations team {summarises} the services' logs ({", ".join(services)}, ...) with
        {LOGSUM.marker} tool, a C program from 2003 whose source is lost: `{LOGSUM.tool} LOG` prints a report of
        the log file `LOG` to standard output. {removed}

        Write `/app/logsum.py`, a replacement such that `python3 /app/logsum.py LOG` prints exactly what
        `logsum LOG` prints, byte for byte, and exits with the same status, for **any** file `LOG` the
        services may write, including the odd ones: very long lines, NUL and other stray bytes, numbers too
        large for the tool, service names of any length and in any bytes, more services than the tool can
        keep track of, a file that is empty or does not exist. What it writes to standard error does not matter.

        """) + LOGSUM.closing(
        f"- A sample of the services' logs is in `{SAMPLE}`",
        "`logsum` is installed here, so you can\n  run it on any file you like.\n",
        archived=archived,
    )


def generate(
    case: SeedCase, rng: random.Random, *, family: str, category: str, tags: list[str], archived: bool = False
) -> TaskDraft:
    """A level-5 task: the tool built with drawn numbers, a sample log, hidden logs and the tool's own reports; at
    level 6 (``archived``) the tool is gone and the archive of its runs on other logs of the same kinds is left."""
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    services = sorted(rng.sample(SERVICES, rng.randint(4, 6)))
    start = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 12), 0, 0)
    sample = sample_log(rng, services, start)
    hidden = hidden_logs(rng, params, services, start + timedelta(days=1))
    archive = None
    if archived:
        past = hidden_logs(rng, params, services, start - timedelta(days=40))
        archive = LOGSUM.archive_runs(params, {**past, "sample.log": sample.encode()}, rng, space=CHOICES)
    return LOGSUM.draft(
        case, rng, family=family, category=category, tags=tags, hint="archived-logsum" if archived else "legacy-logsum",
        record={"services": len(services)}, instruction=instruction(services, archived=archived), params=params,
        sample_path=SAMPLE, sample=sample, hidden=hidden, archive=archive,
    )  # fmt: skip
