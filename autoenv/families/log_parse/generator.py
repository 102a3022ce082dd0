"""Log parsing family: summarise an application log with malformed lines into JSON.

Seed failures: regexes that are too loose (malformed lines counted), level
names matched case-insensitively when the spec says exact, time windows
applied to the wrong bound. The template varies the line format, services,
the level of interest, an optional time window and the amount of junk. That is level 1 of a 7-level ladder
(:data:`LADDER`, :mod:`.ladder`); levels 5 and 6 (:mod:`.legacy`) retire a legacy C log tool, and level 7
(:mod:`.lock_slots`) schedules batch jobs by the clashes a database log records, a parse and then a search.
"""

from __future__ import annotations

import json
import random
import re
import textwrap
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.levels import load_ladder
from autoenv.families.log_parse import ladder, legacy, lock_slots

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "log-parse"
DESCRIPTION = "summarise a service log with malformed lines into JSON"
KEYWORDS = ("log", "parse", "regex", "malformed", "access log", "grep", "json report")
CATEGORY = "text-processing"
TAGS = ["python", "logs", "regex", "json"]

LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]
SERVICES = ["auth", "billing", "search", "gateway", "inventory", "mailer", "reports", "scheduler"]
MESSAGES = [
    "request served",
    "cache miss",
    "retrying upstream",
    "user login",
    "token refreshed",
    "query slow",
    "connection reset",
    "job finished",
    "payload rejected",
    "disk usage high",
]

#: name -> (layout shown to the solver, regex for a valid line)
FORMATS = {
    "iso": (
        "TIMESTAMP LEVEL SERVICE[PID]: MESSAGE (took DURATIONms)",
        r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z) (DEBUG|INFO|WARN|ERROR) ([a-z]+)\[(\d+)\]: (.+) \(took (\d+)ms\)$",
    ),
    "bracket": (
        '[TIMESTAMP] LEVEL SERVICE pid=PID DURATIONms "MESSAGE"',
        r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] (DEBUG|INFO|WARN|ERROR) ([a-z]+) pid=(\d+) (\d+)ms \"([^\"]*)\"$",
    ),
}


#: Formats a task may *find* in its logging config (levels 3 and up); levels 1-2 draw from ``FORMATS`` alone.
FOUND_FORMATS = {
    **FORMATS,
    "kv": (
        'ts=TIMESTAMP level=LEVEL svc=SERVICE pid=PID dur=DURATIONms msg="MESSAGE"',
        r"^ts=(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}) level=(DEBUG|INFO|WARN|ERROR) svc=([a-z]+) pid=(\d+) "
        r'dur=(\d+)ms msg="([^"]*)"$',
    ),
}

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file


def _line(fmt: str, ts: datetime, level: str, service: str, pid: int, msg: str, ms: int) -> str:
    if fmt == "iso":
        return f"{ts:%Y-%m-%dT%H:%M:%S}Z {level} {service}[{pid}]: {msg} (took {ms}ms)"
    if fmt == "kv":
        return f'ts={ts:%Y-%m-%dT%H:%M:%S} level={level} svc={service} pid={pid} dur={ms}ms msg="{msg}"'
    return f'[{ts:%Y-%m-%d %H:%M:%S}] {level} {service} pid={pid} {ms}ms "{msg}"'


def _junk(rng: random.Random, good: str) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return good[: rng.randint(5, max(6, len(good) - 8))]  # truncated write
    if kind == 1:
        return (
            good.replace(" ERROR ", " error ")
            .replace(" INFO ", " info ")
            .replace(" WARN ", " Warn ")
            .replace(" DEBUG ", " debug ")
            if any(f" {lv} " in good for lv in LEVELS)
            else "garbage"
        )
    if kind == 2:
        return "Traceback (most recent call last):"
    if kind == 3:
        return "    at com.example.Handler.run(Handler.java:42)"
    if kind == 4:
        return good + " trailing"
    return re.sub(r"\d+ms", "?ms", good, count=1)


def _parse(fmt: str, line: str) -> dict[str, Any] | None:
    m = re.match(FOUND_FORMATS[fmt][1], line)
    if not m:
        return None
    if fmt == "iso":
        ts, level, service, pid, msg, ms = m.groups()
        when = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")
    elif fmt == "kv":
        ts, level, service, pid, ms, msg = m.groups()
        when = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S")
    else:
        ts, level, service, pid, ms, msg = m.groups()
        when = datetime.strptime(ts, "%Y-%m-%d %H:%M:%S")
    return {"when": when, "level": level, "service": service, "ms": int(ms)}


def summarise(
    fmt: str,
    lines: list[str],
    level: str,
    window: tuple[datetime, datetime] | None,
    *,
    crlf: bool = False,
    retries: bool = False,
) -> dict[str, Any]:
    """The report the tests expect; ``crlf``: a ``\\r`` ending a line is its line end; ``retries``: a valid line
    repeating an earlier valid line exactly is a retry and counts neither as valid nor as malformed."""
    total = malformed = 0
    seen: set[str] = set()
    by_level: dict[str, int] = {}
    target: dict[str, int] = {}
    durations: dict[str, list[int]] = {}
    for line in lines:
        if crlf:
            line = line.removesuffix("\r")
        if not line.strip():
            continue
        rec = _parse(fmt, line)
        if rec is None:
            malformed += 1
            continue
        if retries:
            if line in seen:
                continue
            seen.add(line)
        if window and not (window[0] <= rec["when"] < window[1]):
            continue
        total += 1
        by_level[rec["level"]] = by_level.get(rec["level"], 0) + 1
        if rec["level"] == level:
            target[rec["service"]] = target.get(rec["service"], 0) + 1
        durations.setdefault(rec["service"], []).append(rec["ms"])
    means = {s: sum(v) / len(v) for s, v in durations.items()}
    slowest = sorted(means, key=lambda s: (-means[s], s))[0] if means else None
    return {
        "total": total,
        "malformed": malformed,
        "by_level": dict(sorted(by_level.items())),
        f"{level.lower()}_by_service": dict(sorted(target.items())),
        "slowest_service": slowest,
        "max_ms": max((ms for v in durations.values() for ms in v), default=0),
    }


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A log-parse task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    rung = level
    if rung >= 7:  # the batch jobs' slots from the database log: a parse, then a search (lock_slots.py)
        return lock_slots.generate(case, rng, family=NAME)
    if rung >= 5:  # the legacy tool (6: only the archive of its runs is left): a task of its own shape (legacy.py)
        return legacy.generate(case, rng, family=NAME, category=CATEGORY, tags=TAGS, archived=rung >= 6)
    fmt = rng.choice(sorted(FOUND_FORMATS if rung >= 3 else FORMATS))
    level = rng.choice(["ERROR", "WARN"])
    services = rng.sample(SERVICES, rng.randint(3, 6))
    start = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 12), 0, 0)
    n = rng.randint(250, 600)
    lines: list[str] = []
    ts = start
    base_ms = {s: rng.randint(20, 400) for s in services}
    for _ in range(n):
        ts += timedelta(seconds=rng.randint(1, 90))
        service = rng.choice(services)
        lv = rng.choices(LEVELS, weights=[2, 10, 3, 2])[0]
        good = _line(
            fmt,
            ts,
            lv,
            service,
            rng.randint(100, 9999),
            rng.choice(MESSAGES),
            max(1, int(rng.gauss(base_ms[service], base_ms[service] / 3))),
        )
        lines.append(_junk(rng, good) if rng.random() < 0.07 else good)
        if rng.random() < 0.02:
            lines.append("")
    if rung >= 4:  # retried writes: a valid line written again, a little later in the file
        for _ in range(rng.randint(8, 20)):
            at = rng.randrange(1, len(lines))
            earlier = lines[rng.randrange(at)]
            if _parse(fmt, earlier) is not None:
                lines.insert(at, earlier)
    window = None
    if rng.random() < 0.5:
        span = (ts - start).total_seconds()
        w0 = start + timedelta(seconds=int(span * rng.uniform(0.1, 0.3)))
        w1 = start + timedelta(seconds=int(span * rng.uniform(0.6, 0.9)))
        window = (w0.replace(second=0), w1.replace(second=0))
    log_text = "\n".join(lines) + "\n"
    expected = summarise(fmt, lines, level, window, crlf=rung >= 2, retries=rung >= 4)
    layout, _ = FOUND_FORMATS[fmt]
    key = f"{level.lower()}_by_service"
    ts_example = _line(fmt, start, "INFO", services[0], 4242, "request served", 87)
    window_text = ""
    if window:
        fmt_ts = {"iso": "%Y-%m-%dT%H:%M:%SZ", "kv": "%Y-%m-%dT%H:%M:%S"}.get(fmt, "%Y-%m-%d %H:%M:%S")
        window_text = textwrap.dedent(f"""
            Only lines whose timestamp lies in the window from `{window[0].strftime(fmt_ts)}` (inclusive)
            to `{window[1].strftime(fmt_ts)}` (exclusive) count for the statistics below; valid lines
            outside it are ignored (malformed lines are counted wherever they are).
            """)
    told = textwrap.dedent(f"""\
        # Summarise the service log

        `/app/logs/app.log` is the log of a group of services. A **valid** line
        has exactly this layout (single spaces):

        ```
        {layout}
        ```

        for example

        ```
        {ts_example}
        ```

        `LEVEL` is exactly one of `DEBUG`, `INFO`, `WARN`, `ERROR` (upper case),
        `SERVICE` is lower-case letters, `PID` and `DURATION` are non-negative
        integers, and nothing comes before or after the layout. Empty lines (nothing but white space)
        are ignored. Every other line (stack-trace lines, truncated writes, wrong
        case, extra text) is **malformed**.
        """)
    if rung >= 3:
        told = textwrap.dedent("""\
            # Summarise the service log

            `/app/logs/app.log` is the log of a group of services. A **valid** line has exactly the layout
            the services' logging configuration declares (find it under `/app/conf/`): every field as
            documented there, nothing before or after. Empty lines (nothing but white space) are ignored.
            Every other line (stack-trace lines, truncated writes, wrong case, extra text) is **malformed**.
            """)
    instruction = (
        told
        + window_text
        + textwrap.dedent(f"""
        Write `/app/summary.json`, one JSON object with exactly these keys:

        | key | value |
        | --- | --- |
        | `total` | number of valid lines that count |
        | `malformed` | number of malformed lines |
        | `by_level` | object: level -> number of counted lines with that level (levels that occur) |
        | `{key}` | object: service -> number of counted `{level}` lines (services with at least one) |
        | `slowest_service` | the service with the highest mean duration over its counted lines (ties: alphabetically first) |
        | `max_ms` | the largest duration over counted lines |

        All counts and durations are JSON integers. Do not modify the log.
        """)  # noqa: E501
        + (_program_text(rung, windowed=bool(window)) if rung >= 2 else "")
    )
    expected_json = json.dumps(expected, sort_keys=True)
    tests = textwrap.dedent(f'''\
        import hashlib
        import json
        from pathlib import Path

        SUMMARY = Path("/app/summary.json")
        LOG = Path("/app/logs/app.log")
        LOG_SHA256 = "{sha256_text(log_text)}"
        EXPECTED = json.loads({expected_json!r})


        def summary():
            assert SUMMARY.exists(), "missing /app/summary.json"
            return json.loads(SUMMARY.read_text())


        def test_log_unchanged():
            assert hashlib.sha256(LOG.read_bytes()).hexdigest() == LOG_SHA256


        def test_keys():
            assert set(summary()) == set(EXPECTED)


        def test_counts():
            got = summary()
            assert got["total"] == EXPECTED["total"]
            assert got["malformed"] == EXPECTED["malformed"]


        def test_by_level():
            assert summary()["by_level"] == EXPECTED["by_level"]


        def test_target_level_by_service():
            assert summary()["{key}"] == EXPECTED["{key}"]


        def test_durations():
            got = summary()
            assert got["slowest_service"] == EXPECTED["slowest_service"]
            assert got["max_ms"] == EXPECTED["max_ms"] and type(got["max_ms"]) is int
        ''')
    # The tests above parse the log again, as files/solver_program.py does (duplicates lists the pair): a grader that
    # shared the solver's code would share its mistakes, and neither can import autoenv inside the task.
    window_py = "None" if not window else f"({window[0].isoformat()!r}, {window[1].isoformat()!r})"
    solution = solve_sh(
        textwrap.dedent(f'''\
        python3 - <<'PY'
        import json, re
        from datetime import datetime

        PATTERN = re.compile({FOUND_FORMATS[fmt][1]!r})
        WINDOW = {window_py}
        window = tuple(datetime.fromisoformat(w) for w in WINDOW) if WINDOW else None
        total = malformed = 0
        by_level, target, durations = {{}}, {{}}, {{}}
        for line in open("/app/logs/app.log").read().split("\\n"):
            if not line.strip():
                continue
            m = PATTERN.match(line)
            if not m:
                malformed += 1
                continue
            g = m.groups()
            if "{fmt}" == "iso":
                when, level, service, ms = datetime.strptime(g[0], "%Y-%m-%dT%H:%M:%SZ"), g[1], g[2], int(g[5])
            else:
                when, level, service, ms = datetime.strptime(g[0], "%Y-%m-%d %H:%M:%S"), g[1], g[2], int(g[4])
            if window and not (window[0] <= when < window[1]):
                continue
            total += 1
            by_level[level] = by_level.get(level, 0) + 1
            if level == "{level}":
                target[service] = target.get(service, 0) + 1
            durations.setdefault(service, []).append(ms)
        means = {{s: sum(v) / len(v) for s, v in durations.items()}}
        out = {{"total": total, "malformed": malformed, "by_level": by_level, "{key}": target,
               "slowest_service": sorted(means, key=lambda s: (-means[s], s))[0],
               "max_ms": max(ms for v in durations.values() for ms in v)}}
        json.dump(out, open("/app/summary.json", "w"), indent=2, sort_keys=True)
        PY
        cat /app/summary.json
        ''')
    )
    name = task_name("log-parse", rng, f"{fmt}-{level.lower()}")
    app: dict[str, Any] = {"logs/app.log": log_text}
    hidden: dict[str, Any] = {}
    toml: dict[str, Any] = {}
    if rung >= 2:  # the program, run by the tests on logs the solver never sees
        support, tests, solution = _above_level_one(rung, fmt, level, key, services, window, start, tests, rng)
        hidden.update(support)
        if rung >= 3:
            app["conf/logging.ini"] = ladder.logging_ini(fmt, rng)
        if rung >= 4:
            toml = {"agent_timeout": 600.0, "verifier_timeout": 300.0}
    files = task_files(case, NAME, CATEGORY, TAGS, instruction, solution, tests, app=app, hidden=hidden, **toml)
    params = {
        "format": fmt,
        "level": level,
        "services": len(services),
        "lines": len(lines),
        "window": window is not None,
        "leak_hint": None,
        "output_path": "/app/summary.json",
        "stale_output": ("summary.json", json.dumps(expected, indent=2, sort_keys=True) + "\n"),
    }
    return TaskDraft(name=name, family="log-parse", files=files, params=params)


def _program_text(rung: int, *, windowed: bool) -> str:
    """The instruction's part about ``/app/logsum.py`` (levels 2 and up); it names the window only where the
    instruction has one."""
    rules = "the same rules, window and level of interest" if windowed else "the same rules and level of interest"
    text = textwrap.dedent(f"""
        ## The program

        Also write `/app/logsum.py`: `python3 /app/logsum.py LOG OUT` must write to `OUT` the same JSON
        object for any log file `LOG` of these services ({rules}),
        and the tests run it on other logs than the shipped one. A log may be empty (then `total` and
        `malformed` are 0, both objects are empty, `slowest_service` is `null` and `max_ms` is 0), its
        lines may end with `\\r\\n` (the `\\r` belongs to the line end, not to the line) and its
        messages may hold any UTF-8 text.
        """)
    if rung >= 4:
        text += textwrap.dedent("""
            A retried write repeats a valid line exactly, every character of it: a valid line that repeats
            an earlier valid line of the same log is not counted at all (neither as valid nor as malformed).
            Logs run to a few hundred thousand lines: the tests give the program one minute for 200,000.
            """)
    return text


def _above_level_one(
    rung: int,
    fmt: str,
    level: str,
    key: str,
    services: list[str],
    window: tuple[datetime, datetime] | None,
    start: datetime,
    tests: str,
    rng: random.Random,
) -> tuple[dict[str, bytes], str, str]:
    """The hidden logs (support files), the tests with the program's cases, and the solution that writes it."""
    retries = rung >= 4
    logs = ladder.hidden_logs(fmt, rng, lambda *fields: _line(fmt, *fields), services, window)
    support = {name: ("\n".join(lines) + "\n").encode() if lines else b"" for name, lines in logs.items()}
    expected = {name: summarise(fmt, lines, level, window, crlf=True, retries=retries) for name, lines in logs.items()}
    big = None
    if rung >= 4:
        begin = (window[0] - timedelta(hours=1)) if window else start
        big = {
            "seed": rng.randrange(1, 2**31),
            "lines": ladder.BIG_LINES,
            "template": ladder.TEMPLATES[fmt],
            "services": services,
            "start": begin.isoformat(),
            "limit": ladder.BIG_LIMIT_SEC,
        }
        text = ladder.big_log(big["seed"], big["lines"], big["template"], services, big["start"])
        big["expected"] = summarise(fmt, text.split("\n"), level, window, crlf=True, retries=True)
    params = ladder.program_params(fmt, FOUND_FORMATS[fmt][1], level, key, window, retries)
    solution = solve_sh(
        "cat > /app/logsum.py <<'LOGSUM'\n"
        + ladder.program(params)
        + "LOGSUM\npython3 /app/logsum.py /app/logs/app.log /app/summary.json\ncat /app/summary.json\n"
    )
    return support, tests + ladder.tests(expected, big), solution
