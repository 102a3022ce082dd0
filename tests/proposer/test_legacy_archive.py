"""The archive levels (issue 42): log-parse 6, csv-stat 7 and config-repair 6 ship no tool, only its past runs.

The archive must be truthful (the reference replacement prints every archived run's bytes and status), complete (one
run per kind of hidden input, the missing file included) and enough (exactly one build of the tool prints what it
holds: the generator refuses an archive that leaves a limit open); the tests' inputs are other bytes than the
archived ones, so replaying the archive earns nothing. test_ladders.py validates each level in a sandbox and has the
scripted solver search the archive there.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
from datetime import datetime

import pytest
from proposer_helpers import needs_sandbox

from autoenv.agents.policies.learned import LearnedPolicy, PolicyTable
from autoenv.families.config_repair import legacy as config_legacy
from autoenv.families.csv_stat import legacy as csv_legacy
from autoenv.families.legacy_search import builds_matching
from autoenv.families.log_parse import legacy as log_legacy
from autoenv.families.registry import FAMILIES
from autoenv.families.solver import PARAMS_MARKER
from autoenv.shared.seed import SeedCase
from autoenv.validate.calibration import CalibrationSettings, calibrate

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the archive is the compiled tool's output")

LEVELS = {"log-parse": (6, log_legacy.LOGSUM), "csv-stat": (7, csv_legacy.GRPSTAT),
          "config-repair": (6, config_legacy.CFGNORM)}  # fmt: skip


def draft(family: str, seed: object):
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family=family)
    return FAMILIES[family].draft(case, random.Random(seed), level=LEVELS[family][0])


def archived_runs(files: dict, tool) -> dict[str, dict]:
    """The archive's runs in a drafted task, by folder: command, input (None: absent), stdout, status."""
    runs: dict[str, dict] = {}
    for path, content in files.items():
        if path.startswith("environment/archive/"):
            folder, name = path.removeprefix("environment/archive/").split("/")
            runs.setdefault(folder, {"input": None})[name] = content
    return runs


def as_bytes(content: str | bytes) -> bytes:
    return content.encode() if isinstance(content, str) else content


@pytest.mark.parametrize("family", sorted(LEVELS))
def test_the_archive_is_the_tools_only_trace_and_tells_the_truth(family):
    level, tool = LEVELS[family]
    task = draft(family, "measure:0")
    files = task.files
    told = {n: FAMILIES[family].level(n).axes.get("less_told", 0) for n in FAMILIES[family].levels}
    assert told[level] == max(told.values()), "the archive is the family's furthest level along less_told"
    assert not any(path.startswith("environment/legacy/") for path in files) and not task.executable
    dockerfile = files["environment/Dockerfile"]
    assert f"COPY archive {tool.archive}\n" in dockerfile and tool.tool not in dockerfile
    assert tool.archive_marker in files["instruction.md"] and "installed here" not in files["instruction.md"]
    assert tool.licence not in files["tests/test.sh"], "nothing to retire: the image never had the tool"

    runs = archived_runs(files, tool)
    literal = re.search(r"^EXPECTED = json.loads\((.*)\)$", files["tests/test_outputs.py"], re.M).group(1)
    expected = json.loads(ast.literal_eval(literal))
    # one archived run per kind of input the tests use (each hidden kind, the sample, the missing file)
    assert len(runs) == len(expected)
    assert sum(run["input"] is None for run in runs.values()) == 1
    assert all(run["command"].startswith(f"{tool.name} /var/spool/") for run in runs.values())
    # the reference replacement prints what each archived run printed: the archive is the tool's own output
    params = task.params["legacy"]
    shown = [(as_bytes(r["input"]), as_bytes(r["stdout"]), int(r["status"])) for r in runs.values() if r["input"]]
    assert builds_matching(tool.template(), PARAMS_MARKER, {}, params, shown) == [params]
    # the tests' inputs are other bytes, but for a few fixed ones (an empty file, a line of NUL and stray bytes) and
    # the sample, so a program replaying the archive fails the rest
    archived = {as_bytes(r["input"]) for r in runs.values() if r["input"] is not None}
    hidden = {as_bytes(content) for path, content in files.items() if path.startswith("tests/") and
              path.rsplit("/", 1)[1] not in ("test.sh", "test_outputs.py", "agentcall.py")}  # fmt: skip
    assert len(hidden - archived) >= len(hidden) * 2 / 3, (len(hidden - archived), len(hidden))


@pytest.mark.parametrize("seed", range(4))
def test_every_drawn_archive_pins_the_build(seed):
    """Each family's archive level, drawn four ways: the generator checks that exactly one build prints what the
    archive holds (check_pinned), so drafting succeeds only when the archive tells every limit."""
    for family in LEVELS:
        assert draft(family, seed).params["legacy"]


def test_an_archive_that_leaves_a_limit_open_is_refused():
    """Without the runs that show the line buffer and the service table, many builds fit: the level refuses it."""
    params = {"line_max": 112, "svc_len": 10, "max_svc": 14}
    services = ["auth", "billing", "gateway", "mailer", "search"]
    rng = random.Random(3)
    logs = log_legacy.hidden_logs(rng, params, services, datetime(2024, 3, 1))
    tool = log_legacy.LOGSUM
    assert tool.archive_runs(params, logs, rng, space=log_legacy.CHOICES)
    without = {name: data for name, data in logs.items() if name not in ("long_lines.log", "many_services.log")}
    with pytest.raises(ValueError, match=r"archive: \d+ builds print what the archive holds"):
        tool.archive_runs(params, without, rng, space=log_legacy.CHOICES)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("strategy, passes", [("rush", 0), ("solve", 1)])
def test_a_solver_that_stops_at_its_first_file_has_not_found_the_build(strategy, passes, tmp_path):
    """The learned policy's ``rush`` stops once it has written its first file. Here that file is the script that
    searches the archive for the build: it wrote no replacement and gets 0 (it used to write the finished
    replacement first and pass, so the top level was the untrained solver's easiest). ``solve`` goes on and passes."""
    task = draft("log-parse", "measure:0").write(tmp_path / "tasks")
    key = LearnedPolicy().decide((task / "instruction.md").read_text())["key"]
    table = PolicyTable(solver={key: {strategy: 50.0}}).save(tmp_path / "table.json")
    report = calibrate(
        task,
        CalibrationSettings(solver=f"terminal:policy=learned,table={table}", rollouts=1),
        trials_dir=tmp_path / "trials",
    )
    assert report.passes == passes, report.verdict
