"""Generated office/web tasks in real sandboxes: oracle 1, nop 0, and the adversary rejected.

For each family, two variants with seeds other than the bundled tasks':
variant A goes through ``autoenv.validate`` (structure, build, oracle x2,
determinism, nop, leakage, the cheating adversary, timeouts), variant B through
plain oracle and nop trials and the offline scripted solver (its family recipe). (The bundled tasks themselves are validated by
tests/validate/test_corpus.py::test_bundled_task_validates, with every other
bundled task.)
"""  # noqa: E501

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autoenv.families.office.bundled import generate, office_families
from autoenv.taskfmt.check import check_task
from autoenv.trials.runner import run_trial
from tests.conftest import EXAMPLE_TASKS, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]

SEEDS = (1001, 2002)


@pytest.mark.parametrize("family", sorted(office_families()))
def test_generated_variants_validate(family, tmp_path):
    a = generate(family, tmp_path / "tasks" / f"{family}-a", seed=SEEDS[0])
    b = generate(family, tmp_path / "tasks" / f"{family}-b", seed=SEEDS[1])
    for task in (a, b):
        assert check_task(task) == [], [str(p) for p in check_task(task)]

    try:
        from autoenv.validate.validation import validate_task
    except ImportError:  # pragma: no cover - validation is optional for this test
        validate_task = None
    if validate_task is not None:
        report = validate_task(a, trials_dir=tmp_path / "validate", record=False)
        assert report.valid, report.feedback()
    else:
        assert run_trial(a, "oracle", trials_dir=tmp_path / "trials").reward == 1.0
        assert run_trial(a, "nop", trials_dir=tmp_path / "trials").reward == 0.0

    oracle = run_trial(b, "oracle", trials_dir=tmp_path / "trials")
    assert oracle.error is None and oracle.reward == 1.0, oracle
    nop = run_trial(b, "nop", trials_dir=tmp_path / "trials")
    assert nop.error is None and nop.reward == 0.0, nop

    # the offline scripted solver knows the family (autoenv/families/<family>/recipe.py), so calibration can pass it
    import autoenv.proposer  # noqa: F401  (installs the proposer families' recipes in the scripted policy)

    scripted = run_trial(b, "terminal", trials_dir=tmp_path / "trials", agent_kwargs={"policy": "scripted"})
    assert scripted.error is None and scripted.reward == 1.0, scripted


NAIVE_RUN = "cd /tests\npython3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py -rA\n"


@pytest.mark.parametrize("name", ["variance-formulas-xlsx", "docx-brief-formatting"])
def test_planted_pytest_hooks_do_not_reach_the_verifier(name, tmp_path):
    """A pass-everything conftest.py planted in /tests and /tmp before the upload: reward stays 0.

    Control: the same task with a plain ``cd /tests; python3 -m pytest ...`` verifier in shared mode (run in
    the agent's sandbox, where /tests keeps what was planted) is fooled by them.
    """
    agent, plant = "adversary", {"cheats": "plant"}  # the validator's adversary, planting only
    outcome = run_trial(EXAMPLE_TASKS / name, agent, agent_kwargs=plant, trials_dir=tmp_path / "trials")
    assert outcome.error is None, outcome.error_message
    cheats = json.loads((Path(outcome.trial_dir) / "agent" / "adversary.json").read_text())["cheats"]
    assert {"planted_conftest", "planted_pytest"} <= {c["kind"] for c in cheats}
    assert outcome.reward == 0.0

    naive = tmp_path / name
    shutil.copytree(EXAMPLE_TASKS / name, naive, ignore=shutil.ignore_patterns(".autoenv"))
    test_sh = (naive / "tests" / "test.sh").read_text()
    start = test_sh.index("T=$(mktemp -d)")
    end = test_sh.index("if [ $? -eq 0 ]")
    (naive / "tests" / "test.sh").write_text(test_sh[:start] + NAIVE_RUN + test_sh[end:])
    toml = naive / "task.toml"
    toml.write_text(
        toml.read_text().replace('environment_mode = "separate"\n', "").replace('artifacts = ["/app"]\n', "")
    )
    fooled = run_trial(naive, agent, agent_kwargs=plant, trials_dir=tmp_path / "trials")
    assert fooled.reward == 1.0, "control: the planted files should fool a plain pytest run"
