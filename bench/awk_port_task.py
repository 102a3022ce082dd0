"""Port an awk report that nothing here can run (an experiment, not a level): can behaviour that is settled but
cannot be checked where the solver works make a task hard?

bench/README's "a capable model porting an awk script it cannot run" measured a capable model on these tasks. The
image holds `/srv/report/report.awk` (a 30-line gawk report with the traps of awk's semantics: field splitting
that keeps CR, strtod prefixes, strnum comparisons, uninitialised values, `%.6g` output, byte lengths in the C
locale), one sample log with its report, and no awk of any kind. `/app/report.py` must print what
`LC_ALL=C gawk -f report.awk LOG` prints for 12 hidden logs, each made of one kind of odd line. Expected reports
come from `bench/awk_port/port.py` (the reference solution); `--check` compares each with gawk's own output and
needs gawk on the host. Check a written task with ``autoenv validate DIR``.

Run: .venv/bin/python bench/awk_port_task.py [--tasks N] [--out DIR] [--check]
"""

from __future__ import annotations

import argparse
import base64
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.base import dockerfile, pytest_test_sh, solve_sh, task_toml, write_files  # noqa: E402
from autoenv.families.legacy_tool import tests_text  # noqa: E402
from autoenv.grading import AGENTCALL  # noqa: E402
from bench.awk_port.port import report  # noqa: E402

HERE = Path(__file__).resolve().parent / "awk_port"
SERVICES = ["checkout", "search", "catalog", "auth", "payments", "images", "profile", "orders"]
USERS = ["ana", "bo", "chen", "dmitri", "eve", "fatima", "gus", "hana", "ivo", "jules", "kwame", "lena"]
PATHS = ["GET /cart", "POST /pay", "GET /api/items?page=2", "GET /", "PUT /profile", "DELETE /session"]
NO_AWK = (
    "rm -f /usr/bin/awk /usr/bin/mawk /usr/bin/nawk /usr/bin/gawk /etc/alternatives/awk /etc/alternatives/nawk "
    "/usr/bin/busybox /bin/busybox"
)
INSTRUCTION = """\
# Port the nightly latency report to Python

Every night, cron ran the web tier's latency report:

    LC_ALL=C gawk -f /srv/report/report.awk /var/log/web/access.log > report.txt

with GNU Awk 5.2.1. The new machines have no awk of any kind: not this one either, and none can be installed.

Write `/app/report.py` such that `python3 /app/report.py LOG` prints exactly what `LC_ALL=C gawk -f
/srv/report/report.awk LOG` prints, byte for byte, for **any** access log `LOG` the web tier may write. Its log
shippers are not careful: expect CRLF line ends, stray spaces and tabs, blank lines and comments, lines cut short,
odd latency and status fields, service and user names in any case and in any bytes (UTF-8 or not), a last line
without its newline, and logs that are empty.

- The script is `/srv/report/report.awk`; it is the only description of the report there is.
- Last night's log and the report the script printed for it are in `/srv/report/sample/` (`access.log`,
  `report.txt`).
- The tests run your program on other logs, with lines of each kind above, and compare its output with what the
  script printed for them. Your program exits with status 0; what it writes to standard error does not matter.
- Use the Python 3 standard library only.
"""


class Logs:
    """Access logs of one draw: ordinary lines, and one log per kind of odd line."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def stamp(self) -> str:
        r = self.rng
        return f"2019-06-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"

    def line(self, svc: str = "", st: str = "200", ms: str = "", user: str = "") -> str:
        r = self.rng
        return " ".join([self.stamp(), svc or r.choice(SERVICES), st, ms or f"{r.randint(20, 700)}ms",
                         user or f"user={r.choice(USERS)}", r.choice(PATHS)])  # fmt: skip

    def ordinary(self, n: int = 0) -> list[str]:
        r = self.rng
        statuses = ["200"] * 12 + ["201", "204", "301", "404", "500", "502", "503"]
        return [
            self.line(st=r.choice(statuses), ms=f"{int(r.lognormvariate(5.2, 0.8))}ms")
            for _ in range(n or r.randint(25, 40))
        ]

    def mixed(self, odd: list[str], n: int = 0) -> bytes:
        lines = self.ordinary(n) + odd
        self.rng.shuffle(lines)
        return ("\n".join(lines) + "\n").encode()

    def slow(self, **kw: str) -> str:
        return self.line(ms=f"{self.rng.randint(760, 990)}ms", **kw)

    def hidden(self) -> dict[str, bytes]:
        r = self.rng
        crlf = [ln + "\r" for ln in self.ordinary(20)] + [self.slow() + "\r" for _ in range(3)] + ["\r", "\f"]
        r.shuffle(crlf)
        spaced = []
        for _ in range(6):
            parts = [self.stamp(), r.choice(SERVICES), "200", f"{r.randint(760, 990)}ms", f"user={r.choice(USERS)}"]
            gap = [r.choice(["  ", "\t", " \t ", "   "]) for _ in parts]
            body = "".join(p + g for p, g in zip(parts, gap, strict=True)) + r.choice(PATHS)
            spaced.append(r.choice(["", " ", "\t"]) + body + r.choice(["", " ", "\t"]))
        spaced += ["  \t ", "", "# rotated", f"  # {self.line(ms='880ms')}", f"#{self.line(st='503', ms='990ms')}"]
        latencies = ["-", ".5ms", "1.5e3ms", "0x1Fms", "+12ms", "12,5ms", "7.ms", "ms", "0800ms", "2E2ms", "751ms"]
        latencies += ["750ms", "750.5ms", "1e-3ms", "0.25ms", "3.14159ms"]
        statuses = ["5xx", "-", "1e3", "0503", "abc", "499", "500.0", "+503", "4xx", "0x1F5", "Err", "600", "5", "50"]
        quiet, tiny = r.choice(["ledger", "mailer", "audit"]), r.choice(["cache", "dns", "health"])
        services = ["CHECKOUT", "Search", "caTalog", "zürich", "ÅUTH", "payments-v2", "thisservicenameislong", "_x"]
        users = ["user=", "USER=bo", "user=user=x", "uid=7", "user=zoë", "user=ängström", "user=abcdefghi", "-"]
        names = [self.line(svc=s) for s in r.sample(services, 5)] + [self.line(user=u) for u in r.sample(users, 6)]
        latin1 = b" ".join([self.stamp().encode(), b"m\xe9tro", b"200", b"31ms", b"user=ren\xe9e", b"GET /"]) + b"\n"
        big = [self.line(ms=f"{r.randint(1500000, 4000000)}ms") for _ in range(4)]
        return {
            "crlf.log": ("\n".join(crlf) + "\n").encode(),
            "spacing.log": self.mixed(spaced),
            "latencies.log": self.mixed([self.line(ms=m) for m in r.sample(latencies, 12)]),
            "no_answer.log": self.mixed(
                [self.line(svc=quiet, ms=r.choice(["-", "0ms"])) for _ in range(3)]
                + [self.line(svc=tiny, ms=r.choice([".25ms", "0.5ms", ".125ms"])) for _ in range(3)]
            ),
            "statuses.log": self.mixed([self.line(st=s) for s in r.sample(statuses, 10)]),
            "names.log": self.mixed(names) + latin1,
            "cut.log": self.mixed([" ".join(self.line().split()[: r.randint(1, 4)]) for _ in range(4)]),
            "big.log": self.mixed(big + [self.line(ms=f"{r.randint(1000, 9000)}.5ms")], n=1),
            "no_newline.log": self.mixed([self.line(ms="812ms")], n=8).rstrip(b"\n"),
            "empty.log": b"",
            "only_comments.log": b"# nothing today\n\n  \n",
            "ordinary.log": self.mixed([], n=60),
        }


def awk_port(seed: str, out: Path) -> Path:
    """The task of draw ``seed`` in ``out`` (replaced if it exists)."""
    shutil.rmtree(out, ignore_errors=True)
    logs = Logs(random.Random(f"awkport:{seed}"))
    hidden = logs.hidden()
    sample = logs.mixed([logs.slow() for _ in range(3)] + ["# rotated 2019-06-02"], n=80)
    expected = {
        name: {"file": name, "status": 0, "stdout": base64.b64encode(report(data)).decode()}
        for name, data in hidden.items()
    }
    port = (HERE / "port.py").read_text()
    check = "python3 /app/report.py /srv/report/sample/access.log | cmp - /srv/report/sample/report.txt\n"
    files: dict[str, str | bytes] = {
        "instruction.md": INSTRUCTION,
        "task.toml": task_toml(
            family="log-parse",
            seed_case="bench",
            category="text-processing",
            tags=["python", "logs", "awk", "porting"],
            difficulty="hard",
            agent_timeout=900.0,
            verifier_timeout=300.0,
        ),  # fmt: skip
        "environment/Dockerfile": dockerfile(copy_app=False, run=[NO_AWK]) + "COPY srv /srv\n",
        "environment/srv/report/report.awk": (HERE / "report.awk").read_text(),
        "environment/srv/report/sample/access.log": sample,
        "environment/srv/report/sample/report.txt": report(sample),
        "solution/solve.sh": solve_sh(f"cat > /app/report.py <<'PORT'\n{port}PORT\n{check}"),
        "tests/test.sh": pytest_test_sh(*sorted(hidden)),
        "tests/test_outputs.py": tests_text(expected, replacement="/app/report.py", name="report.awk", inputs="logs"),
        "tests/agentcall.py": AGENTCALL,
        **{f"tests/{name}": data for name, data in hidden.items()},
    }
    write_files(out, files, executable={"solution/solve.sh", "tests/test.sh"})
    return out


def gawk_agrees(task: Path) -> list[str]:
    """The hidden logs of ``task`` for which gawk prints other than the port (whose output the tests expect);
    gawk must be installed."""
    script = task / "environment/srv/report/report.awk"
    wrong = []
    for log in sorted((task / "tests").glob("*.log")):
        done = subprocess.run(["gawk", "-f", str(script), str(log)], capture_output=True,
                              env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}, check=True)  # fmt: skip
        if done.stdout != report(log.read_bytes()):
            wrong.append(log.name)
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="draws awk-port-0 .. N-1")
    parser.add_argument("--out", type=Path, default=Path("runs/awk-port"))
    parser.add_argument("--check", action="store_true", help="compare every expected report with gawk's")
    args = parser.parse_args()
    for n in range(args.tasks):
        task = awk_port(str(n), args.out / f"awk-port-{n}")
        verdict = ""
        if args.check:
            wrong = gawk_agrees(task)
            verdict = f": gawk disagrees on {', '.join(wrong)}" if wrong else ": gawk prints every expected report"
        print(f"{task}{verdict}")


if __name__ == "__main__":
    main()
