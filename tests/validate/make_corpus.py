"""Regenerate the validation corpus: good/sum-numbers and its flawed variants (exactly one flaw each).

The folders are committed; this script is how they were made, so a change to
the base task reaches every variant alike. Every task grades in a fresh sandbox
(separate verifier mode). (A shared-mode copy of the good task is in ``reviewed/``:
its forgeable reward is a limit of shared mode, a note, not a flaw of the task.)
Run: python tests/validate/make_corpus.py
"""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NUMBERS = [417, 92, 1310, 58, 764, 233, 905, 41, 388, 127, 650, 19]
SUM = sum(NUMBERS)
TOML = """\
# {comment}
schema_version = "1.4"
{artifacts}
[metadata]
author_name = "autoenv-tests"
difficulty = "easy"

[verifier]
timeout_sec = {verifier_timeout}
{mode}
[agent]
timeout_sec = {agent_timeout}

[environment]
build_timeout_sec = 120.0
"""
DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n"
INSTRUCTION = (
    "`/app/numbers.txt` holds one integer per line. Write their sum, as a plain decimal\n"
    "number on a single line, to `/app/sum.txt`.\n"
)
SOLVE = """\
#!/bin/bash
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

numbers = [int(line) for line in Path("/app/numbers.txt").read_text().split()]
Path("/app/sum.txt").write_text(f"{sum(numbers)}\\n")
PY
"""


def test_sh(check: str) -> str:
    return "#!/bin/bash\nmkdir -p /logs/verifier\n" + check


CHECK_SUM = f"""\
if [ "$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null)" = "{SUM}" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def write(
    dest: Path,
    comment: str,
    *,
    files: dict[str, str] | None = None,
    agent_timeout=30.0,
    verifier_timeout=30.0,
    drop: tuple[str, ...] = (),
    separate: bool = True,
) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    base = {
        "task.toml": TOML.format(
            comment=comment,
            agent_timeout=agent_timeout,
            verifier_timeout=verifier_timeout,
            artifacts='artifacts = ["/app"]\n' if separate else "",
            mode='environment_mode = "separate"\n' if separate else "",
        ),
        "instruction.md": INSTRUCTION,
        "environment/Dockerfile": DOCKERFILE,
        "environment/numbers.txt": "\n".join(map(str, NUMBERS)) + "\n",
        "solution/solve.sh": SOLVE,
        "tests/test.sh": test_sh(CHECK_SUM),
    }
    base.update(files or {})
    for rel, text in base.items():
        if rel in drop:
            continue
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.endswith(".sh"):
            path.chmod(0o755)


CHECK_PY = f"""\
from pathlib import Path

EXPECTED = {SUM}
value = Path("/app/sum.txt").read_text().strip() if Path("/app/sum.txt").exists() else ""
print("got", repr(value), "expected", EXPECTED)
raise SystemExit(0 if value == str(EXPECTED) else 1)
"""
PY_TEST_SH = """\
if python3 /tests/check_sum.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
TEST_SUM_PY = f"""\
from pathlib import Path


def test_sum():
    assert Path("/app/sum.txt").read_text().strip() == str({SUM})
"""
SUM_SH_INSTRUCTION = (
    "Write an executable shell script `/app/sum.sh` that prints the sum of the integers in the file\n"
    "given as its first argument (one integer per line), e.g. for `/app/numbers.txt`.\n"
)
SUM_SH_SOLVE = """\
#!/bin/bash
set -euo pipefail
cat > /app/sum.sh <<'SH'
#!/bin/bash
awk '{ total += $1 } END { print total }' "$1"
SH
chmod +x /app/sum.sh
"""

FLAKY_CHECK = f"""\
# the verifier samples whether "grading is enabled": the same solution gets different verdicts
status=$(python3 -c "import os; print('ok' if os.urandom(1)[0] % 2 else 'unavailable')")
if [ "$status" = "ok" ] && [ "$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null)" = "{SUM}" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
RUNPY_CHECK = """\
cd /app
if python3 -c "import runpy, sys; ns = runpy.run_path('/app/tests/test_sum.py'); ns['test_sum']()"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
EXIT_CODE_CHECK = """\
if [ -x /app/sum.sh ] && /app/sum.sh /app/numbers.txt > /dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def main() -> None:
    write(
        ROOT / "good" / "sum-numbers",
        "A valid task: every check passes. The flawed tasks are variants of it with exactly one flaw each.",
    )
    F = ROOT / "flawed"
    if F.exists():
        shutil.rmtree(F)
    write(
        F / "verifier-never-writes-reward",
        "flaw: tests/test.sh prints a verdict but never writes /logs/verifier/reward.txt",
        files={
            "tests/test.sh": test_sh(
                f'[ "$(tr -d \'[:space:]\' < /app/sum.txt 2>/dev/null)" = "{SUM}" ] && echo PASS || echo FAIL\n'
            )
        },
    )
    write(
        F / "broken-dockerfile-line",
        "flaw: a Dockerfile RUN line runs a script that is not in the build context",
        files={"environment/Dockerfile": DOCKERFILE + "RUN python3 /app/prepare_numbers.py\n"},
    )
    write(
        F / "oracle-fails",
        "flaw: the reference solution has an off-by-one bug (skips the last number)",
        files={"solution/solve.sh": SOLVE.replace("read_text().split()]", "read_text().split()][:-1]")},
    )
    write(
        F / "nop-passes",
        "flaw: the environment already contains the correct /app/sum.txt",
        files={"environment/Dockerfile": DOCKERFILE + "COPY sum.txt /app/sum.txt\n", "environment/sum.txt": f"{SUM}\n"},
    )
    write(
        F / "nondeterministic-test",
        "flaw: the verifier's verdict is random (a coin flip decides whether grading is enabled)",
        files={"tests/test.sh": test_sh(FLAKY_CHECK)},
    )
    write(
        F / "solution-in-image",
        "flaw: the reference solution is copied into the image (/opt/reference/solve.sh)",
        files={
            "environment/Dockerfile": DOCKERFILE + "COPY reference/solve.sh /opt/reference/solve.sh\n",
            "environment/reference/solve.sh": SOLVE,
        },
    )
    write(
        F / "answer-in-instruction",
        "flaw: the instruction states the expected sum",
        files={"instruction.md": INSTRUCTION + f"\n(For this input file the correct result is {SUM}.)\n"},
    )
    write(
        F / "tests-in-image",
        "flaw: the test program is shipped in the image at /app/check_sum.py (the agent can read the expected value)",
        files={
            "tests/test.sh": test_sh(PY_TEST_SH),
            "tests/check_sum.py": CHECK_PY,
            "environment/check_sum.py": CHECK_PY,
            "environment/Dockerfile": DOCKERFILE + "COPY check_sum.py /app/check_sum.py\n",
        },
    )
    write(
        F / "tests-editable",
        "flaw: the verifier runs a test file that lives in the image (/app/tests/test_sum.py), which the agent can "
        "edit",
        files={
            "environment/Dockerfile": DOCKERFILE + "COPY tests_src/test_sum.py /app/tests/test_sum.py\n",
            "environment/tests_src/test_sum.py": TEST_SUM_PY,
            "tests/test.sh": test_sh(RUNPY_CHECK),
        },
    )
    write(
        F / "answer-in-dot-folder",
        "flaw: the expected sum is cached in a hidden folder of the image (/root/.cache/answers/sum.txt)",
        files={
            "environment/Dockerfile": DOCKERFILE + "COPY sum.txt /root/.cache/answers/sum.txt\n",
            "environment/sum.txt": f"{SUM}\n",
        },
    )
    write(
        F / "tests-in-dot-folder",
        "flaw: the verifier runs a test file hidden in the image (/app/.checks/test_sum.py), which the agent can edit",
        files={
            "environment/Dockerfile": DOCKERFILE + "COPY tests_src/test_sum.py /app/.checks/test_sum.py\n",
            "environment/tests_src/test_sum.py": TEST_SUM_PY,
            "tests/test.sh": test_sh(RUNPY_CHECK.replace("/app/tests/test_sum.py", "/app/.checks/test_sum.py")),
        },
    )
    write(
        F / "exit0-stub-passes",
        "flaw: the verifier only checks that /app/sum.sh exits 0, not what it prints",
        files={
            "instruction.md": SUM_SH_INSTRUCTION,
            "solution/solve.sh": SUM_SH_SOLVE,
            "tests/test.sh": test_sh(EXIT_CODE_CHECK),
        },
    )
    write(
        F / "empty-output-passes",
        "flaw: the verifier only checks that /app/sum.txt exists",
        files={
            "tests/test.sh": test_sh(
                "if [ -f /app/sum.txt ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > "
                "/logs/verifier/reward.txt; fi\n"
            )
        },
    )
    write(
        F / "too-slow-oracle",
        "flaw: the reference solution needs most of the agent time limit (5s of 8s)",
        agent_timeout=8.0,
        files={
            "solution/solve.sh": SOLVE.replace(
                "set -euo pipefail\n", "set -euo pipefail\nsleep 5  # stands for a slow, heavy computation\n"
            )
        },
    )
    write(
        F / "no-reward-on-failure",
        "flaw: tests/test.sh writes a reward only when the task is solved (no reward 0 on failure)",
        files={
            "tests/test.sh": test_sh(
                f'if [ "$(tr -d \'[:space:]\' < /app/sum.txt 2>/dev/null)" = "{SUM}" ]; then echo 1 > '
                f"/logs/verifier/reward.txt; fi\n"
            )
        },
    )
    write(
        F / "solution-in-instruction",
        "flaw: the instruction contains the reference solution's code",
        files={
            "instruction.md": INSTRUCTION + "\nYou can do it like this:\n\n```python\nfrom pathlib import Path\n\n"
            'numbers = [int(line) for line in Path("/app/numbers.txt").read_text().split()]\n'
            'Path("/app/sum.txt").write_text(f"{sum(numbers)}\\n")\n```\n'
        },
    )
    write(
        F / "pytest-plantable",
        "flaw: the verifier runs pytest from /app, where a planted pytest.py or conftest.py takes over",
        files={
            "tests/test.sh": test_sh(
                "cd /app\nif python3 -m pytest -q -p no:cacheprovider /tests/test_sum.py; then echo 1 > "
                "/logs/verifier/reward.txt; "
                "else echo 0 > /logs/verifier/reward.txt; fi\n"
            ),
            "tests/test_sum.py": TEST_SUM_PY,
            "environment/Dockerfile": DOCKERFILE + "RUN pip install --no-cache-dir pytest==8.3.4\n",
        },
    )
    write(
        F / "nonempty-output-passes",
        "flaw: the verifier only checks that /app/sum.txt holds a number, not which one (a partial solution passes)",
        files={
            "tests/test.sh": test_sh(
                "# checks that an answer was written, not that it is right\n"
                "if [ -s /app/sum.txt ] && grep -q '[0-9]' /app/sum.txt; then echo 1 > /logs/verifier/reward.txt; "
                "else echo 0 > /logs/verifier/reward.txt; fi\n"
            )
        },
    )
    write(
        F / "deliverable-reads-answers",
        "flaw: the tests run the agent's program as root while the expected answer is readable in /tests",
        drop=("environment/numbers.txt",),
        files={
            "instruction.md": READER_INSTRUCTION,
            "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY example.txt /app/example.txt\n",
            "environment/example.txt": "1\n2\n3\n",
            "solution/solve.sh": READER_SOLVE,
            "tests/hidden_numbers.txt": "\n".join(map(str, NUMBERS)) + "\n",
            "tests/expected_sum.txt": f"{SUM}\n",
            "tests/test.sh": test_sh(READER_CHECK),
        },
    )


READER_INSTRUCTION = """\
Write a Python 3 program `/app/sum.py` that reads a file of integers, one per line,
whose path is its first argument, and prints their sum as a plain decimal number.
For example `python3 /app/sum.py /app/example.txt` prints `6`.
"""
READER_SOLVE = """\
#!/bin/bash
set -euo pipefail
cat > /app/sum.py <<'PY'
import sys
from pathlib import Path

print(sum(int(line) for line in Path(sys.argv[1]).read_text().split()))
PY
"""
READER_CHECK = """\
# runs the agent's program as root while the expected answer sits readable next to the input
got=$(python3 /app/sum.py /tests/hidden_numbers.txt 2>&1)
echo "sum.py printed: $got"
if [ "$(printf '%s' "$got" | tr -d '[:space:]')" = "$(tr -d '[:space:]' < /tests/expected_sum.txt)" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


if __name__ == "__main__":
    main()
    print(f"expected sum {SUM}; flawed: {', '.join(sorted(p.name for p in (ROOT / 'flawed').iterdir()))}")
