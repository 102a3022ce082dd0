"""Seed cases: the file format, the bundled cases, and extraction from real failed trials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from proposer_helpers import REPO, SEED_CASES, bundled_seed_cases, needs_sandbox
from typer.testing import CliRunner

from autoenv.cli.main import app
from autoenv.families.registry import FAMILIES, family_for
from autoenv.proposer.models import SeedCase
from autoenv.proposer.seeds import extract_seed_cases, seed_case_from_trial
from autoenv.trials.runner import run_trial

runner = CliRunner()


def test_yaml_and_json_round_trip(tmp_path):
    case = SeedCase(
        id="x-1",
        task="examples/tasks/csv-statistic",
        trajectory="it did y",
        failure_mode="wrong mean",
        target_skill="grouped statistics",
        family="csv-stat",
        reward=0.0,
    )
    case.dump(tmp_path / "x.yaml")
    assert SeedCase.load(tmp_path / "x.yaml") == case
    (tmp_path / "x.json").write_text(case.model_dump_json())
    assert SeedCase.load(tmp_path / "x.json") == case


@pytest.mark.parametrize(
    "text, why",
    [("id: x\ntask: y\n", "failure_mode"), ("id: [x\n", "not valid YAML"), ("- a\n- b\n", "must be a mapping")],
)
def test_bad_seed_case_names_the_file(tmp_path, text, why):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=why) as info:
        SeedCase.load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("text", ["id: x\ntask: y\n", "id: [x\n", "- a\n"])
def test_cli_bad_seed_case_is_one_line_exit_1(tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["propose", "--seed-case", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert "bad.yaml" in lines[0].replace("\n", "")
    result = runner.invoke(
        app, ["propose", "--seed-case", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 1 and "missing.yaml" in result.output and "Traceback" not in result.output


def test_bundled_seed_cases_cover_the_required_failures():
    paths = bundled_seed_cases()
    assert len(paths) >= 6
    cases = {p.stem: SeedCase.load(p) for p in paths}
    assert {c.id for c in cases.values()} == set(cases), "file name = id"
    families = {family_for(c).name for c in cases.values()}
    assert {"text-classification", "primer-tm", "mlp-rebuild"} <= families
    assert (
        "timeout"
        in cases["fasttext-accuracy-timeout"].failure_mode.lower()
        + cases["fasttext-accuracy-timeout"].trajectory.lower()
    )
    assert "python" in cases["primer-tm-no-python"].failure_mode.lower()
    assert "weights" in cases["mlp-rebuild-from-weights"].task.lower()
    for case in cases.values():
        assert case.family in FAMILIES
        # without the hint, keywords alone lead to the same family
        assert family_for(case.model_copy(update={"family": None})).name == case.family


@needs_sandbox
def test_seed_cases_from_failed_trials(tmp_path):
    trials = tmp_path / "trials"
    task = REPO / "examples" / "tasks" / "fix-median-bug"
    failed = run_trial(task, "nop", trials_dir=trials)
    passed = run_trial(task, "oracle", trials_dir=trials)
    assert failed.reward == 0.0 and passed.reward == 1.0
    cases = extract_seed_cases(trials)
    assert len(cases) == 1, [c.id for c in cases]
    case = cases[0]
    assert case.task == str(task)
    assert case.reward == 0.0 and case.source_trial == str(Path(failed.trial_dir).resolve())
    assert "verifier check(s) failed" in case.failure_mode and "test_median" in case.failure_mode
    assert "median" in case.target_skill.lower() and "debugging" in case.target_skill
    assert seed_case_from_trial(passed.trial_dir) is None

    out = tmp_path / "seeds"
    result = runner.invoke(app, ["seed-cases", str(trials), "--out", str(out)])
    assert result.exit_code == 0, result.output
    files = sorted(out.glob("*.yaml"))
    assert len(files) == 1
    assert SeedCase.load(files[0]) == case
    assert yaml.safe_load(files[0].read_text())["failure_mode"] == case.failure_mode
    as_json = runner.invoke(app, ["seed-cases", str(trials), "--out", str(out), "--json"])
    assert json.loads(as_json.stdout)[0]["id"] == case.id


def test_seed_cases_cli_on_a_folder_without_trials(tmp_path):
    result = runner.invoke(app, ["seed-cases", str(tmp_path)])
    assert result.exit_code == 1 and "no Harbor trial directories" in result.output
    assert SEED_CASES.is_dir()
