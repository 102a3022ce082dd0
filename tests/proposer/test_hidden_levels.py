"""The top levels of bugfix and csv-stat (issue 42): every hidden rule is in the tests' unseen inputs, and a solution
that skips any one rule fails them.

The tests' expected values are read from the generated ``tests/test_outputs.py`` (its constants), and a package
(bugfix) or program (csv-stat) is run on the same unseen inputs in a real subprocess: the correct one agrees with
every expected value, the shipped buggy one and each variant that breaks one documented rule do not. The tasks'
real validation (oracle, nop, partial, tamper, a scripted rollout) is tests/proposer/test_ladders.py's.
"""

from __future__ import annotations

import ast
import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.bugfix import ledger
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase

SEEDS = ("hidden:0", "hidden:1", "hidden:5")  # bugfix: together they draw both bugs of every function


def case_for(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def constants(test_source: str) -> dict:
    """The module-level constants of a generated test file (literals and ``json.loads`` of literals)."""
    found = {}
    for node in ast.parse(test_source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "loads":
                found[node.targets[0].id] = json.loads(ast.literal_eval(value.args[0]))
            else:
                try:
                    found[node.targets[0].id] = ast.literal_eval(value)
                except ValueError:
                    continue
    return found


# -- bugfix level 5 ------------------------------------------------------------------------------------------------

#: Each rule of the package's docstrings, and how a fix that skips it reads: (module, old text, new text).
BUGFIX_RULES = {
    "accounting parentheses are negative": (
        "money",
        'negative = t.startswith("(") and t.endswith(")")',
        "negative = False",
    ),
    "commas are thousands separators": ("money", "[0-9][0-9,]*", "[0-9][0-9]*"),
    "cents rounded half to even": ("money", "rounding=ROUND_HALF_EVEN", "rounding='ROUND_HALF_UP'"),
    "missing spellings in any case": ("money", "t.lower() in MISSING", "t in MISSING"),
    "every missing spelling": ("money", '("", "-", "n/a", "na", "null", "none")', '("", "-")'),
    "a dollar sign": ("money", r"\$?", ""),
    "a plus sign": ("money", "[+-]?", "-?"),
    "negative cents under one unit": ("money", 'sign = "-" if cents < 0 else ""', 'sign = ""'),
    "exact for any size": ("money", 'return f"{sign}{whole}.{part:02d}"', 'return f"{cents / 100:.2f}"'),
    "casefold": ("text", ".casefold()", ".lower()"),
    "NFKC": ("text", 'unicodedata.normalize("NFKC", name)', "name"),
    "runs of white space": (
        "text",
        '" ".join(unicodedata.normalize("NFKC", name).casefold().split())',
        'unicodedata.normalize("NFKC", name).casefold().strip()',
    ),
    "byte-order mark": ("csvio", 'encoding="utf-8-sig"', 'encoding="utf-8"'),
    "line breaks in quoted fields kept": ("csvio", 'newline="", ', ""),
    "header names stripped": ("csvio", "[name.strip() for name in next(reader, [])]", "next(reader, [])"),
    "blank rows skipped": ("csvio", "if any(cell.strip() for cell in row)", "if row"),
    "offsets converted to UTC": ("clock", "moment = moment.astimezone(timezone.utc)", "pass"),
    "ties by key": ("rank", "key=lambda kv: (-kv[1], kv[0])", "key=lambda kv: -kv[1]"),
    "no entries for k <= 0": ("rank", "[: max(k, 0)]", "[:k]"),
}

#: Runs in a subprocess: the package's functions on the tests' inputs, as the tests' CALL does.
CALLS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib
spec = json.load(open(sys.argv[2]))
out = {}
for name, calls in spec["cases"].items():
    m = importlib.import_module(spec["package"] + "." + spec["modules"][name])
    got = []
    for args in calls:
        try:
            value = getattr(m, name)(*args)
            got.append(["ok", [list(p) for p in value] if name == "top" else value])
        except ValueError:
            got.append(["error", "ValueError"])
        except Exception as exc:
            got.append(["error", type(exc).__name__])
    out[name] = got
m = importlib.import_module(spec["package"] + ".csvio")
rows = {}
for export, path in spec["exports"].items():
    try:
        rows[export] = m.read_rows(path)
    except Exception as exc:
        rows[export] = type(exc).__name__
out["rows"] = rows
print(json.dumps(out))
"""


def bugfix_task(seed: str, tmp: Path) -> tuple[dict, Path]:
    draft = FAMILIES["bugfix"].draft(case_for("bugfix"), random.Random(seed), level=5)
    return draft.files, draft.write(tmp / "tasks")


def failures(task: Path, files: dict, sources: dict[str, str], work: Path) -> list[str]:
    """What the tests would find wrong with a package of ``sources`` (module -> text): function names, exports."""
    const = constants(files["tests/test_outputs.py"])
    package = const["PACKAGE"]
    folder = work / "app"
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text("")
    (folder / package / "report.py").write_text(files[f"environment/app/{package}/report.py"])
    for name, text in sources.items():
        (folder / package / f"{name}.py").write_text(text)
    spec = {
        "package": package,
        "modules": const["MODULES"],
        "cases": {name: case["args"] for name, case in const["CASES"].items()},
        "exports": {name: str(task / "tests" / name) for name in const["ROWS"]},
    }
    (work / "spec.json").write_text(json.dumps(spec))
    out = subprocess.run(
        [sys.executable, "-I", "-c", CALLS, str(folder), str(work / "spec.json")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    wrong = [name for name, case in const["CASES"].items() if got[name] != case["want"]]
    wrong += [f"rows:{name}" for name, want in const["ROWS"].items() if got["rows"][name] != want]
    for export, argv in const["RUNS"]:
        run = subprocess.run(
            [sys.executable, "-m", f"{package}.report", str(task / "tests" / export), *argv],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if run.returncode != 0 or run.stdout.splitlines() != const["REPORT"][export].splitlines():
            wrong.append(f"report:{export}")
    return wrong


def correct_sources(package: str) -> dict[str, str]:
    return {m.name: ledger.module_source(m, None, package) for m in ledger.MODULES}


def test_the_seeds_draw_every_bug():
    drawn = set()
    for seed in SEEDS:
        drawn |= set(FAMILIES["bugfix"].draft(case_for("bugfix"), random.Random(seed), level=5).params["bugs"].items())
    assert drawn == {(f.name, bug) for m in ledger.MODULES for f in m.functions for _, bug in f.bugs}


@pytest.mark.parametrize("seed", SEEDS)
def test_bugfix_top_level_needs_every_rule(seed, tmp_path):
    files, task = bugfix_task(seed, tmp_path)
    package = constants(files["tests/test_outputs.py"])["PACKAGE"]
    good = correct_sources(package)
    assert failures(task, files, good, tmp_path / "good") == [], "the correct package passes"
    shipped = {m.name: files[f"environment/app/{package}/{m.name}.py"] for m in ledger.MODULES}
    found = failures(task, files, shipped, tmp_path / "shipped")
    assert set(found) >= set(ledger.FUNCTIONS) - {"read_rows"}, f"every shipped function is caught: {found}"
    for i, (rule, (module, old, new)) in enumerate(BUGFIX_RULES.items()):
        assert good[module].count(old) == 1, (rule, old)
        broken = {**good, module: good[module].replace(old, new)}
        assert failures(task, files, broken, tmp_path / f"rule{i}"), f"a fix that skips {rule!r} passes"


def test_bugfix_top_level_hides_its_corners_from_the_shipped_files(tmp_path):
    """The sample and the unit tests show no corner; the unseen exports hold them."""
    files, task = bugfix_task(SEEDS[0], tmp_path)
    sample = files["environment/app/data/sample.csv"]
    assert sample.isascii() and "\r" not in sample and "(" not in sample and '"' not in sample
    assert all(line.split(",")[0].endswith("Z") for line in sample.splitlines()[1:])
    export = (task / "tests" / "export_a.csv").read_bytes()
    assert export.startswith(b"\xef\xbb\xbf") and b"\r\n" in export and b'"line one\r\nline two' in export
    assert b",,,\r\n" in export and b" payee ," in export
    instruction = files["instruction.md"]
    matched = match_recipe(instruction)
    assert matched and matched[0] is FAMILIES["bugfix"].recipe
    assert matched[0].difficulty(instruction) == FAMILIES["bugfix"].level(5).skill()


@pytest.mark.parametrize("seed", SEEDS)
def test_bugfix_top_level_passes_its_own_unit_tests_and_the_recipe_fixes_it(seed, tmp_path):
    """The shipped unit tests pass on the buggy package (they do not reveal the bugs); the scripted solver's program,
    run on a copy of /app, leaves a package the hidden tests accept."""
    files, task = bugfix_task(seed, tmp_path)
    app = tmp_path / "app"
    for rel, text in files.items():
        if rel.startswith("environment/app/"):
            (app / rel.removeprefix("environment/app/")).parent.mkdir(parents=True, exist_ok=True)
            (app / rel.removeprefix("environment/app/")).write_text(text)
    unit = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests"], cwd=app, capture_output=True)
    assert unit.returncode == 0, unit.stderr
    # the bug report's traceback is the one the shipped package prints for the cell it names
    report = files["environment/app/BUG-REPORT.md"]
    cell = report.split("The cell was `", 1)[1].split("`", 1)[0]
    with (tmp_path / "march.csv").open("w", newline="") as fh:  # as the exporter writes it (quoted if need be)
        csv.writer(fh).writerows([["when", "payee", "amount", "memo"], ["2024-03-02T10:00:00Z", "Acme", cell, ""]])
    package = constants(files["tests/test_outputs.py"])["PACKAGE"]
    argv = [sys.executable, "-m", f"{package}.report", str(tmp_path / "march.csv")]
    crash = subprocess.run(argv, cwd=app, capture_output=True, text=True)
    shown = [line.strip() for line in report.splitlines() if line.startswith('      File "/app/') or "Error:" in line]
    printed = [line.strip().replace(str(app), "/app") for line in crash.stderr.splitlines()]
    assert crash.returncode == 1 and all(line in printed for line in shown), (shown, printed)
    recipe, found = match_recipe(files["instruction.md"])
    program = recipe.program({**found, "app": str(app)})
    fixed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stderr
    sources = {m.name: (app / package / f"{m.name}.py").read_text() for m in ledger.MODULES}
    assert failures(task, files, sources, tmp_path / "fixed") == []


# -- csv-stat level 5 ----------------------------------------------------------------------------------------------

#: Each rule of the data dictionary and the instruction, and how a program that skips it reads (old text, new text
#: in the reference program ``files/groupstat5.py``).
CSV_RULES = {
    "byte-order mark": ('encoding="utf-8-sig"', 'encoding="utf-8"'),
    "quoted fields with line breaks": (
        "reader = csv.reader(fh)",
        'reader = (ln.rstrip("\\r\\n").split(",") for ln in fh)',
    ),
    "header names in any case": ("[n.strip().casefold() for n in next(reader, [])]", "next(reader, [])"),
    "columns found by name": (
        'col = {c: names.index(c) for c in ("id", "ts", "status", P["group"].casefold(), P["value"].casefold())}',
        'col = {c: i for i, c in enumerate(("id", "ts", P["group"].casefold(), P["value"].casefold(), "status"))}',
    ),
    "re-sent ids count once": ('rid = row[col["id"]].strip()', "rid = len(last)"),
    "the last row of an id wins": ("last[rid] = (", "if rid not in last: last[rid] = ("),
    "offsets converted to UTC": (
        "return START <= moment.astimezone(timezone.utc) < END",
        "return START <= moment.replace(tzinfo=timezone.utc) < END",
    ),
    "the period": ("or not in_period(stamp)", ""),
    "NFKC": ('unicodedata.normalize("NFKC", name)', "name"),
    "casefold": (".casefold().split()", ".lower().split()"),
    "runs of white space": (
        'return " ".join(unicodedata.normalize("NFKC", name).casefold().split())',
        'return unicodedata.normalize("NFKC", name).casefold().strip()',
    ),
    "thousands separators": ('t = text.strip().replace(",", "")', "t = text.strip()"),
    "not finite": ("return v if math.isfinite(v) else None", "return v"),
    "status in any case": ('status.strip().casefold() != P["ok"].casefold()', 'status != P["ok"]'),
    "negatives": ("or x < 0 ", ""),
    "an extract with no valid row": ('if everything else "ALL,0,"', 'if True else ""'),
    "linear time": ("last[rid] = (", "last = {k: v for k, v in last.items() if k != rid}; last[rid] = ("),
}


def csv_task(seed: str, tmp: Path) -> tuple[dict, Path]:
    draft = FAMILIES["csv-stat"].draft(case_for("csv-stat"), random.Random(seed), level=5)
    return draft.files, draft.write(tmp / "tasks")


def program_of(files: dict) -> str:
    """The reference program the task's solution writes to /app/groupstat.py."""
    solve = files["solution/solve.sh"]
    return solve.split("<<'GROUPSTAT'\n", 1)[1].split("GROUPSTAT\n", 1)[0]


def summarise(program: str, data: Path, work: Path, timeout: float = 60) -> list[str] | None:
    """The program's summary of ``data`` (None: it failed or ran past ``timeout``)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "groupstat.py").write_text(program)
    try:
        run = subprocess.run(
            [sys.executable, str(work / "groupstat.py"), str(data), str(work / "out.csv")],
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    if run.returncode != 0:
        return None
    return [ln.rstrip("\r") for ln in (work / "out.csv").read_text(encoding="utf-8").split("\n") if ln.strip()]


def csv_wrong(program: str, task: Path, files: dict, work: Path, large: Path | None) -> list[str]:
    """Which of the tests' extracts the program gets wrong (the shipped one, the unseen ones, the large one)."""
    const = constants(files["tests/test_outputs.py"])
    reference = program_of(files)
    shipped = next(task.glob("environment/app/data/*.csv"))
    wrong = []
    if summarise(program, shipped, work / "shipped") != const["EXPECTED_ANSWER"]:
        wrong.append("shipped")
    for name in const["HIDDEN"]:
        want = summarise(reference, task / "tests" / name, work / f"want-{name}")
        if summarise(program, task / "tests" / name, work / name) != want:
            wrong.append(name)
    if large is not None and not wrong:
        want = summarise(reference, large, work / "want-large")
        if summarise(program, large, work / "large", timeout=const["LIMIT_S"]) != want:
            wrong.append("large")
    return wrong


@pytest.mark.slow
def test_csv_stat_top_level_needs_every_rule(tmp_path):
    files, task = csv_task(SEEDS[0], tmp_path)
    const = constants(files["tests/test_outputs.py"])
    sys.path.insert(0, str(task / "tests"))
    try:
        import extract5  # the tests' own generator of the large extract
    finally:
        sys.path.pop(0)
    large = tmp_path / "large.csv"
    large.write_bytes(extract5.make(const["SPEC"]["large_seed"], const["LARGE_ROWS"], const["SPEC"], True, bom=True))
    reference = program_of(files)
    assert csv_wrong(reference, task, files, tmp_path / "reference", large) == [], "the reference passes"
    for i, (rule, (old, new)) in enumerate(CSV_RULES.items()):
        assert reference.count(old) == 1, (rule, old)
        broken = reference.replace(old, new)
        assert csv_wrong(broken, task, files, tmp_path / f"rule{i}", large), f"a program that skips {rule!r} passes"


def test_csv_stat_top_level_hides_its_corners_from_the_shipped_extract(tmp_path):
    files, task = csv_task(SEEDS[1], tmp_path)
    shipped = next(
        text for rel, text in files.items() if rel.startswith("environment/app/data/") and rel.endswith(".csv")
    )
    assert shipped.isascii() and "\r" not in shipped and '"' not in shipped and "+" not in shipped
    header = shipped.splitlines()[0].split(",")
    assert header[:2] == ["id", "ts"] and len({line.split(",")[0] for line in shipped.splitlines()}) == len(
        shipped.splitlines()
    ), "no re-sent id in the shipped extract"
    unseen = (task / "tests" / "extract_a.csv").read_bytes()
    assert unseen.startswith(b"\xef\xbb\xbf") and b"\r\n" in unseen and b"e+" in unseen and b'"' in unseen
    assert (task / "tests" / "extract_empty.csv").read_bytes().count(b"\n") == 1
    instruction = files["instruction.md"]
    matched = match_recipe(instruction)
    assert matched and matched[0] is FAMILIES["csv-stat"].recipe
    assert matched[0].difficulty(instruction) == FAMILIES["csv-stat"].level(5).skill()
    recipe, found = matched
    assert "unicodedata.normalize" in recipe.program(found) and recipe.run_command(found).endswith("/app/answer.csv")
