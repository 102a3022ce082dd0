"""What the flywheel shows a person and a machine: log lines without Python reprs, tables that fit or wrap,
the same table as CSV/JSON, and the quickstart's own output read as a CI log."""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from autoenv.cli.flywheel import summary_table
from autoenv.cli.logs import LogFormat, setup_logging
from autoenv.cli.tables import Column, ResultTable
from autoenv.flywheel.events import describe, emit
from autoenv.flywheel.loop import StepReport
from autoenv.vocab import Method
from tests.conftest import EXAMPLE_TASKS, needs_namespaces

AUTOENV = str(Path(sys.executable).with_name("autoenv"))
REPR = re.compile(r"\{'|<[A-Z]\w*\.[A-Z_]+: |PosixPath\(")  # a dict's repr, an enum member's repr, a Path's


def reports(n: int) -> list[StepReport]:
    return [
        StepReport(
            step=i, policy_version_in=i, policy_version_out=i + 1, proposals=2, accepted=2, groups=2,
            useful_groups=1, useful_group_rate=0.5, collect_sec=1234.5, train_sec=0.25,
            benchmark_score=None if i == 0 else 0.75,
        )
        for i in range(n)
    ]  # fmt: skip


def test_events_read_as_sentences():
    assert describe("propose", {"seed_case": "config-repair-guessing", "method": Method.FEEDBACK}) == (
        "propose config-repair-guessing (feedback)"
    )
    assert describe("collect", {"tasks": 2, "group_size": 4}) == "collect 2 tasks x 4 rollouts"
    assert describe("train", {"samples": 8, "backend": "table"}) == "train 8 samples (table)"
    assert describe("rollout", {"task": "t", "reward": 1.0}) == "rollout t: reward 1"
    assert describe("rollout", {"task": "t", "reward": None}) == "rollout t: no reward (error)"
    done = describe("step_done", reports(2)[1].model_dump())
    assert done == "step 1 done: 2/2 proposals accepted, 1/2 groups useful, benchmark 0.75, policy v1 -> v2"
    assert describe("serve", {"version": 1, "checkpoint": Path("/x/v1")}) == "serve policy v1 (/x/v1)"


def _emit_all() -> None:
    emit("propose", {"seed_case": "config-repair-guessing", "method": Method.FEEDBACK})
    emit("rollout", {"task": "csv-statistic", "reward": 0.0})
    emit("warning", {"message": "mixed policies"})


def test_text_log_is_one_event_a_line_and_json_has_the_same_fields(capsys):
    logger = logging.getLogger("autoenv")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    try:
        setup_logging(LogFormat.TEXT, Console(file=io.StringIO(), force_terminal=False))
        _emit_all()
        text = capsys.readouterr().err.splitlines()
        # a person's log: the sentence after the time, warnings marked, the rollouts (many) left to DEBUG
        assert [line.split(" ", 1)[1] for line in text] == [
            "propose config-repair-guessing (feedback)",
            "warning: mixed policies",
        ]
        assert all(re.fullmatch(r"\d\d:\d\d:\d\d .+", line) for line in text)
        setup_logging(LogFormat.JSON, Console(file=io.StringIO(), force_terminal=False))
        _emit_all()
        records = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
        assert [(r["event"], r["level"]) for r in records] == [
            ("propose", "info"), ("rollout", "debug"), ("warning", "warning")
        ]  # fmt: skip
        assert records[0]["seed_case"] == "config-repair-guessing" and records[0]["method"] == "feedback"
        assert records[0]["message"] == "propose config-repair-guessing (feedback)"
        assert records[1]["reward"] == 0.0 and records[1]["task"] == "csv-statistic"
        assert len(logger.handlers) == len(saved[0]) + 1, "set up twice, one handler"
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved


def test_summary_table_has_short_distinct_headers_and_never_cuts_one():
    table = summary_table(reports(12), "flywheel run main (autoenv; shared policy)")
    headers = [c.header for c in table.columns]
    assert headers == ["step", "policy", "proposed", "accepted", "groups", "useful", "collect s", "train s", "bench"]
    with pytest.raises(ValueError, match="two columns with one header"):
        ResultTable("t", [Column("s"), Column("s")])
    for width in (80, 60, 30):  # a CI log (80 columns) and narrow terminals
        out = io.StringIO()
        table.show("text", Console(file=out, width=width, force_terminal=False))
        text = out.getvalue()
        assert "…" not in text and "1234.5" in text and "v11->v12" in text, (width, text)
        if width == 80:
            assert all(len(line) <= 80 for line in text.splitlines()), text
            assert re.search(r"step +policy +proposed +accepted +groups +useful +collect s +train s +bench", text)
        else:  # too narrow for the table: one step a line, every value after its header
            assert "step 11: policy v11->v12, proposed 2, accepted 2, groups 2, useful 0.50, collect s 1234.5" in text


def test_summary_table_as_csv_and_json(capsys):
    table = summary_table(reports(2), "flywheel run main")
    table.show("csv", Console())
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[1] == {
        "step": "1", "policy": "v1->v2", "proposed": "2", "accepted": "2", "groups": "2", "useful": "0.5",
        "collect s": "1234.5", "train s": "0.25", "bench": "0.75",
    }  # fmt: skip
    assert rows[0]["bench"] == "", "no benchmark at step 0: an empty cell, not '-'"
    table.show("json", Console())
    shown = json.loads(capsys.readouterr().out)
    assert shown["title"] == "flywheel run main" and shown["rows"][0]["bench"] is None
    assert shown["rows"][1]["collect s"] == 1234.5


def assert_readable(log: str) -> None:
    """What a CI log of the flywheel must not show: a Python repr or a header cut short."""
    assert not REPR.search(log), REPR.search(log)
    assert "…" not in log, log


@needs_namespaces
@pytest.mark.slow
def test_quickstart_output_reads_in_a_ci_log(tmp_path):
    """``scripts/quickstart.sh``'s flywheel command, small, its stderr a pipe as in CI: sentences, one event a
    line, the summary table whole; then the same run's events as JSON lines and its table as CSV."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    cmd = [
        AUTOENV, "flywheel", "--steps", "1", "--db", str(tmp_path / "fw.db"), "--out", str(tmp_path / "fw"),
        "--solver", "terminal:policy=learned", "--trainer", "table", "--min-accepted", "1",
        "--group-size", "2", "--tasks-per-step", "2", "-n", "2", "--benchmark-tasks", "1",
    ]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-3000:]
    assert_readable(log)
    events = [line.split(" ", 1)[1] for line in run.stderr.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
    assert events[0] == "step 0 starts (1 of 1)"
    assert any(re.fullmatch(r"propose [\w-]+ \(feedback\)", e) for e in events), events
    assert "collect 2 tasks x 2 rollouts" in events
    assert any(re.fullmatch(r"train \d+ samples \(table\)", e) for e in events), events
    assert any(e.startswith("step 0 done: ") for e in events), events
    assert re.search(r"step +policy +proposed +accepted +groups +useful +collect s +train s +bench", run.stderr)
    assert all(len(line) <= 80 for line in run.stderr.splitlines() if not re.match(r"\d\d:\d\d:\d\d ", line))
    # the main job run again on the same store (a second `quickstart.sh`): every step is resumed, and the steps'
    # recorded acceptances count, so --min-accepted still holds
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert not re.search(r"\d\d:\d\d:\d\d propose ", again.stderr), "nothing was proposed again"

    static = [
        AUTOENV, "flywheel", "--steps", "1", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "s"),
        "--static", str(EXAMPLE_TASKS), "--solver", "coin:p=0.5", "--group-size", "2", "--tasks-per-step", "2",
        "--benchmark-tasks", "1", "--log-format", "json", "--table", "csv",
    ]  # fmt: skip
    run = subprocess.run(static, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    records = [json.loads(line) for line in run.stderr.splitlines()]  # every stderr line is one JSON object
    collect = next(r for r in records if r["event"] == "collect")
    assert (collect["tasks"], collect["group_size"], collect["message"]) == (2, 2, "collect 2 tasks x 2 rollouts")
    assert sum(r["event"] == "rollout" for r in records) >= 4 and records[-1]["event"] == "store"
    assert_readable(run.stderr)
    (row,) = csv.DictReader(io.StringIO(run.stdout))
    assert row["step"] == "0" and row["groups"] == "2"


def test_json_log_format_makes_errors_json_lines_too(tmp_path):
    args = ["flywheel", "--db", str(tmp_path / "x.db"), "--static", str(tmp_path / "missing")]
    run = subprocess.run([AUTOENV, *args, "--log-format", "json"], capture_output=True, text=True, timeout=120)
    (line,) = run.stderr.splitlines()
    assert run.returncode == 1 and json.loads(line)["event"] == "error" and json.loads(line)["exit_code"] == 1
    assert "--static must be a folder of tasks" in json.loads(line)["message"]
    text = subprocess.run([AUTOENV, *args], capture_output=True, text=True, timeout=120)
    assert text.returncode == 1 and text.stderr.startswith("error: ") and "{" not in text.stderr
