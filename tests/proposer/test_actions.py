"""Every proposer action is classified Read, Build, Write or Test."""

from __future__ import annotations

import pytest

from autoenv.proposer.actions import ActionLog, classify_command, classify_tool_call


@pytest.mark.parametrize(
    "command, kind",
    [
        ("cat seed_case.yaml && ls skills tools memory", "Read"),
        ("tail -n 20 memory/lessons.md", "Read"),
        ("grep -rn reward tasks/x/tests | head", "Read"),
        ("mkdir -p tasks/x/environment/app tasks/x/tests", "Build"),
        ("chmod +x tasks/x/tests/test.sh tasks/x/solution/solve.sh", "Build"),
        ("sha256sum tasks/x/environment/app/data.csv", "Build"),
        ("python3 gen_data.py --seed 3", "Build"),
        ("cat > tasks/x/instruction.md <<'EOF'\n# hi\nEOF", "Write"),
        ("sed -i 's/a/b/' tasks/x/task.toml", "Write"),
        ("autoenv-child validate tasks/x", "Test"),
        ("cd /workspace && autoenv-child solve tasks/x -k 4", "Test"),
        ("python3 tools/check_task.py tasks/x", "Test"),
        ("cd tasks/x && python3 -m pytest -q tests", "Test"),
        ("bash tasks/x/solution/solve.sh", "Test"),
    ],
)
def test_commands(command, kind):
    assert classify_command(command) == kind


def test_tool_calls():
    assert classify_tool_call("read_file", {"path": "skills/a.md"}) == "Read"
    assert classify_tool_call("write_file", {"path": "tasks/x/task.toml", "content": ""}) == "Write"
    assert classify_tool_call("run", {"command": "autoenv-child validate tasks/x"}) == "Test"
    assert classify_tool_call("finish", {}) == "Read"


def test_log_is_timed_and_ordered():
    log = ActionLog()
    log.add("Read", "a")
    log.add("Test", "b")
    assert [a.kind for a in log.actions] == ["Read", "Test"]
    assert 0 <= log.actions[0].t <= log.actions[1].t
