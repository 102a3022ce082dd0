"""Every proposer action is classified Read, Write, Build, Test or Finish, by what it does."""

from __future__ import annotations

import pytest

from autoenv.proposer.actions import ActionLog, classify_command, classify_tool_call


#: Real command lines from recorded proposer episodes (the agentic method with a served model), by main effect.
@pytest.mark.parametrize(
    "command, kind",
    [
        ("cat seed_case.yaml && ls skills tools memory", "Read"),
        ("cat memory/lessons.md && head -n 40 skills/verifiers.md", "Read"),
        ("tail -n 20 memory/lessons.md", "Read"),
        ("grep -rn reward tasks/x/tests | head", "Read"),
        ("find tasks -maxdepth 2 -type f | sort", "Read"),
        ("ls -la tasks/x/environment 2>/dev/null", "Read"),
        ("pwd && ls && wc -l tasks/x/tests/test.sh", "Read"),
        ("sha256sum tasks/x/environment/app/data.csv", "Read"),
        ("mkdir -p tasks/x/environment/app tasks/x/tests", "Write"),
        ("chmod +x tasks/x/tests/test.sh tasks/x/solution/solve.sh", "Write"),
        ("mv tasks/x drafts/", "Write"),
        ("cp drafts/y/tests/test.sh tasks/x/tests/ && chmod +x tasks/x/tests/test.sh", "Write"),
        ("rm -rf tasks/x/solution/__pycache__", "Write"),
        ("cat > tasks/x/instruction.md <<'EOF'\n# hi\nEOF", "Write"),
        ("printf '%s\\n' 417 92 > tasks/x/environment/numbers.txt", "Write"),
        ("echo '- keep verifiers in awk' | tee -a memory/lessons.md", "Write"),
        ("sed -i 's/a/b/' tasks/x/task.toml", "Write"),
        ("python3 gen_data.py --seed 3", "Build"),
        ("cd tasks/x/environment && python3 make_fixture.py > data.csv", "Build"),
        ("autoenv-child build tasks/x", "Build"),
        ("autoenv-child validate tasks/x", "Test"),
        ("cd /workspace && autoenv-child solve tasks/x -k 4", "Test"),
        ("autoenv-child check tasks/x 2>&1 | tail -20", "Test"),
        ("python3 tools/check_task.py tasks/x", "Test"),
        ("cd tasks/x && python3 -m pytest -q tests", "Test"),
        ("bash tasks/x/solution/solve.sh", "Test"),
        ("mkdir -p /tmp/t && cp -r tasks/x /tmp/t && bash /tmp/t/x/tests/test.sh; echo rc=$?", "Test"),
    ],
)
def test_commands(command, kind):
    assert classify_command(command) == kind


def test_tool_calls():
    assert classify_tool_call("read_file", {"path": "skills/a.md"}) == "Read"
    assert classify_tool_call("write_file", {"path": "tasks/x/task.toml", "content": ""}) == "Write"
    assert classify_tool_call("run", {"command": "autoenv-child validate tasks/x"}) == "Test"
    assert classify_tool_call("finish", {}) == "Finish"


def test_log_is_timed_and_ordered():
    log = ActionLog()
    log.add("Read", "a")
    log.add("Test", "b")
    assert [a.kind for a in log.actions] == ["Read", "Test"]
    assert 0 <= log.actions[0].t <= log.actions[1].t
