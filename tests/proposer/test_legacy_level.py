"""log-parse level 5 (issue 42): the legacy `logsum` binary is the specification.

The reference replacement must print what the compiled C program prints, byte for byte, on the hidden corners and
on random bytes; the shipped sample must not show the corners (else one run of the tool on it would tell them);
a replacement that runs the tool, or a copy of it, scores 0 where the tests run.
"""

from __future__ import annotations

import random
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from autoenv.families.log_parse import legacy
from autoenv.families.registry import FAMILIES
from autoenv.shared.seed import SeedCase
from autoenv.trials.runner import run_trial
from tests.conftest import needs_namespaces

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="level 5 compiles its tool with gcc")

BUILDS = [
    {"line_max": line_max, "svc_len": svc_len, "max_svc": max_svc}
    for line_max, svc_len, max_svc in ((96, 9, 12), (112, 10, 14), (128, 11, 16), (160, 13, 20))
]
SERVICES = ["auth", "billing", "gateway", "mailer", "search"]


def reference_report(params: dict[str, int], data: bytes) -> bytes:
    """What the reference ``/app/logsum.py`` prints for ``data`` (its ``report``, run here)."""
    scope: dict = {}
    source = legacy.LOGSUM.program(params).replace('if __name__ == "__main__":', "if False:")
    exec(compile(source, "logsum.py", "exec"), scope)  # noqa: S102 - the family's own reference
    return scope["report"](data)[0]


def random_log(rng: random.Random) -> bytes:
    """Records with odd levels, names, numbers and lengths, and lines of stray bytes."""
    parts = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.5:
            level = rng.choice(["INFO", "WARN", "WARNING", "ERR", "DEBUGX", "ERROR", "info"])
            name = rng.choice(["a", "bb", "x" * rng.randint(1, 20), "zürich", "Auth"])
            ms = rng.choice([1, 4294967295, "0x1", "012", 99999999999, ""])
            text = legacy.line(datetime(2024, 1, 1), level, name, rng.randint(0, 99), ms, "m" * rng.randint(0, 200))
            parts.append(text.encode())
        else:
            parts.append(
                bytes(rng.choice(b'[] 0123456789msINFOpid=\x00\r\t"a\xff') for _ in range(rng.randint(0, 200)))
            )
    return b"\n".join(parts) + (b"\n" if rng.random() < 0.7 else b"")


@pytest.mark.parametrize("params", BUILDS, ids=lambda p: f"{p['line_max']}-{p['svc_len']}-{p['max_svc']}")
def test_the_reference_prints_what_the_compiled_tool_prints(params):
    rng = random.Random(params["line_max"])
    logs = legacy.hidden_logs(rng, params, SERVICES, datetime(2024, 3, 1))
    logs.update({f"random-{i}": random_log(random.Random(i)) for i in range(60)})
    for name, log in logs.items():
        if log is None:
            continue
        printed, status = legacy.LOGSUM.run(params, log)
        assert status == 0, name
        assert reference_report(params, log) == printed, name
    assert legacy.LOGSUM.run(params, None) == (b"", 2), "a file that does not exist: nothing printed, status 2"


def test_the_sample_shows_no_corner_and_each_bound_shows_in_a_hidden_log(tmp_path):
    """A replacement without the tool's line buffer and service table prints the sample's report right, and fails
    the hidden log of each: one run of the tool on the sample cannot tell them, and the hidden logs do."""
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family="log-parse")
    draft = FAMILIES["log-parse"].draft(case, random.Random("measure:0"), level=5)
    params = draft.params["legacy"]
    unbounded = {**params, "line_max": 10**9, "max_svc": 10**9}
    sample = draft.files["environment/app/logs/app.log"].encode()
    assert reference_report(unbounded, sample) == legacy.LOGSUM.run(params, sample)[0]
    for name in ("long_lines.log", "many_services.log"):
        log = draft.files[f"tests/{name}"]
        assert reference_report(unbounded, log) != legacy.LOGSUM.run(params, log)[0], name
    assert legacy.LOGSUM.marker in draft.files["instruction.md"]
    assert (
        "line_max" not in draft.files["instruction.md"] and str(params["max_svc"]) not in draft.files["tests/test.sh"]
    )


@needs_namespaces
@pytest.mark.parametrize(
    ("family", "level", "tool", "sample"),
    [("log-parse", 5, "logsum", "/app/logs/app.log"), ("csv-stat", 6, "grpstat", "/app/data/*.csv"),
     ("config-repair", 5, "cfgnorm", "/app/config/*.ini")],
)  # fmt: skip
def test_running_the_tool_or_a_copy_of_it_scores_zero(tmp_path, family, level, tool, sample):
    """The tests remove the tool and its licence first: a wrapper around it, or around a copy in /app, fails."""
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family=family)
    task = FAMILIES[family].draft(case, random.Random(5), level=level).write(tmp_path / "tasks")
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/bash\n"
        f"cp /usr/local/bin/{tool} /app/{tool}-copy\n"
        f"cat > /app/{tool}.py <<'PY'\n"
        "import os, sys\n"
        f"os.execv('/app/{tool}-copy', ['{tool}'] + sys.argv[1:])\n"
        "PY\n"
        f"python3 /app/{tool}.py {sample} | head -3\n"
    )
    outcome = run_trial(task, "oracle", trials_dir=tmp_path / "trials")
    assert outcome.reward == 0.0, outcome
    stdout = (Path(outcome.trial_dir) / "verifier" / "test-stdout.txt").read_text()
    assert f"exit status 3, {tool} exits 0" in stdout and f"ELF programs under /app: /app/{tool}-copy" in stdout


@needs_namespaces
def test_a_copy_nobody_can_read_but_can_run_is_found_too(tmp_path):
    """The scan for binaries under /app runs as nobody, who runs the replacement: a copy of mode 0711 is unreadable
    to it but runs, and one in a folder of mode 0711 is reached by name; both count as a binary left behind."""
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family="log-parse")
    task = FAMILIES["log-parse"].draft(case, random.Random(5), level=5).write(tmp_path / "tasks")
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/bash\n"
        "install -m 711 /usr/local/bin/logsum /app/logsum-hidden\n"
        "mkdir -m 711 /app/.vault && install -m 711 /usr/local/bin/logsum /app/.vault/logsum\n"
        'printf \'import os, sys\\nos.execv("/app/.vault/logsum", ["logsum"] + sys.argv[1:])\\n\' > /app/logsum.py\n'
    )
    outcome = run_trial(task, "oracle", trials_dir=tmp_path / "trials")
    assert outcome.reward == 0.0, outcome
    stdout = (Path(outcome.trial_dir) / "verifier" / "test-stdout.txt").read_text()
    assert "/app/logsum-hidden (executable, unreadable)" in stdout, stdout[-3000:]
    assert "/app/.vault/logsum" in stdout or "/app/.vault (a folder nobody can list)" in stdout, stdout[-3000:]


def test_without_a_c_compiler_the_level_says_what_to_install(monkeypatch, tmp_path):
    """No gcc on PATH: a machine error naming the install step, not a traceback from subprocess."""
    from autoenv.errors import MachineError
    from autoenv.families.legacy_tool import NoCompiler

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NoCompiler, match="scripts/system-deps.sh installs gcc and libc6-dev") as raised:
        legacy.LOGSUM.build({"line_max": 97, "svc_len": 9, "max_svc": 12})  # a build no other test cached
    assert isinstance(raised.value, MachineError) and "log-parse level 5" in str(raised.value)


@needs_namespaces
def test_an_output_file_swapped_for_a_fifo_or_a_link_ends_in_a_verdict(tmp_path):
    """The replacement may swap the file its output went to for a FIFO (a grader reading it would wait until the
    verifier's timeout) or a link to what only the grader can read: the tests read neither, and grade at once."""
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family="log-parse")
    task = FAMILIES["log-parse"].draft(case, random.Random(5), level=5).write(tmp_path / "tasks")
    swap = (
        "import os, sys\n"
        "out = os.readlink('/proc/self/fd/1')\n"
        "os.unlink(out)\n"
        "os.mkfifo(out) if os.path.exists(sys.argv[1]) else os.symlink('/tests/app.log', out)\n"
    )
    (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\ncat > /app/logsum.py <<'PY'\n{swap}PY\n")
    outcome = run_trial(task, "oracle", trials_dir=tmp_path / "trials")
    assert outcome.reward == 0.0 and outcome.error is None, outcome
    stdout = (Path(outcome.trial_dir) / "verifier" / "test-stdout.txt").read_text()
    assert "the output differs from logsum's" in stdout and "Timeout" not in stdout
