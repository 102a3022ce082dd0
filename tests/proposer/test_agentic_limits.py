"""A capable model proposes a task no bundled family knows, and the scripted solver calibrates (issue: the agentic
proposer as a capable model meets it).

A real HTTP server on loopback plays the model; everything else is real: the CLI, the proposer's sandbox, the
child validations, the scripted solver's rollouts and the final judgement. The scripted solver has no recipe for
the task, so its rollouts are no attempts: calibration must say *inconclusive* (not "too hard"), the proposer's
reward must come from validity alone, the user must be warned at start, and ``--max-rounds`` must bound the
validations the model can run.
"""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from proposer_helpers import needs_sandbox  # isort: skip  (puts the agent tests' chat_server on the path)
from chat_server import MODEL, ReplayServer, completion  # isort: skip

from autoenv.cli.main import app
from autoenv.families.base import slug
from autoenv.proposer.models import ProposeSummary
from autoenv.validate.reward import VALID_REWARD

pytestmark = [needs_sandbox, pytest.mark.slow]

CASE = {
    "id": "sum-awk-no-recipe",
    "task": "add up a column of integers",
    "failure_mode": "The agent printed the count of lines instead of their sum.",
    "target_skill": "summing a column with awk",
}
SEED = 3
#: A sound task no family generates (a shell verifier, no Python in the tests).
FILES = {
    "instruction.md": "`/app/numbers.txt` holds one integer per line. Write their sum, as a plain decimal number on a "
    "single line, to `/app/sum.txt`.\n",
    "task.toml": 'schema_version = "1.4"\nartifacts = ["/app"]\n\n[metadata]\nauthor_name = "model"\n'
    'difficulty = "easy"\n\n[verifier]\ntimeout_sec = 60.0\nenvironment_mode = "separate"\n\n[agent]\n'
    "timeout_sec = 300.0\n\n[environment]\nbuild_timeout_sec = 300.0\ncpus = 1\nmemory_mb = 1024\n"
    'network_mode = "no-network"\n',
    "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n",
    "environment/numbers.txt": "".join(f"{n}\n" for n in (417, 92, 1310, 58, 764, 233, 905, 41, 388, 127, 650, 19)),
    "solution/solve.sh": "#!/bin/bash\nawk '{ s += $1 } END { print s }' /app/numbers.txt > /app/sum.txt\n",
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n"
    'if [ "$(tr -d \'[:space:]\' < /app/sum.txt 2>/dev/null)" = "5004" ]; then echo 1 > /logs/verifier/reward.txt; '
    "else echo 0 > /logs/verifier/reward.txt; fi\n",
}


def recording(base: str) -> list[dict]:
    writes = [("run", {"command": f"mkdir -p {base}/environment {base}/solution {base}/tests"})]
    writes += [("write_file", {"path": f"{base}/{rel}", "content": text}) for rel, text in sorted(FILES.items())]
    replies = [
        ({"tools": True, "contains": ["Seed case", "You have 2 validation rounds"]},
         completion(1, calls=[("run", {"command": "cat seed_case.yaml && ls skills tools memory"})])),
        ({}, completion(2, content="Write the task.", calls=writes)),
        ({}, completion(3, calls=[("run", {"command": f"autoenv-child validate {base}"})])),
        ({"contains": ["VALID: all checks passed", "validation rounds left in this attempt: 1 of 2"]},
         completion(4, calls=[("run", {"command": f"autoenv-child solve {base}"})])),
        ({"contains": ["inconclusive"]}, completion(5, calls=[("run", {"command": f"autoenv-child validate {base}"})])),
        ({"contains": ["validation rounds left in this attempt: 0 of 2"]},
         completion(6, calls=[("run", {"command": f"autoenv-child validate {base}"})])),
        ({"contains": ["no validation rounds left"]},
         completion(7, calls=[("run", {"command": "autoenv-child solve --help"})])),
        ({"contains": ["usage: autoenv-child solve tasks/NAME"]},
         completion(8, calls=[("finish", {"message": base})])),
    ]  # fmt: skip
    return [{"expect": expect, "response": response} for expect, response in replies]


def test_a_task_the_solver_cannot_attempt_calibrates_inconclusive_and_the_rounds_are_kept(tmp_path):
    seed_case = tmp_path / "case.yaml"
    seed_case.write_text(yaml.safe_dump(CASE))
    name = f"{slug(CASE['id'], 20)}-s{SEED}-a0"
    out = tmp_path / "out"
    with ReplayServer(recording(f"tasks/{name}")) as server:
        result = CliRunner().invoke(
            app,
            ["propose", "--seed-case", str(seed_case), "--method", "agentic", "--policy", "openai", "--model", MODEL,
             "--base-url", server.url, "--solver", "terminal:policy=scripted", "--rollouts", "4", "--max-rounds", "2",
             "--seed", str(SEED), "--attempts", "1", "--out", str(out), "--workspace", str(tmp_path / "ws")],
        )  # fmt: skip
    assert server.problems == [] and server.served == 8, (server.problems, result.output)
    assert "a model proposes but the scripted solver calibrates" in " ".join(result.output.split())
    summary = ProposeSummary.model_validate_json((out / "summary.json").read_text())
    record = summary.records[0]
    assert record.valid and not record.accepted
    assert record.rounds == 2, "the third validate was refused: --max-rounds 2"
    assert "inconclusive" in record.reason and "too hard" not in record.reason, record.reason
    assert record.pass_rate is None and record.reward == VALID_REWARD  # validity alone, not a difficulty signal
    assert "Finish" in [a.kind for a in record.actions]
    lesson = (tmp_path / "ws" / "memory" / "lessons.md").read_text()
    assert "(None)" not in lesson and f"{CASE['id']} (new): valid; calibration inconclusive" in lesson, lesson
    memory = [json.loads(line) for line in (tmp_path / "ws" / "memory" / "attempts.jsonl").read_text().splitlines()]
    assert memory[-1]["pass_rate"] is None and memory[-1]["reward"] == VALID_REWARD
