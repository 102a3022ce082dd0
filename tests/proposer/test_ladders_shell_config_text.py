"""The ladders of shell-script, config-repair and text-classification (issue 42), checked without a sandbox.

test_ladders.py validates every level in a sandbox (oracle, nop, partial, tamper) and has the scripted solver solve
it. Here, fast: each level is a skill of its own to the learned solver, the corners a level adds really break what
the level below accepts, and the reference programs agree with the tests' own reference on the hidden inputs.
"""

from __future__ import annotations

import configparser
import csv
import hashlib
import io
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.config_repair import recipe as config_recipe
from autoenv.families.registry import FAMILIES
from autoenv.families.shell_script import ladder as shell_ladder
from autoenv.families.shell_script.recipe import TallyRecipe
from autoenv.families.solver import fill_program, program_source
from autoenv.families.text_classification import ladder as text_ladder
from autoenv.families.text_classification.generator import FILLER
from autoenv.proposer.models import SeedCase

OURS = ("shell-script", "config-repair", "text-classification")


def draft(family: str, level: int, seed: int):
    case = SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)
    return FAMILIES[family].draft(case, random.Random(seed), level=level)


def embedded(tests: str, name: str):
    """A ``NAME = json.loads(...)`` value of a generated test file."""
    return json.loads(eval(tests.split(f"{name} = json.loads(")[1].split(")\n")[0]))  # noqa: S307 - our own text


#: sha256 (first 16 hex digits) of the level-1 drafts of seeds 0-7, as the generators wrote them before the ladders
LEVEL_ONE_DIGEST = {
    "shell-script": "d6c26fc561dbe493",
    "config-repair": "90130029444ebc3d",
    "text-classification": "6b25c1e4abb61f72",
}


@pytest.mark.parametrize("family", OURS)
def test_level_one_is_the_task_of_earlier_releases_byte_for_byte(family):
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family=family)
    digest = hashlib.sha256()
    for seed in range(8):
        plain = FAMILIES[family].generate(case, random.Random(seed))
        files = {rel: text if isinstance(text, str) else text.hex() for rel, text in sorted(plain.files.items())}
        digest.update(json.dumps(files).encode())
        digest.update(plain.name.encode())
    assert digest.hexdigest()[:16] == LEVEL_ONE_DIGEST[family]


#: each family's top level: config-repair's level 5 retires the legacy `cfgnorm` (test_legacy_config_repair.py), and
#: its level 6 leaves only the archive of the tool's runs (test_legacy_archive.py), its level 7 is a search (the
#: maintenance windows, test_search_levels.py)
TOP = {"shell-script": 4, "config-repair": 7, "text-classification": 4}


@pytest.mark.parametrize("family", OURS)
def test_four_levels_each_a_skill_of_its_own(family):
    levels = tuple(range(1, TOP[family] + 1))
    assert FAMILIES[family].levels == levels and FAMILIES[family].default_level == 1
    skills = set()
    for level in levels:
        recipe, _ = match_recipe(draft(family, level, level).files["instruction.md"])
        skill = recipe.difficulty(draft(family, level, level).files["instruction.md"])
        if level == 1:
            assert skill is None, "level 1 keeps the skill key the learned solver already has"
        else:
            assert recipe is FAMILIES[family].recipe and skill == FAMILIES[family].level(level).skill()
        skills.add(skill)
    assert len(skills) == len(levels)


def test_shell_reference_script_matches_the_tests_reference_and_level_one_breaks_on_corners(tmp_path):
    scope: dict = {}
    exec(shell_ladder.REFERENCE + shell_ladder.CORNERS, scope)  # noqa: S102 - the tests' own reference and trees
    root = tmp_path / "tree"
    root.mkdir()
    scope["build_corners"](root, random.Random(5))
    script = tmp_path / "tally.sh"
    for sort, sep, recursive, hidden in itertools.product(["count", "bytes", "ext"], ["\t", ","], [0, 1], [0, 1]):
        script.write_text(shell_ladder.script_body(sort, sep, bool(recursive), bool(hidden), None))
        out = subprocess.run(["bash", script, root], capture_output=True, text=True, check=True)
        assert out.stdout == scope["render"](scope["tally"](str(root), recursive, hidden), sort, sep)
    script.write_text(shell_ladder.script_body("bytes", ",", False, False, ("R", "a", "k")))
    for args, (recursive, hidden, sort) in [
        ([], (0, 0, "bytes")),
        (["-k", "ext", "-k", "count", "-R", "-a"], (1, 1, "count")),
    ]:
        out = subprocess.run(["bash", script, *args, root], capture_output=True, text=True, check=True)
        assert out.stdout == scope["render"](scope["tally"](str(root), recursive, hidden), sort, ",")
    for args in (["-q", root], ["-k", "size", root], ["-k"], [root, root]):
        out = subprocess.run(["bash", script, *args], capture_output=True, text=True)
        assert (out.returncode, out.stdout) == (2, ""), args
    plain = TallyRecipe().plain_script({"recursive": True, "hidden": True, "sort": "ext", "sep": ","})
    script.write_text(plain)
    out = subprocess.run(["bash", script, root], capture_output=True, text=True)
    assert out.stdout != scope["render"](scope["tally"](str(root), True, True), "ext", ","), "the corners bite"


def typed(kind, raw: str):
    """A value as the launcher converts it (ints, floats, true/false; strings and listed values as written)."""
    if kind in ("int", "float"):
        return int(raw) if kind == "int" else float(raw)
    return {"true": True, "false": False}[raw] if kind == "bool" else raw


def repaired(task: Path, text: str) -> str:
    """``text`` repaired by the config-repair recipe's program (level 4's reference) as ``repair_config.py IN OUT``."""
    app = task / "environment" / "app"
    program = fill_program(program_source(config_recipe.__file__), {"ini": ""}).replace('"/app"', repr(str(app)))
    (app / "repair_config.py").write_text(program)
    (app / "in.ini").write_bytes(text.encode())
    subprocess.run([sys.executable, "repair_config.py", "in.ini", "out.ini"], cwd=app, check=True)
    return (app / "out.ini").read_text()


@pytest.mark.parametrize("level", [2, 3, 4])
def test_config_breakages_stop_the_launcher_and_the_repair_gives_the_intended_values(level, tmp_path):
    for seed in range(4):
        d = draft("config-repair", level, seed)
        task = d.write(tmp_path / str(seed))
        app = task / "environment" / "app"
        check = subprocess.run([sys.executable, "service.py", "--check"], cwd=app, capture_output=True, text=True)
        assert check.returncode != 0, "the shipped config is broken"
        tests = d.files["tests/test_outputs.py"]
        kinds, cases = embedded(tests, "KINDS"), {d.params["ini"]: embedded(tests, "EXPECTED")}
        inputs = {d.params["ini"]: d.files[f"environment/app/config/{d.params['ini']}"]}
        if level >= 3:
            assert "CHANGES.md" in d.files["instruction.md"] and "byte-order" not in d.files["instruction.md"]
        if level == 4:
            cases |= embedded(tests, "HIDDEN")
            inputs |= {name: d.files[f"tests/{name}"] for name in cases if name.startswith("hidden_")}
            assert "\r\n" in inputs["hidden_2.ini"]
        for name, want in cases.items():
            parser = configparser.ConfigParser(interpolation=None, strict=True)
            parser.read_string(repaired(task, inputs[name]))
            got = {f"{s}.{k}": parser.get(s, k) for s in parser.sections() for k in parser.options(s)}
            assert set(got) == set(want), name
            for key, value in want.items():
                assert typed(kinds[key], got[key]) == value, (name, key, got[key])


@pytest.mark.parametrize("level", [3, 4])
def test_text_reference_program_meets_the_target_on_unseen_rows(level, tmp_path):
    d = draft("text-classification", level, 3)
    app = d.write(tmp_path) / "environment" / "app"
    source = d.files["solution/solve.sh"].split("<<'PY'\n")[1].split("PY\n")[0].replace('"/app/', f'"{app}/')
    (app / "predict.py").write_text(source)
    expected = embedded(d.files["tests/test_outputs.py"], "EXPECTED")
    threshold = d.params["threshold"]
    files = {"hidden_1.csv": d.files["tests/hidden_1.csv"], "hidden_empty.csv": d.files["tests/hidden_empty.csv"]}
    if level == 4:
        big = embedded(d.files["tests/test_outputs.py"], "BIG")
        rows = text_ladder.big_rows(big["seed"], 3000, big["vocab"], FILLER, big["strength"], big["weights"])
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(
            [big["columns"]]
            + [[{"id": i, big["text_col"]: t}.get(c, "web") for c in big["columns"]] for i, t, _ in rows]
        )
        files["big.csv"], expected["big.csv"] = out.getvalue(), [[i, y] for i, _, y in rows]
    for name, text in files.items():
        (app / "in.csv").write_bytes(text.encode())
        subprocess.run([sys.executable, "predict.py", "in.csv", "out.csv"], cwd=app, check=True)
        got = list(csv.reader(io.StringIO((app / "out.csv").read_text())))
        assert [r[0] for r in got[1:]] == [i for i, _ in expected[name]], name
        if expected[name]:
            accuracy = sum(r[1] == y for r, (_, y) in zip(got[1:], expected[name])) / len(expected[name])
            majority = max(sum(y == c for _, y in expected[name]) for c in {y for _, y in expected[name]})
            assert accuracy >= threshold > majority / len(expected[name]), (name, accuracy, threshold)


def test_the_top_levels_say_the_limits_their_tests_enforce():
    shell, text = FAMILIES["shell-script"].level(4).asks, FAMILIES["text-classification"].level(4).asks
    assert f"{shell_ladder.BIG_FILES:,} files tallied within {shell_ladder.BIG_LIMIT_SEC} s" in shell
    assert f"{text_ladder.BIG_ROWS:,} rows labelled within {text_ladder.BIG_LIMIT_SEC} s" in text
    instruction = draft("shell-script", 4, 0).files["instruction.md"]
    assert f"{shell_ladder.BIG_FILES:,} files" in instruction and f"{shell_ladder.BIG_LIMIT_SEC} seconds" in instruction
