"""The TRL bridge refuses what validation refuses (issue 39): a task whose tests run the agent's code in the judge.

``check_gradable`` is what the bridge's ``start`` runs before any sandbox: these need neither the training env
nor a sandbox. The refusal must name the file and line and say why (the policy's code would decide its reward).
"""

from __future__ import annotations

import shutil

import pytest

from autoenv.errors import TaskError
from autoenv.integrations.bridge import check_gradable
from tests.conftest import EXAMPLE_TASKS, bundled_tasks
from tests.redteam.test_agent_code_in_judge import in_process_median


def test_a_task_whose_tests_import_the_agents_module_is_refused_with_the_reason(tmp_path):
    task = in_process_median(tmp_path / "median-in-process")
    with pytest.raises(TaskError) as refused:
        check_gradable(task)
    message = str(refused.value)
    assert f"{task / 'tests' / 'test_outputs.py'}:3:" in message  # sys.path.insert(0, "/app"), file and line
    assert "decide its own reward" in message and "agent_module" in message


def test_a_task_whose_tests_run_the_agents_program_as_their_user_is_refused(tmp_path):
    task = tmp_path / "median-subprocess"
    shutil.copytree(EXAMPLE_TASKS / "fix-median-bug", task)
    (task / "tests" / "test_outputs.py").write_text(
        "import subprocess\n\n\ndef test_report():\n"
        '    assert subprocess.run(["python3", "report.py"], cwd="/app").returncode == 0\n'
    )
    with pytest.raises(TaskError, match=r"test_outputs.py:5: .*run_agent"):
        check_gradable(task)


def test_every_bundled_task_is_still_accepted():
    for task in bundled_tasks():
        check_gradable(task)
