"""Difficulty ladders (issue 42): levels recorded in task.toml, every level valid and solvable, the proposer climbs."""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
import tomllib

import pytest
from harbor.models.task.task import Task
from proposer_helpers import REPO, bundled_seed_cases, needs_sandbox, seed_case

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.colouring import SEARCH
from autoenv.families.levels import AXES, LEVELS_FILE, Level, climbing, load_ladder, read_level, skill_at, with_level
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import ProposeOptions, SeedCase
from autoenv.proposer.propose import propose
from autoenv.proposer.scripted import ScriptedProposer, pinned_level
from autoenv.proposer.workspace import Workspace
from autoenv.shared.settings import ValidationSettings
from autoenv.taskfmt.check import check_task
from autoenv.trials.runner import run_trial
from autoenv.validate.calibration import CalibrationSettings, calibrate
from autoenv.validate.validation import validate_task

LADDERED = [name for name, family in FAMILIES.items() if family.ladder]
EVERY_LEVEL = [(name, level) for name in LADDERED for level in FAMILIES[name].levels]
#: every level but the family's default: the default level is the task the bundled seed cases
#: (tests/proposer/test_propose.py) and the office families' tests (tests/office/test_office_trials.py) validate and
#: solve already; test_the_default_level_of_every_ladder_is_validated_elsewhere holds that true for every family.
OTHER_LEVELS = [(name, level) for name, level in EVERY_LEVEL if level != FAMILIES[name].default_level]
#: Families whose level-1 task the scripted policy's generic recipes solve (one named function; a TSV classifier).
GENERIC_AT_LEVEL_ONE = {"bugfix": "fix_function", "text-classification": "text_classifier"}


def case_for(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def test_log_parse_bugfix_and_csv_stat_are_laddered():
    assert {"log-parse", "csv-stat", "bugfix"} <= set(LADDERED)
    assert all(len(FAMILIES[name].levels) >= 4 for name in ("log-parse", "csv-stat", "bugfix"))
    assert FAMILIES["log-parse"].levels == (1, 2, 3, 4, 5, 6, 7)
    assert set(FAMILIES["log-parse"].axes) == {"composition", "hidden_cases", "less_told", "scale"}
    assert FAMILIES["csv-stat"].levels == (1, 2, 3, 4, 5, 6, 7) and pinned_level(FAMILIES["csv-stat"], "max") == 7


@pytest.mark.parametrize(("family", "level"), EVERY_LEVEL)
def test_every_level_is_recorded_in_harbor_metadata_and_recognised(family, level, tmp_path):
    draft = FAMILIES[family].draft(case_for(family), random.Random(level), level=level)
    task = draft.write(tmp_path)
    assert check_task(task) == [], [str(p) for p in check_task(task)]
    metadata = Task(task).config.metadata  # Harbor's own loader keeps the record
    rung = FAMILIES[family].level(level)
    assert metadata["level"] == level and metadata["level_axes"] == {a: n for a, n in rung.axes.items() if n}
    assert draft.params["ladder_level"] == level
    matched = match_recipe(draft.files["instruction.md"])
    assert matched is not None, "the scripted solver recognises it"
    if level == 1 and family in GENERIC_AT_LEVEL_ONE:  # the scripted policy's generic recipe does level 1
        assert matched[0].name == GENERIC_AT_LEVEL_ONE[family]
    else:
        assert matched[0] is FAMILIES[family].recipe
    if family in ("log-parse", "bugfix"):  # each level is a skill of its own to the learned solver
        assert matched[0].difficulty(draft.files["instruction.md"]) == (None if level == 1 else rung.skill())


def test_level_one_is_todays_task_plus_its_record():
    """The generator's level-1 draw is unchanged; the draft only gains the two metadata lines."""
    family = FAMILIES["log-parse"]
    plain = family.generate(case_for("log-parse"), random.Random(3))
    drafted = family.draft(case_for("log-parse"), random.Random(3))
    assert {k: v for k, v in plain.files.items() if k != "task.toml"} == {
        k: v for k, v in drafted.files.items() if k != "task.toml"
    }
    assert drafted.files["task.toml"] == with_level(plain.files["task.toml"], family.level(1))
    assert drafted.files["task.toml"].replace("level = 1\nlevel_axes = {}\n", "") == plain.files["task.toml"]


def test_bundled_seed_cases_give_their_familys_default_level():
    for path in bundled_seed_cases():
        case = SeedCase.load(path)
        family = FAMILIES[case.family]
        draft = ScriptedProposer(seed=0, flaw_rate=0.0).draft(case, 0)
        if family.ladder:
            meta = tomllib.loads(draft.files["task.toml"])["metadata"]
            assert meta["level"] == family.default_level, path.name
    assert FAMILIES["log-parse"].default_level == 1


def test_levels_name_known_axes_and_pins_resolve():
    with pytest.raises(ValueError, match="unknown axes"):
        Level(number=2, axes={"sheer_will": 1}, asks="x")
    family = FAMILIES["log-parse"]
    assert pinned_level(family, "max") == 7 and pinned_level(family, "2") == 2
    with pytest.raises(ValueError, match="no level 9; its levels: 1, 2, 3, 4, 5, 6, 7"):
        pinned_level(family, 9)
    with pytest.raises(ValueError, match="level number"):
        ProposeOptions(level="hard")
    assert list(AXES)[:2] == ["less_told", "hidden_cases"]


def test_every_ladder_is_a_levels_file_beside_its_generator(tmp_path):
    """A ladder is data (levels.toml); a malformed file is an error naming it; recipes read levels one way."""
    for name in LADDERED:
        generator = importlib.import_module(f"autoenv.families.{name.replace('-', '_')}.generator")
        ladder = load_ladder(generator.__file__)
        assert ladder.levels == FAMILIES[name].ladder and ladder.default == FAMILIES[name].default_level, name
    beside = tmp_path / "generator.py"
    cases = {
        "default = 1\n": "level",  # no rung
        'default = 3\n[[level]]\nasks = "a"\n': "default = 3, but the file declares 1 levels",
        'default = 1\n[[level]]\nasks = "a"\naxes = { sheer_will = 1 }\n': "unknown axes",
        'default = 1\n[[level]]\nask = "a"\n': "asks",
        "default = [": "not a valid ladder",
    }
    for text, problem in cases.items():
        (tmp_path / LEVELS_FILE).write_text(text)
        with pytest.raises(ValueError, match=str(tmp_path / LEVELS_FILE)) as raised:
            load_ladder(beside)
        assert problem in str(raised.value), (text, str(raised.value))
    (tmp_path / LEVELS_FILE).write_text(
        'default = 2\n[[level]]\nasks = "a"\n[[level]]\naxes = {scale = 2}\nasks = "b"\n'
    )
    ladder = load_ladder(beside)
    assert ladder.default == 2 and [(lv.number, lv.skill()) for lv in ladder.levels] == [(1, "L1"), (2, "L2:scale")]
    assert skill_at(ladder.levels, 1) is None and skill_at(ladder.levels, 2) == "L2:scale"
    markers = climbing("a", "b", "c")
    assert [read_level(t, markers) for t in ("", "b c", "a c", "a b", "a b c")] == [1, 1, 2, 3, 4]
    assert read_level("x z", (("x",), ("y",), ("y", "z"))) == 2  # each level's own phrases, highest first


def test_climbing_moves_one_level_per_verdict_within_the_ladder(tmp_path):
    family = FAMILIES["log-parse"]
    proposer = ScriptedProposer(workspace=Workspace(tmp_path).init())
    assert proposer.observe(family, 1, 1.0) == 2 and proposer.climbed() == {"log-parse": 2}
    assert proposer.observe(family, 7, 1.0) == 7, "the top stays the top"
    assert proposer.observe(family, 7, 0.5) == 7, "an accepted task leaves the level where it is"
    assert proposer.observe(family, 1, 0.0) == 1, "the bottom stays the bottom"
    assert proposer.observe(family, 3, 0.0) == 2
    case = case_for("log-parse")
    assert proposer.draft(case, 5).params["ladder_level"] == 2, "the next draft is drawn at the climbed level"
    pinned = ScriptedProposer(workspace=Workspace(tmp_path).init(), level="max")
    assert pinned.observe(family, 7, 0.0) == 7 and pinned.draft(case, 5).params["ladder_level"] == 7


def test_families_command_lists_levels_and_axes():
    out = subprocess.run(
        [sys.executable, "-m", "autoenv.cli.main", "families", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert set(rows) == set(FAMILIES)
    log = rows["log-parse"]
    assert [lv["number"] for lv in log["levels"]] == [1, 2, 3, 4, 5, 6, 7] and log["default_level"] == 1
    assert "scale" in log["axes"] and "logging config" in log["levels"][2]["asks"]
    assert all(rows[name]["levels"] == [] for name, family in FAMILIES.items() if not family.ladder)


def test_the_default_level_of_every_ladder_is_validated_elsewhere():
    """Each laddered family's default level is the level its bundled seed case's task is drawn at (validated and
    solved for every bundled case) or, for a family that writes folders, the office families' test draws."""
    from autoenv.families.office.bundled import office_families
    from autoenv.families.registry import family_for

    with_seed_case = {family_for(SeedCase.load(path)).name for path in bundled_seed_cases()}
    elsewhere = with_seed_case | set(office_families())
    assert set(LADDERED) <= elsewhere, sorted(set(LADDERED) - elsewhere)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize(("family", "level"), OTHER_LEVELS)
def test_every_level_validates_and_the_scripted_solver_solves_it(family, level, tmp_path):
    """The top level, and a legacy-tool level below it (a task of its own shape: the tool shipped, retired by
    test.sh, probed by the solver), gets the whole validation (oracle, nop, partial, tamper ...) and a scripted
    rollout (at a search level, primer-tm's pools, config-repair's windows or log-parse's slots, a search for a
    bounded time that may not land: it runs to the end and the tests' one failure, if any, is the clash check); a
    level between the default and the top, whose
    tests are the top's with fewer axes (the same generator), the reference passing and doing nothing failing.
    CI time: every check on every level of ten families is over its budget."""
    draft = FAMILIES[family].draft(case_for(family), random.Random(100 + level), level=level)
    task = draft.write(tmp_path / "tasks")
    if level != max(FAMILIES[family].levels) and "legacy" not in draft.params:
        oracle = run_trial(task, "oracle", trials_dir=tmp_path / "trials")
        assert oracle.error is None and oracle.reward == 1.0, oracle
        nop = run_trial(task, "nop", trials_dir=tmp_path / "trials")
        assert nop.error is None and nop.reward == 0.0, nop
        return
    # one oracle run (repeats=1): whether verdicts repeat is the validator's own test's business, not the ladder's
    report = validate_task(
        task, ValidationSettings(repeats=1), force=True, record=False, trials_dir=tmp_path / "validate"
    )
    assert report.valid, report.feedback()
    status = {check.name: check.status for check in report.checks}
    assert all(status[name] == "pass" for name in ("oracle", "nop", "partial", "tamper")), status
    solved = calibrate(
        task,
        CalibrationSettings(solver="terminal:policy=scripted,success_rate=1.0", rollouts=1),
        trials_dir=tmp_path / "solve",
    )
    if SEARCH in draft.params:  # a search for a bounded time, which lands seldom: it ran and wrote a whole sheet
        (rollout,) = solved.rollouts
        assert solved.n == 1 and rollout.error is None, rollout
        assert solved.passes == 1 or draft.params[SEARCH] in " ".join(rollout.failed_tests), rollout
        return
    assert solved.passes == 1, solved.verdict


@pytest.mark.slow
@needs_sandbox
def test_the_scripted_proposer_climbs_on_too_easy_and_descends_on_too_hard(tmp_path):
    """Real calibrations: the oracle passes every rollout (too easy: up a level each round), nop none (down)."""
    case = seed_case("log-parser-malformed")
    ws = tmp_path / "workspace"
    options = dict(method="feedback", flaw_rate=0.0, rollouts=1, max_rounds=2, workspace=ws)
    up = propose(case, out_dir=tmp_path / "up", solver="oracle", **options)
    assert json.loads((ws / ".proposer" / "levels.json").read_text()) == {"log-parse": 3}
    details = [a.detail for a in up.records[0].actions]
    assert any("log-parse level 1 -> 2" in d for d in details) and any("level 2 -> 3" in d for d in details)
    kept = tomllib.loads((tmp_path / "up" / "rejected").glob("*/task.toml").__next__().read_text())
    assert kept["metadata"]["level"] in (1, 2, 3)
    down = propose(case, out_dir=tmp_path / "down", solver="nop", **options)
    assert json.loads((ws / ".proposer" / "levels.json").read_text()) == {"log-parse": 1}
    details = [a.detail for a in down.records[0].actions]
    assert any("log-parse level 3 -> 2" in d for d in details), details
