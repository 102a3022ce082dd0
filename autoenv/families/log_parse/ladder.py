"""log-parse above level 1: the logging config a layout is found in, hidden logs, the large log, the program.

Level 2 asks for a program (``/app/logsum.py LOG OUT``) that the tests run on logs the solver never sees, with
the corners the shipped log lacks; level 3 leaves the layout to be read from ``/app/conf/logging.ini``; level 4
adds retried writes (exact repeats of a valid line count once) and a large log the program must summarise within
the tests' time limit. The large log is generated inside the tests from a seed by :data:`BIG_LOG_SOURCE` (a
few megabytes would not belong in a task folder), and the generator runs the same source to know the answer.
"""

from __future__ import annotations

import json
import random
import textwrap
from datetime import datetime, timedelta
from typing import Any

from autoenv.families.solver import program_part

#: Each format as the services' logging config writes it: printf-style ``format`` and ``datefmt``.
CONFIG_FORMATS = {
    "iso": ("%(asctime)sZ %(levelname)s %(name)s[%(process)d]: %(message)s (took %(duration)dms)", "%Y-%m-%dT%H:%M:%S"),
    "bracket": (
        '[%(asctime)s] %(levelname)s %(name)s pid=%(process)d %(duration)dms "%(message)s"',
        "%Y-%m-%d %H:%M:%S",
    ),
    "kv": (
        'ts=%(asctime)s level=%(levelname)s svc=%(name)s pid=%(process)d dur=%(duration)dms msg="%(message)s"',
        "%Y-%m-%dT%H:%M:%S",
    ),
}

#: Each format as a ``str.format`` template for the large log's lines (fields ts, lv, svc, pid, msg, ms).
TEMPLATES = {
    "iso": "{ts:%Y-%m-%dT%H:%M:%S}Z {lv} {svc}[{pid}]: {msg} (took {ms}ms)",
    "bracket": '[{ts:%Y-%m-%d %H:%M:%S}] {lv} {svc} pid={pid} {ms}ms "{msg}"',
    "kv": 'ts={ts:%Y-%m-%dT%H:%M:%S} level={lv} svc={svc} pid={pid} dur={ms}ms msg="{msg}"',
}

BIG_LINES = 200_000
#: Seconds the tests give the program for the large log: the reference takes about 1 s; a list lookup per line
#: (quadratic) takes many minutes.
BIG_LIMIT_SEC = 60

#: Generates the large log, in the tests and in the generator alike (its own LCG: the same log on any Python).
BIG_LOG_SOURCE = """\
def big_log(seed, n, template, services, start):
    import datetime as _dt
    state = [seed]

    def rnd(k):
        state[0] = (state[0] * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        return (state[0] >> 33) % k

    levels = ["DEBUG", "INFO", "WARN", "ERROR"]
    msgs = ["request served", "cache miss", "retrying upstream", "user login", "token refreshed", "query slow"]
    when = _dt.datetime.fromisoformat(start)
    lines = []
    for _ in range(n):
        when += _dt.timedelta(seconds=rnd(3))
        if lines and rnd(40) == 0:
            lines.append(lines[-1 - rnd(min(len(lines), 5000))])  # a retried write
            continue
        line = template.format(ts=when, lv=levels[rnd(4)], svc=services[rnd(len(services))], pid=100 + rnd(9000),
                               msg=msgs[rnd(len(msgs))], ms=1 + rnd(900))
        if rnd(45) == 0:
            line = line[: 5 + rnd(25)]  # a truncated write
        lines.append(line)
    return "\\n".join(lines) + "\\n"
"""


def big_log(seed: int, n: int, template: str, services: list[str], start: str) -> str:
    """The large log, as the tests generate it (runs :data:`BIG_LOG_SOURCE`)."""
    scope: dict[str, Any] = {}
    exec(BIG_LOG_SOURCE, scope)  # noqa: S102 - our own source, the same text the tests run
    return scope["big_log"](seed, n, template, services, start)


def logging_ini(fmt: str, rng: random.Random) -> str:
    """The services' logging config, whose comments say what each field of the layout is."""
    form, datefmt = CONFIG_FORMATS[fmt]
    host = rng.choice(["shop-01", "edge-eu", "batch-7", "api-3"])
    return textwrap.dedent(f"""\
        ; Logging of the services on {host}: one record per line, UTF-8.
        ; Lines end with \\n; the Windows hosts write \\r\\n.
        [loggers]
        keys = root

        [handlers]
        keys = file

        [handler_file]
        class = FileHandler
        args = ('/app/logs/app.log', 'a')
        formatter = services

        [formatter_services]
        ; %(asctime)s    when the record was written (UTC), as datefmt below
        ; %(levelname)s  one of DEBUG, INFO, WARN, ERROR (upper case)
        ; %(name)s       the service: lower-case letters
        ; %(process)d    the process id, a non-negative integer
        ; %(duration)d   how long the request took, whole milliseconds
        ; %(message)s    free text (never a double quote)
        format = {form}
        datefmt = {datefmt}
        """)


def hidden_logs(
    fmt: str, rng: random.Random, render: Any, services: list[str], window: tuple[datetime, datetime] | None
) -> dict[str, list[str]]:
    """Small logs with the corners the shipped log lacks, as lists of lines (``render(ts, level, service, pid,
    msg, ms)`` writes one valid line): empty, CRLF line ends with unicode messages, a tie on the mean duration,
    lines on the window's bounds (or the first and last second) and a log with no valid line."""
    a, b = sorted(rng.sample(services, 2))
    start = window[0] if window else datetime(2024, 6, 1, 8, 0, 0)
    tick = [start]

    def at(seconds: int) -> datetime:
        tick[0] = tick[0] + timedelta(seconds=seconds)
        return tick[0]

    crlf = [
        render(at(5), rng.choice(["INFO", "WARN", "ERROR"]), rng.choice(services), rng.randint(100, 999), msg, ms)
        + "\r"
        for msg, ms in [("café ouvert ✓", 12), ("naïve façade", 40), ("Grüße aus Köln", 7), ("東京 request served", 90)]
    ]
    tie = [
        render(at(3), "INFO", b, 201, "request served", 100),
        render(at(3), "ERROR", a, 202, "query slow", 150),
        render(at(3), "WARN", a, 203, "cache miss", 50),
        render(at(3), "INFO", b, 204, "job finished", 100),
    ]
    bounds: list[str] = []
    if window:
        before, end = window[0] - timedelta(seconds=1), window[1]
        bounds = [
            render(before, "ERROR", a, 301, "too early", 999),
            render(window[0], "ERROR", a, 302, "first second", 10),
            render(end - timedelta(seconds=1), "WARN", b, 303, "last second", 20),
            render(end, "ERROR", b, 304, "window closed", 998),
        ]
    else:
        bounds = [render(at(1), "ERROR", a, 305, "only one", 33)]
    junk = ["", "   ", "Traceback (most recent call last):", bounds[0].replace("ERROR", "error", 1), "\t"]
    return {
        "hidden_empty.log": [],
        "hidden_crlf.log": crlf,
        "hidden_tie.log": tie,
        "hidden_bounds.log": bounds,
        "hidden_junk.log": junk,
    }


def _solver_part(start: str, end: str, indent: str = "") -> str:
    """Lines of the scripted solver's ``files/solver_program.py``, re-indented to ``indent``."""
    return textwrap.indent(textwrap.dedent(program_part(__file__, start, end)), indent)


def program(params: dict[str, Any]) -> str:
    """The reference program ``/app/logsum.py`` (the solution writes it): the task's rules, for any log.

    Which lines count, and what is tallied and summarised from them, are the scripted solver's own lines
    (``files/solver_program.py``): one text, so the reference and the solver cannot read the rules two ways.
    """
    head = "import json, re, sys\nfrom datetime import datetime\n\nP = json.loads(" + repr(json.dumps(params)) + ")\n"
    return (
        head
        + textwrap.dedent("""\
        pattern = re.compile(P["regex"])
        window = tuple(datetime.fromisoformat(w) for w in P["window"]) if P["window"] else None
        total = malformed = 0
        by_level, target, durations, seen = {}, {}, {}, set()
        with open(sys.argv[1], encoding="utf-8", newline="") as fh:
            lines = fh.read().split("\\n")
        for line in lines:
            line = line.removesuffix("\\r")
        """)
        + _solver_part("        if not line.strip():\n", '        if P.get("retries"):\n', "    ")
        + textwrap.indent(
            textwrap.dedent("""\
            if P["retries"]:
                if line in seen:
                    continue
                seen.add(line)
            g = m.groups()
            when = datetime.strptime(g[P["i_ts"]], P["tfmt"])
            level, service, ms = g[P["i_level"]], g[P["i_service"]], int(g[P["i_ms"]])
            """),
            "    ",
        )
        + _solver_part("        if window and not (window[0] <= when < window[1]):\n", "means = {", "    ")
        + _solver_part("means = {", 'with open(out_path, "w") as fh:\n')
        + textwrap.dedent("""\
        with open(sys.argv[2], "w") as fh:
            json.dump(out, fh, indent=2, sort_keys=True)
        """)
    )


#: Where each format's fields are in its regex's groups: timestamp, level, service, duration; and its strptime format.
GROUPS = {
    "iso": (0, 1, 2, 5, "%Y-%m-%dT%H:%M:%SZ"),
    "bracket": (0, 1, 2, 4, "%Y-%m-%d %H:%M:%S"),
    "kv": (0, 1, 2, 4, "%Y-%m-%dT%H:%M:%S"),
}


def program_params(fmt: str, regex: str, level: str, key: str, window: Any, retries: bool) -> dict[str, Any]:
    i_ts, i_level, i_service, i_ms, tfmt = GROUPS[fmt]
    if fmt == "iso":  # the regex's timestamp group keeps the Z
        regex = regex.replace(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)", r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})Z")
        tfmt = "%Y-%m-%dT%H:%M:%S"
    return {
        "regex": regex,
        "tfmt": tfmt,
        "i_ts": i_ts,
        "i_level": i_level,
        "i_service": i_service,
        "i_ms": i_ms,
        "level": level,
        "key": key,
        "window": [w.isoformat() for w in window] if window else None,
        "retries": retries,
    }


def tests(hidden: dict[str, dict[str, Any]], big: dict[str, Any] | None) -> str:
    """The tests of levels 2 and up, appended to level 1's: the program on every hidden log (and the large one)."""
    text = textwrap.dedent(f"""\


        # -- the program, on logs the solver never saw ---------------------------------------------
        import subprocess
        import time

        import pytest
        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        HIDDEN = json.loads({json.dumps(hidden, sort_keys=True)!r})


        def run_program(log_bytes, timeout=60):
            work = agent_folder({{"in.log": log_bytes}}, writable=True)
            started = time.monotonic()
            out = run_agent(["python3", "/app/logsum.py", str(work / "in.log"), str(work / "out.json")], cwd="/app",
                            text=True, timeout=timeout)
            seconds = time.monotonic() - started
            assert out.returncode == 0, out.stderr[-2000:]
            return json.loads(read_agent_file(work / "out.json")), seconds


        @pytest.mark.parametrize("name", sorted(HIDDEN))
        def test_program_on_unseen_log(name):
            data = (Path(__file__).with_name(name)).read_bytes()
            got, _ = run_program(data)
            assert got == HIDDEN[name], name
        """)
    if big is not None:
        text += BIG_LOG_SOURCE.join(["\n\n", "\n\n"]) + textwrap.dedent(f"""\
            BIG = json.loads({json.dumps(big, sort_keys=True)!r})


            def test_program_on_a_large_log_in_time():
                text = big_log(BIG["seed"], BIG["lines"], BIG["template"], BIG["services"], BIG["start"])
                try:
                    got, seconds = run_program(text.encode(), timeout=BIG["limit"])
                except subprocess.TimeoutExpired:
                    pytest.fail(f"the program did not summarise {{BIG['lines']}} lines within {{BIG['limit']}} s")
                assert got == BIG["expected"]
            """)
    return text
