"""``autoenv propose`` end to end: accepted tasks and a JSON summary in --out."""

from __future__ import annotations

import json
from pathlib import Path

from proposer_helpers import SEED_CASES, needs_sandbox
from typer.testing import CliRunner

from autoenv.cli.main import app
from autoenv.proposer.models import ProposeSummary

runner = CliRunner()


@needs_sandbox
def test_propose_command_writes_tasks_and_summary(tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "propose",
            "--seed-case",
            str(SEED_CASES / "primer-tm-no-python.yaml"),
            "--method",
            "prompt",
            "--out",
            str(out),
            "--attempts",
            "1",
            "--flaw-rate",
            "0",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    summary = ProposeSummary.model_validate_json((out / "summary.json").read_text())
    assert printed["accepted_tasks"] == summary.accepted_tasks and len(summary.accepted_tasks) == 1
    assert {"attempts", "valid", "calibrated", "files_per_accepted", "duration_sec"} <= set(printed)
    task = Path(summary.accepted_tasks[0])
    assert task.parent == out and (task / "task.toml").is_file()
    assert summary.files_per_accepted[0] == summary.records[0].n_files
    assert (tmp_path / "workspace" / "skills").is_dir(), "the default workspace sits next to --out"


def test_propose_command_rejects_bad_options(tmp_path):
    seed = str(SEED_CASES / "primer-tm-no-python.yaml")
    # a value outside the vocabulary is a usage error (exit 2, with the choices); a bad combination or backend exits 1
    for args, message, code in (
        (["--method", "magic"], "'prompt', 'feedback', 'agentic'", 2),
        (["--policy", "openai"], "--model", 1),
        (["--env", "nowhere"], "unknown environment", 1),
    ):
        result = runner.invoke(app, ["propose", "--seed-case", seed, "--out", str(tmp_path / "o"), *args])
        assert result.exit_code == code and message in result.output and "Traceback" not in result.output, result.output
