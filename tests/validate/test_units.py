"""Fast tests of the pure parts: statistics, specs, records, reward, leak and cheat heuristics."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from autoenv.agents.adversary import CHEAT_FAMILIES, cheat_script, mentioned_commands, mentioned_paths
from autoenv.agents.coin import coin_flip
from autoenv.spec import SolverSpec
from autoenv.trials.runner import TrialOutcome
from autoenv.validate import cache
from autoenv.validate.calibration import CalibrationReport, CalibrationSettings, judge, parse_band
from autoenv.validate.checks import CHECK_ORDER, CheckResult, check_deterministic, check_nop, check_timeouts
from autoenv.validate.leakage import (
    python_answer_literals,
    scan_expected_values,
    scan_instruction,
    scan_tree,
    shell_answer_literals,
    task_secrets,
)
from autoenv.validate.reward import ACCEPTED_REWARD, VALID_REWARD, proposer_reward
from autoenv.validate.stats import mean_interval, wilson_interval
from autoenv.validate.store_sync import store_hook
from autoenv.validate.validation import ValidationReport, ValidationSettings, record_key

HERE = Path(__file__).parent
GOOD = HERE / "good" / "sum-numbers"
FLAWED = HERE / "flawed"


# -- statistics ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "k,n,low,high",
    [  # Newcombe (1998), Table I, Wilson score method
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (15, 15, 0.7961, 1.0),
    ],
)
def test_wilson_matches_published_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_mean_interval_over_seeds():
    # mean 0.6, sample sd 0.2850, t(4) = 2.776: half-width 0.3539
    mean, low, high = mean_interval([0.5, 0.75, 1.0, 0.25, 0.5])
    assert (
        mean == pytest.approx(0.6)
        and low == pytest.approx(0.2461, abs=1e-4)
        and high == pytest.approx(0.9539, abs=1e-4)
    )
    assert mean_interval([0.4]) == (0.4, 0.4, 0.4)
    with pytest.raises(ValueError):
        mean_interval([])


def test_coin_is_seeded_and_fair():
    assert [coin_flip(0.5, s) for s in range(20)] == [coin_flip(0.5, s) for s in range(20)]
    assert coin_flip(0.0, 1) is False and coin_flip(1.0, 1) is True
    rate = sum(coin_flip(0.3, s) for s in range(4000)) / 4000
    assert rate == pytest.approx(0.3, abs=0.03)


# -- solver specs and bands ------------------------------------------------------------


@pytest.mark.parametrize(
    "spec,agent,kwargs",
    [
        ("oracle", "oracle", {}),
        ("nop", "nop", {}),
        ("coin:p=0.5", "autoenv.agents.coin:CoinOracleAgent", {"p": 0.5}),
        ("coin:p=0.25,seed=7", "autoenv.agents.coin:CoinOracleAgent", {"p": 0.25, "seed": 7}),
        ("terminal:policy=scripted,success_rate=0.5", "terminal", {"policy": "scripted", "success_rate": 0.5}),
        (
            "terminal:policy=openai,base_url=http://127.0.0.1:8000/v1",
            "terminal",
            {"policy": "openai", "base_url": "http://127.0.0.1:8000/v1"},
        ),
        ("my.mod:Solver", "my.mod:Solver", {}),
        ("my.mod:Solver:temperature=0.7,greedy=true", "my.mod:Solver", {"temperature": 0.7, "greedy": True}),
    ],
)
def test_parse_solver_spec(spec, agent, kwargs):
    parsed = SolverSpec.parse(spec)
    assert parsed.agent == agent and parsed.kwargs == kwargs


@pytest.mark.parametrize("spec", ["", ":p=1", "coin:p", "bad name!"])
def test_parse_solver_spec_rejects(spec):
    with pytest.raises(ValueError):
        SolverSpec.parse(spec)


def test_parse_band():
    assert parse_band(None) is None and parse_band("0.2,0.8") == (0.2, 0.8)
    for bad in ("0.8,0.2", "1", "a,b", "0,1.5"):
        with pytest.raises(ValueError):
            parse_band(bad)


def test_judge_default_band_needs_variance():
    assert judge(0, 8, None)[0] is False and "too hard" in judge(0, 8, None)[1]
    assert judge(8, 8, None)[0] is False and "too easy" in judge(8, 8, None)[1]
    assert judge(3, 8, None)[0] is True
    assert judge(3, 8, (0.5, 0.9))[0] is False and judge(5, 8, (0.5, 0.9))[0] is True
    assert judge(0, 0, None)[0] is False


# -- records ------------------------------------------------------------------------


def _copy(src: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(src, tmp_path / src.name))


def _validation(valid: bool, content_hash: str = "h") -> ValidationReport:
    checks = [CheckResult(name=n, passed=valid or n != "oracle", summary="s") for n in CHECK_ORDER]
    return ValidationReport(
        task="t",
        task_name="t",
        content_hash=content_hash,
        settings=ValidationSettings(),
        valid=valid,
        checks=checks,
        started_at=datetime.now(UTC),
        duration_sec=1.0,
    )


def _calibration(passes: int, n: int, accepted: bool, band=None, content_hash: str = "h") -> CalibrationReport:
    return CalibrationReport(
        task="t",
        task_name="t",
        content_hash=content_hash,
        settings=CalibrationSettings(solver="coin:p=0.5", rollouts=n, band=band),
        n=n,
        passes=passes,
        pass_rate=passes / n if n else None,
        ci_low=0,
        ci_high=1,
        mean_reward=None,
        mean_turns=None,
        accepted=accepted,
        verdict="v",
        rollouts=[],
        started_at=datetime.now(UTC),
        duration_sec=1.0,
    )


def test_content_hash_ignores_records_and_sees_every_edit(tmp_path):
    task = _copy(GOOD, tmp_path)
    first = cache.task_content_hash(task)
    cache.save_record(task, "validation", "k", _validation(True, first))
    (task / "__pycache__").mkdir()
    (task / "__pycache__" / "x.pyc").write_bytes(b"x")
    assert cache.task_content_hash(task) == first
    (task / "tests" / "test.sh").write_text((task / "tests" / "test.sh").read_text() + "\n")
    assert cache.task_content_hash(task) != first


def test_records_round_trip_by_key_and_hash_and_reach_store_hooks(tmp_path):
    task = _copy(GOOD, tmp_path)
    seen = []

    def hook(kind, task_dir, record):
        seen.append((kind, task_dir, record.valid))

    cache.register_store_hook(hook)
    try:
        report = _validation(True, cache.task_content_hash(task))
        path = cache.save_record(task, "validation", "env=local", report)
    finally:
        cache.unregister_store_hook(hook)
    assert path == task / ".autoenv" / "validation.json"
    assert json.loads(path.read_text())["kind"] == "validation"
    assert seen == [("validation", task, True)]
    assert cache.load_record(task, "validation", "env=local", report.content_hash, ValidationReport).valid
    assert cache.load_record(task, "validation", "env=docker", report.content_hash, ValidationReport) is None
    assert cache.load_record(task, "validation", "env=local", "other-hash", ValidationReport) is None


def test_broken_record_file_is_ignored_not_fatal(tmp_path):
    task = _copy(GOOD, tmp_path)
    (task / ".autoenv").mkdir()
    (task / ".autoenv" / "validation.json").write_text("{not json")
    assert cache.load_record(task, "validation", "k", "h", ValidationReport) is None


# -- proposer reward ---------------------------------------------------------------------


def test_proposer_reward_table():
    assert proposer_reward(None, None) == 0.0
    assert proposer_reward(_validation(False), _calibration(4, 8, True)) == 0.0
    assert proposer_reward(_validation(True), None) == VALID_REWARD
    assert proposer_reward(_validation(True), _calibration(4, 8, True)) == ACCEPTED_REWARD
    # default band rejects only p in {0, 1}: exactly the validity reward
    assert proposer_reward(_validation(True), _calibration(0, 8, False)) == pytest.approx(VALID_REWARD)
    assert proposer_reward(_validation(True), _calibration(8, 8, False)) == pytest.approx(VALID_REWARD)
    # a narrower band: closer to p = 0.5 earns more, never as much as acceptance
    near = proposer_reward(_validation(True), _calibration(2, 8, False, band=(0.3, 0.7)))
    far = proposer_reward(_validation(True), _calibration(1, 8, False, band=(0.3, 0.7)))
    assert VALID_REWARD < far < near < ACCEPTED_REWARD


def test_proposer_reward_refuses_mismatched_content():
    with pytest.raises(ValueError, match="different task content"):
        proposer_reward(_validation(True, "aaa"), _calibration(4, 8, True, content_hash="bbb"))


# -- pure checks -----------------------------------------------------------------------


def _outcome(reward, error=None, agent_sec=0.5) -> TrialOutcome:
    return TrialOutcome(
        task="t",
        agent="oracle",
        environment="local",
        reward=reward,
        error=error,
        trial_dir="",
        duration_sec=1.0,
        agent_sec=agent_sec,
    )


def test_check_deterministic_and_nop():
    assert check_deterministic([_outcome(1.0), _outcome(1.0)]).passed
    flaky = check_deterministic([_outcome(1.0), _outcome(0.0)])
    assert flaky.passed is False and "not deterministic" in flaky.feedback
    assert check_nop(_outcome(0.0)).passed
    assert check_nop(_outcome(1.0)).passed is False
    missing = check_nop(_outcome(None, error="reward_missing"))
    assert missing.passed is False and "must always write" in missing.feedback


def test_check_timeouts_margin():
    assert check_timeouts([_outcome(1.0, agent_sec=10)], agent_timeout_sec=60, verifier_timeout_sec=None).passed
    slow = check_timeouts([_outcome(1.0, agent_sec=40)], agent_timeout_sec=60, verifier_timeout_sec=None)
    assert slow.passed is False and "40.0s" in slow.feedback
    timed_out = check_timeouts(
        [_outcome(None, error="agent_timeout", agent_sec=60)], agent_timeout_sec=60, verifier_timeout_sec=None
    )
    assert timed_out.passed is False


# -- leakage heuristics ----------------------------------------------------------------


def test_answer_literals_are_equality_targets_not_thresholds():
    source = (
        "EXPECTED_TOTAL = 48213\ndef test_x():\n    assert total() == 3.1416\n    assert acc >= 0.875\n    assert name "
        "== 'hello'\n    assert code == 404\n"
    )
    literals = python_answer_literals(source)
    assert 48213 in literals and 3.1416 in literals and 0.875 not in literals
    assert shell_answer_literals('[ "$(cat /app/out)" = "4821" ] && grep -q \'total: 77\' f') == ["4821", "total: 77"]


def test_good_task_has_no_leaks_and_flawed_instruction_does(tmp_path):
    assert scan_instruction(GOOD) == []
    leak = scan_instruction(FLAWED / "answer-in-instruction")
    assert [f.kind for f in leak] == ["answer_in_instruction"] and "5004" in leak[0].detail
    assert [f.kind for f in scan_instruction(FLAWED / "solution-in-instruction")] == ["solution_in_instruction"]


def test_scan_tree_finds_copies_by_content_and_name_but_not_shared_starter_lines(tmp_path):
    secrets = task_secrets(FLAWED / "tests-in-image")
    root = tmp_path / "layer"
    (root / "app").mkdir(parents=True)
    (root / "srv").mkdir()
    (root / "tests").mkdir()
    (root / "app" / "check_sum.py").write_text("anything")
    (root / "srv" / "renamed.py").write_text((FLAWED / "tests-in-image" / "tests" / "check_sum.py").read_text())
    (root / "tests" / "x").write_text("")
    # a starter file that shares some, but not all, distinctive solution lines is not a leak
    good_secrets = task_secrets(GOOD)
    (root / "app" / "starter.py").write_text(
        'numbers = [int(line) for line in Path("/app/numbers.txt").read_text().split()]\n'
    )
    kinds = {(f.kind, f.where) for f in scan_tree(root, secrets)}
    assert ("test_program_in_image", "/app/check_sum.py") in kinds
    assert ("tests_in_image", "/srv/renamed.py") in kinds
    assert ("harbor_dir_in_image", "/tests/x") in kinds
    assert not [f for f in scan_tree(root, good_secrets) if f.where == "/app/starter.py"]


def test_expected_values_are_found_in_any_readable_file_but_not_in_the_inputs(tmp_path):
    """GOOD sums /app/numbers.txt to 5004 (its test compares with it): where the agent could find that number."""
    import io
    import tarfile
    import zipfile

    secrets = task_secrets(GOOD)
    root = tmp_path / "rootfs"
    (root / "app" / ".meta").mkdir(parents=True)
    (root / "opt").mkdir()
    (root / "app" / "numbers.txt").write_text((GOOD / "environment" / "numbers.txt").read_text())
    assert scan_expected_values(root, GOOD, secrets) == []  # the input itself does not state the sum
    (root / "app" / ".meta" / "audit.log").write_text("rows=12\nchecked_total=5004 status=ok\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("old/sum.txt", "5004\n")
    (root / "opt" / "backup.zip").write_bytes(buffer.getvalue())
    with tarfile.open(root / "opt" / "prev.tgz", "w:gz") as tf:
        data = b"total 5004\n"
        info = tarfile.TarInfo("run/result.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    found = {f.where: f for f in scan_expected_values(root, GOOD, secrets)}
    assert set(found) == {"/app/.meta/audit.log:2", "/opt/backup.zip!old/sum.txt:1", "/opt/prev.tgz!run/result.txt:1"}
    assert {f.kind for f in found.values()} == {"expected_value_in_image"}
    assert (
        found["/app/.meta/audit.log:2"].source == "tests/test.sh" and "'5004'" in found["/app/.meta/audit.log:2"].detail
    )
    # a value in an input the instruction names is data to read there, and still a leak anywhere else (issue 39)
    (root / "app" / "numbers.txt").write_text("5004\n")
    assert {f.where for f in scan_expected_values(root, GOOD, secrets)} == set(found)


def test_a_copy_of_the_solutions_longer_output_is_found_but_not_the_outputs_own_starter(tmp_path):
    secrets = task_secrets(GOOD)
    root = tmp_path / "rootfs"
    (root / "app").mkdir(parents=True)
    (root / "srv").mkdir()
    report = "region,total\nnorth,1200.50\nsouth,980.25\neast,433.10\nwest,1501.00\n"
    outputs = {"/app/report.csv": report}
    (root / "app" / "report.csv").write_text("region,total\nnorth,1200.50\n")  # a starter with one row filled in
    assert scan_expected_values(root, GOOD, secrets, outputs) == []
    (root / "srv" / "cache.csv").write_text(report)
    found = scan_expected_values(root, GOOD, secrets, outputs)
    assert [(f.kind, f.where, f.source) for f in found] == [
        ("expected_output_in_image", "/srv/cache.csv", "/app/report.csv")
    ]
    assert "3/3 lines" in found[0].detail  # the starter's row is not news; the three others are


# -- adversary heuristics ----------------------------------------------------------------


def test_adversary_targets_outputs_and_programs_from_the_instruction():
    text = (
        "Write `/app/out/report.json` using /app/tool.py, then run `logstats /app/access.log --top 3`. Don't touch "
        "/etc/hosts or /logs/x."
    )
    assert mentioned_paths(text) == ["/app/out/report.json", "/app/tool.py", "/app/access.log"]
    assert mentioned_commands(text) == ["logstats"]
    assert mentioned_paths("Install /usr/local/bin/sumnums; see /library/notes.txt and /usr/share/x.") == [
        "/usr/local/bin/sumnums",
        "/library/notes.txt",
    ]
    assert mentioned_commands("the field `weighted_mean` and `sigma = sqrt(x)`") == []
    script = cheat_script(text)
    assert "empty_output /app/out/report.json" in script and "exit0_stub /app/tool.py" in script
    assert "/tmp/.reward-loop.sh" in script and "chattr" not in script
    assert "reward-loop" not in cheat_script(text, ["tests", "outputs"])
    with pytest.raises(ValueError):
        cheat_script(text, ["nonsense"])
    assert set(CHEAT_FAMILIES) == {"reward", "plant", "tests", "outputs", "peek", "inject"}
    # planting is its own family (a shared-mode limit), and peek replaces the named program with a reader
    assert "planted_conftest" in cheat_script(text, ["plant"]) and "planted_conftest" not in cheat_script(
        text, ["tests"]
    )
    peek = cheat_script(text, ["peek"])
    assert "answer_reader /app/tool.py" in peek and "reward.json" in peek and "empty_output" not in peek


def test_store_hook_writes_verdicts_into_the_real_store(tmp_path):
    from autoenv.store.db import Store

    task = _copy(GOOD, tmp_path)
    content_hash = cache.task_content_hash(task)
    store = Store(tmp_path / "store.db")
    hook = store_hook(store)
    cache.register_store_hook(hook)
    try:
        cache.save_record(task, "validation", "k", _validation(True, content_hash))
        assert store.task(content_hash)["proposer_reward"] == pytest.approx(VALID_REWARD)
        cache.save_record(task, "calibration", "k", _calibration(3, 8, True, content_hash=content_hash))
    finally:
        cache.unregister_store_hook(hook)
        store.close()
    row = Store(tmp_path / "store.db").task(content_hash)
    assert row["valid"] and row["calibrated"] and row["pass_rate"] == pytest.approx(3 / 8)
    assert row["proposer_reward"] == ACCEPTED_REWARD and row["validation"]["valid"] is True


def test_solution_outputs_found_in_the_instruction(tmp_path):
    """The answer however the instruction states it: verbatim, in an example block, in words; not data or chance."""
    from autoenv.validate.leakage import scan_outputs_in_instruction

    task = _copy(GOOD, tmp_path)
    instruction = task / "instruction.md"
    base = instruction.read_text()
    outputs = {"/app/sum.txt": "5004\n"}
    assert scan_outputs_in_instruction(task, outputs) == []
    instruction.write_text(base + "\nExample output:\n\n```\n5004\n```\n")
    assert [f.kind for f in scan_outputs_in_instruction(task, outputs)] == ["output_in_instruction"]
    instruction.write_text(base + "\n(Hint: it comes to five thousand and four.)\n")
    [finding] = scan_outputs_in_instruction(task, outputs)
    assert "five thousand four" in finding.detail
    # a value that is also in the environment's own files is data the agent reads, and tiny values say nothing
    instruction.write_text(base + "\nThe first number is 417.\n")
    assert scan_outputs_in_instruction(task, {"/app/first.txt": "417\n"}) == []
    instruction.write_text(base + "\nWrite 0 if the file is empty.\n")
    assert scan_outputs_in_instruction(task, {"/app/sum.txt": "0\n"}) == []
    # most lines of a longer output
    instruction.write_text(base + "\nExpected:\n\nnorth 220.00\nsouth 100.00\neast 50.00\n")
    assert scan_outputs_in_instruction(task, {"/app/r.txt": "north 220.00\nsouth 100.00\neast 50.00\nwest 300.00\n"})


def test_a_base_file_the_task_rewrote_is_read_even_with_the_bases_size_and_mtime(tmp_path):
    """Unchanged base-system files are not the task's; a Dockerfile that writes the answer into one and gives it
    the base file's size and mtime (``touch -r``) does not hide it."""
    import os

    secrets = task_secrets(GOOD)
    base, root = tmp_path / "base", tmp_path / "rootfs"
    for r in (base, root):
        (r / "etc").mkdir(parents=True)
    (base / "etc" / "motd").write_text("welcome 5004\n")  # chance: the base system says 5004 too
    (root / "etc" / "motd").write_text("welcome 5004\n")
    (base / "etc" / "issue").write_text("Debian 12.\n")
    (root / "etc" / "issue").write_text("total=5004\n")  # same size as the base's
    for r in (base, root):
        for name in ("motd", "issue"):
            os.utime(r / "etc" / name, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    found = scan_expected_values(root, GOOD, secrets, base=base)
    assert [f.where for f in found] == ["/etc/issue:1"]


def test_the_checks_version_is_a_hash_of_the_code_that_decides_verdicts(tmp_path):
    import autoenv
    from autoenv.validate import checks

    src = Path(shutil.copytree(Path(autoenv.__file__).parent, tmp_path / "autoenv"))
    assert checks.checks_version(src) == checks.CHECKS_VERSION
    assert checks.CHECKS_VERSION in record_key(ValidationSettings())
    for module in ("validate/checks/nop.py", "agents/adversary.py", "agents/partial.py", "validate/leakage/image.py"):
        path = src / module
        original = path.read_text()
        path.write_text(original + "\n# judged differently\n")
        assert checks.checks_version(src) != checks.CHECKS_VERSION, module
        path.write_text(original)
    (src / "families" / "note.py").write_text("# not validation's code\n")
    assert checks.checks_version(src) == checks.CHECKS_VERSION


def test_a_partial_trial_that_changed_nothing_while_the_oracles_runs_did_fails_probes():
    """Issue 39: a solve.sh that notices the partial trial and does nothing must not make the partial check
    "not run" and the task valid; a solution that changes no file in any run passes."""
    from autoenv.validate.checks import CHECK_ORDER, MAY_NOT_RUN
    from autoenv.validate.checks.probes import check_probes

    assert CHECK_ORDER[-1] == "probes"

    hidden = check_probes([["/app/report.json"], ["/app/report.json"]], [])
    assert hidden.passed is False and "none in the partial-solution trial" in hidden.summary
    assert "/app/report.json" in hidden.feedback
    assert check_probes([["/app/report.json"]] * 2, ["/app/report.json"]).passed is True
    assert check_probes([[], []], []).passed is True  # its result is a deletion, a permission or a process
    assert check_probes([None, ["/app/a"]], []).passed is None  # a run recorded nothing: not a pass
    assert "probes" not in MAY_NOT_RUN  # so "not run" here makes the task invalid


def test_the_oracle_runs_carry_the_partial_trials_probes():
    """What runs before and around solve.sh is the same in the oracle's runs and the partial trial."""
    from autoenv.agents.partial import MARKER, ProbedOracleAgent, mutation_script
    from autoenv.validate.validation import TRIAL_AGENTS

    assert TRIAL_AGENTS["oracle"] == "autoenv.agents.partial:ProbedOracleAgent"
    assert ProbedOracleAgent(Path("/tmp/x")).mutation == "none"
    none, halved = mutation_script("none"), mutation_script("halved")
    assert "CHANGED" in none and "halve" not in none and "kill" not in none
    assert none.splitlines()[0] in halved and MARKER in halved


def test_inputs_are_the_files_the_instruction_names_never_the_solution_or_a_folder(tmp_path):
    """Issue 39: what counts as an input is decided by what the agent reads (the instruction), by exact path."""
    from autoenv.validate.leakage import input_paths

    task = Path(shutil.copytree(GOOD, tmp_path / "task"))
    assert input_paths(task) == {"/app/numbers.txt", "/app/sum.txt"}
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\n# see audit.log and /app/.meta\n" + "true\n")
    instruction = task / "instruction.md"
    instruction.write_text(instruction.read_text() + "All files are in /app. Notes are in `notes/today.md`.\n")
    inputs = input_paths(task)
    assert {"/app/numbers.txt", "/app/sum.txt", "/app/notes/today.md"} <= inputs
    assert not any("audit.log" in p or p.startswith("/app/.meta") for p in inputs)


def test_a_leak_is_found_whatever_the_solution_or_a_folder_named_in_the_instruction_says(tmp_path):
    """The two steering variants of issue 39 on the audit-log leak: neither hides it any more."""
    secrets = task_secrets(GOOD)
    task = Path(shutil.copytree(GOOD, tmp_path / "task"))
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\n# see audit.log\ntrue\n")
    instruction = task / "instruction.md"
    instruction.write_text(instruction.read_text() + "All files are in /app.\n")
    root = tmp_path / "rootfs"
    (root / "app" / ".meta").mkdir(parents=True)
    (root / "app" / "numbers.txt").write_text((GOOD / "environment" / "numbers.txt").read_text())
    (root / "app" / ".meta" / "audit.log").write_text("rows=12\nchecked_total=5004 status=ok\n")
    assert [f.where for f in scan_expected_values(root, task, secrets)] == ["/app/.meta/audit.log:2"]


def test_logs_caches_and_node_modules_are_read_unless_they_are_the_base_images(tmp_path):
    import os

    secrets = task_secrets(GOOD)
    base, root = tmp_path / "base", tmp_path / "rootfs"
    for r in (base, root):
        (r / "var" / "log").mkdir(parents=True)
    (root / "root" / ".cache" / "tool").mkdir(parents=True)
    (root / "app" / "node_modules" / "x").mkdir(parents=True)
    (root / "root" / ".cache" / "tool" / "last.json").write_text('{"total": 5004}\n')
    (root / "app" / "node_modules" / "x" / "index.js").write_text("module.exports = 5004;\n")
    (root / "var" / "log" / "job.log").write_text("done: 5004\n")
    for r in (base, root):  # the base system's own log says 5004 by chance: unchanged, it is not the task's
        (r / "var" / "log" / "boot.log").write_text("boot 5004\n")
        os.utime(r / "var" / "log" / "boot.log", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    found = sorted(f.where for f in scan_expected_values(root, GOOD, secrets, base=base))
    assert found == ["/app/node_modules/x/index.js:1", "/root/.cache/tool/last.json:1", "/var/log/job.log:1"]


def test_validation_settings_travel_whole_and_follow_the_stage_backend():
    """The flywheel's config nests validation's settings; the proposer and the judge get the same object, on the
    stage's one backend, and calibration counts a pass as validation does."""
    from autoenv.flywheel.config import FlywheelConfig
    from autoenv.proposer.models import ProposeOptions
    from autoenv.validate.judge import JudgeSettings

    config = FlywheelConfig(env="docker", validation=ValidationSettings(repeats=3, threshold=0.5, strict=True))
    assert config.validation == ValidationSettings(env="docker", repeats=3, threshold=0.5, strict=True)
    options = ProposeOptions(env=config.env, validation=config.validation)
    judge = JudgeSettings(validation=options.validation, solver="oracle", rollouts=2)
    assert judge.validation is config.validation and judge.env == "docker"
    assert (judge.calibration().threshold, judge.calibration().env, judge.calibration().rollouts) == (0.5, "docker", 2)
    assert ProposeOptions(env="modal").validation.env == "modal"
    # part of the record's key: a verdict reached under other settings is not reused
    assert record_key(config.validation) != record_key(ValidationSettings(env="docker"))
