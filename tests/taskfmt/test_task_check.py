"""`autoenv task check` rejects broken tasks with one clear line per problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_TASKS, bundled_tasks, write_task

AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]


def check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*AUTOENV, "task", "check", *map(str, paths)], capture_output=True, text=True, timeout=120)


def test_well_formed_task_passes(tmp_path):
    out = check(write_task(tmp_path, "good"))
    assert out.returncode == 0, out.stdout + out.stderr


BROKEN = {
    "missing-toml": (lambda t: (t / "task.toml").unlink(), "task.toml", "Missing task configuration"),
    "malformed-toml": (lambda t: (t / "task.toml").write_text("schema_version = [\n"), "task.toml", "Malformed TOML"),
    "bad-field-type": (
        lambda t: (t / "task.toml").write_text('schema_version = "1.4"\n[agent]\ntimeout_sec = "soon"\n'),
        "task.toml",
        "agent.timeout_sec",
    ),
    "no-solution": (lambda t: (t / "solution" / "solve.sh").unlink(), "solve.sh", "reference solution missing"),
    "no-test-sh": (lambda t: (t / "tests" / "test.sh").unlink(), "task.toml", "does not contain tests/test.sh"),
    "no-reward": (
        lambda t: (t / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n"),
        "test.sh",
        "never writes /logs/verifier/reward",
    ),
    "empty-instruction": (lambda t: (t / "instruction.md").write_text("  \n"), "instruction.md", "instruction"),
    "no-from": (
        lambda t: (t / "environment" / "Dockerfile").write_text("RUN echo hi\n"),
        "Dockerfile",
        "no FROM instruction",
    ),
    "no-environment": (lambda t: (t / "environment" / "Dockerfile").unlink(), "Dockerfile", "no Dockerfile"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_task_is_rejected_with_a_clear_line(tmp_path, name):
    breaker, where, fragment = BROKEN[name]
    task = write_task(tmp_path, name)
    breaker(task)
    out = check(task)
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if fragment in line]
    assert lines, out.stdout
    assert where in lines[0] and str(task) in lines[0]


def test_not_a_directory_and_missing_path(tmp_path):
    file = tmp_path / "plain.txt"
    file.write_text("x")
    out = check(file, tmp_path / "absent")
    assert out.returncode == 1
    assert "not a task directory" in out.stdout and "no such file or directory" in out.stdout
    assert "Traceback" not in out.stderr


def test_bundled_tasks_are_well_formed():
    tasks = bundled_tasks()
    if not tasks:
        pytest.skip("no bundled tasks")
    out = check(*tasks)
    assert out.returncode == 0, out.stdout


def check_json(*args: str | Path) -> tuple[int, dict]:
    import json

    out = subprocess.run(
        [*AUTOENV, "task", "check", "--json", *map(str, args)], capture_output=True, text=True, timeout=120
    )
    return out.returncode, json.loads(out.stdout)


def _levels(report: dict) -> dict[str, str]:
    return {p["rule"]: p["level"] for p in report["problems"]}


def test_style_findings_are_warnings_and_strict_counts_them(tmp_path):
    """Findings that change no behaviour (unknown metadata fields) warn; a shared-mode verifier is a harness note."""
    task = write_task(tmp_path, "style")
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text()
        .replace("[metadata]\n", '[metadata]\nreviewer_mood = "happy"\n')
        .replace("[agent]\n", "[agent]\nfavourite_colour = 3\n")
    )
    code, report = check_json(task)
    assert code == 0, report
    assert _levels(report) == {"unknown-config-field": "warning", "shared-verifier": "note"}, report
    assert report["errors"] == 0
    code, report = check_json("--strict", task)
    assert code == 1 and report["errors"] == 1, report


def test_grading_downloads_are_errors_only_without_network(tmp_path):
    test_sh = (
        "#!/bin/bash\npip install pytest\nmkdir -p /logs/verifier\npytest /tests && echo 1 > /logs/verifier/reward.txt "
        "|| echo 0 > /logs/verifier/reward.txt\n"
    )
    online = write_task(tmp_path, "online", test_sh=test_sh)
    offline = write_task(tmp_path, "offline", test_sh=test_sh, env_extra='network_mode = "no-network"\n')
    code, report = check_json(online)
    assert code == 0 and _levels(report)["autoenv-grading-network"] == "warning", report
    code, report = check_json(offline)
    assert code == 1 and _levels(report)["autoenv-grading-network"] == "error", report
    finding = next(p for p in report["problems"] if p["rule"] == "autoenv-grading-network")
    assert finding["line"] == 2 and "no-network" in finding["message"] and "Dockerfile" in finding["advice"]
    # Harbor's own rule sees the same line in separate mode: one finding, Harbor's, raised to an error
    separate = write_task(tmp_path, "separate", test_sh=test_sh, env_extra='network_mode = "no-network"\n')
    toml = separate / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n'))
    code, report = check_json(separate)
    assert code == 1 and _levels(report).get("verifier-runtime-install") == "error", report
    assert "autoenv-grading-network" not in _levels(report)


def test_conflict_markers_and_secrets_are_errors_with_file_and_line(tmp_path):
    solve = "#!/bin/bash\n<<<<<<< HEAD\necho hello > /app/out.txt\n=======\necho hi > /app/out.txt\n>>>>>>> feature\n"
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE "
        "KEY-----\n"
    )
    task = write_task(
        tmp_path,
        "leaky",
        solve=solve,
        files={
            "environment/.env": "DEBUG=1\nOPENAI_API_KEY=sk-proj-4f9Q2kX7vB1mZ8rT3yL6wN0pA5sD\nDB_PASSWORD=changeme\n",
            "environment/deploy_key": key,
        },
    )
    code, report = check_json(task)
    assert code == 1, report
    found = [
        (Path(p["path"]).name, p["line"], p["rule"], p["level"])
        for p in report["problems"]
        if p["rule"].startswith("autoenv-")
    ]
    assert ("solve.sh", 2, "autoenv-conflict-marker", "error") in found, found
    assert ("deploy_key", 1, "autoenv-secret", "error") in found, found
    assert (".env", 2, "autoenv-secret", "error") in found, found
    # a placeholder password is not a secret, and nothing in a sound task is
    assert not any(name == ".env" and line == 3 for name, line, *_ in found), found
    code, report = check_json(write_task(tmp_path, "clean"))
    assert not [p for p in report["problems"] if p["rule"] in ("autoenv-secret", "autoenv-conflict-marker")]


def test_set_e_before_the_reward_is_flagged_at_its_line(tmp_path):
    test_sh = (
        "#!/bin/bash\nset -euo pipefail\nmkdir -p /logs/verifier\npytest /tests/test_outputs.py\necho 1 > "
        "/logs/verifier/reward.txt\n"
    )
    code, report = check_json(write_task(tmp_path, "set-e", test_sh=test_sh))
    finding = next(p for p in report["problems"] if p["rule"] == "autoenv-reward-on-failure")
    assert finding["level"] == "warning" and finding["line"] == 2, finding
    # the usual guard: the reward is written either way
    fine = (
        "#!/bin/bash\nset -e\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\npytest /tests && echo 1 > "
        "/logs/verifier/reward.txt\n"
    )
    code, report = check_json(write_task(tmp_path, "set-e-ok", test_sh=fine))
    assert "autoenv-reward-on-failure" not in _levels(report)


def test_no_oracle_makes_a_missing_solution_a_note(tmp_path):
    task = write_task(tmp_path, "no-solution")
    (task / "solution" / "solve.sh").unlink()
    code, report = check_json(task)
    assert code == 1 and _levels(report)["autoenv-solution"] == "error"
    assert "--no-oracle" in next(p for p in report["problems"] if p["rule"] == "autoenv-solution")["advice"]
    code, report = check_json("--no-oracle", task)
    assert code == 0 and _levels(report)["autoenv-solution"] == "note", report


def test_tests_that_import_the_agents_code_into_pytest_are_flagged_with_file_and_line(tmp_path):
    """The judge must not run the agent's code: an in-process import is a warning naming the file and line."""
    import shutil

    from autoenv.taskfmt.check import agent_code_in_judge

    task = tmp_path / "median"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    assert agent_code_in_judge(task) == []  # the bundled task calls it through tests/agentcall.py
    test = task / "tests" / "test_outputs.py"
    test.write_text('import pytest\nimport sys\n\nsys.path.insert(0, "/app")\nimport stats_utils\n')
    found = agent_code_in_judge(task)
    assert [(p.path, p.line, p.level.value, p.rule) for p in found] == [
        (str(test), 4, "warning", "autoenv-agent-code-in-judge")
    ]
    test.write_text("import pytest\nfrom stats_utils import median\n")
    assert [p.line for p in agent_code_in_judge(task)] == [2]
    # a child's program in a string (run as another user) is not the tests' own process
    test.write_text("CALL = \"import sys; sys.path.insert(0, '/app'); import stats_utils\"\n")
    assert agent_code_in_judge(task) == []


#: Test files that start /app's programs, or run the agent's files, some other way than tests/agentcall.py: the
#: line each finding must name.
PROGRAM_RUNS = {
    "subprocess": ('import subprocess\nimport sys\n\nsubprocess.run([sys.executable, "/app/report.py"])\n', [4]),
    "cwd": ('from subprocess import run as go\n\ngo(["python3", "report.py"], cwd="/app")\n', [3]),
    "through-a-name": (
        'import subprocess as sp\nfrom pathlib import Path\nAPP = Path("/app")\nCLI = APP / "cli.py"\n\n'
        "def run(*a):\n    return sp.Popen(['python3', CLI, *a])\n",
        [7],
    ),
    "as-root": ('import subprocess\nsubprocess.run(["/app/x.sh"], user=0)\n', [2]),
    "os.system": ('import os\nos.system("cd /app && python3 report.py")\nos.execv("/app/x", ["x"])\n', [2, 3]),
    "runpy": ('import runpy\nrunpy.run_path("/app/report.py")\n', [2]),
    "importlib": (
        'import importlib, sys\nAPP = "/app"\nsys.path.insert(0, APP)\nm = importlib.import_module("stats_utils")\n',
        [4],
    ),
    "exec": ('exec(open("/app/stats_utils.py").read())\n', [1]),
}


@pytest.mark.parametrize("shape", sorted(PROGRAM_RUNS))
def test_tests_that_start_the_agents_programs_outside_the_broker_are_flagged(tmp_path, shape):
    import shutil

    from autoenv.taskfmt.check import agent_code_in_judge

    task = tmp_path / "median"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    test = task / "tests" / "test_outputs.py"
    code, lines = PROGRAM_RUNS[shape]
    test.write_text(code)
    found = [p for p in agent_code_in_judge(task) if p.rule == "autoenv-agent-program-in-judge"]
    assert [(p.path, p.line, p.level.value) for p in found] == [(str(test), n, "warning") for n in lines]
    assert all("run_agent" in p.advice for p in found)
    if shape == "importlib":  # the path entry itself is the in-process finding, named by its line too
        assert [p.line for p in agent_code_in_judge(task) if p.rule == "autoenv-agent-code-in-judge"] == [3]


def test_the_broker_and_the_tests_own_programs_are_not_flagged(tmp_path):
    import shutil

    from autoenv.taskfmt.check import agent_code_in_judge

    task = tmp_path / "median"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    (task / "tests" / "test_outputs.py").write_text(
        "import subprocess, sys\nfrom agentcall import run_agent\n\n"
        'run_agent(["python3", "/app/report.py"], cwd="/app")\n'
        'subprocess.run([sys.executable, "-c", "print(1)"])\n'
        'subprocess.run(["sort", "/tmp/x"])\nNOTE = "see /app/report.py"\n'
        "# a root grader that runs the agent's program as nobody itself (the reviewed graded-unit-conversions)\n"
        'subprocess.run([sys.executable, "/app/report.py"], user=65534, group=65534, extra_groups=[])\n'
        'subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/app/x.sh"])\n'
    )
    assert agent_code_in_judge(task) == []


def test_no_bundled_task_starts_the_agents_programs_outside_the_broker():
    from autoenv.taskfmt.check import agent_code_in_judge

    assert [(Path(p.path).name, p.line) for t in bundled_tasks() for p in agent_code_in_judge(t)] == []


def test_no_family_task_starts_the_agents_programs_outside_the_broker(tmp_path):
    import random

    from autoenv.families.registry import FAMILIES
    from autoenv.proposer.models import SeedCase
    from autoenv.taskfmt.check import agent_code_in_judge

    found = []
    for name, family in sorted(FAMILIES.items()):
        case = SeedCase(id=f"c-{name}", task="t", failure_mode="t", target_skill="t", family=name)
        for seed in (1, 2):
            task = family.draft(case, random.Random(seed)).write(tmp_path / str(seed))
            found += [(name, Path(p.path).name, p.line, p.message) for p in agent_code_in_judge(task)]
    assert found == []


def test_a_verifier_script_that_runs_the_agents_program_as_root_is_flagged(tmp_path):
    import shutil

    from autoenv.taskfmt.check import agent_code_in_judge

    task = tmp_path / "median"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    script = task / "tests" / "test.sh"
    script.write_text(
        "#!/bin/bash\n"
        "# python3 /app/report.py (a comment)\n"
        "cd /app && cp /tests/x /app/ && cat /app/out.txt && diff /app/out.txt /tests/want.txt\n"
        "got=$(python3 -u /app/sum.py /tests/hidden.txt 2>&1)\n"
        "if [ -x /app/sum.sh ] && /app/sum.sh /app/numbers.txt; then echo 1; fi\n"
        "setpriv --reuid=65534 --regid=65534 --clear-groups /app/sum.sh /tmp/in.txt\n"
        "echo 0 > /logs/verifier/reward.txt\n"
    )
    found = [(p.line, p.message) for p in agent_code_in_judge(task) if p.path == str(script)]
    assert found == [
        (4, "the verifier runs /app/sum.py as root, the user that writes the verdict"),
        (5, "the verifier runs /app/sum.sh as root, the user that writes the verdict"),
    ]
