"""The brief matches the method, files keep their bytes, and the proposer is told what the solver did (issue 42).

The feedback test is a whole attempt with a served model: a real HTTP server on loopback replays the model's
replies to the real ``openai`` client, and everything else is real (the workspace, validation in sandboxes,
calibration rollouts of the scripted solver, whose trajectories the proposer is told about).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from pathlib import Path

from proposer_helpers import needs_sandbox  # isort: skip  (puts the agent tests' chat_server on the path)
from chat_server import MODEL, ReplayServer, completion  # isort: skip
from test_loopback import CASE, SEED, propose_served, solver_passes  # isort: skip

from autoenv.families.base import slug
from autoenv.families.levels import AXES
from autoenv.families.registry import FAMILIES
from autoenv.grading import AGENTCALL
from autoenv.proposer.actions import ActionLog
from autoenv.proposer.llm import apply_files, brief
from autoenv.proposer.models import ProposeOptions
from autoenv.proposer.workspace import Workspace
from autoenv.proposer.written import AuthorPolicy
from autoenv.shared.actions import action_from_tool_call
from autoenv.validate.checks.datadiff import data_differences, first_difference
from autoenv.validate.validation import validate_task

#: A generated log as a model writes it: CRLF lines, a NUL, non-ASCII text.
CRLF_LOG = "GET /a 200\r\nGET /b\x00 500\r\nGrüße ✓\n"
#: Bytes that are not UTF-8 (latin-1 and a stray continuation byte), sent as base64.
LATIN1 = b"caf\xe9\r\n\x80\x00end"


def primer_task(passes: int) -> dict[str, str]:
    """A primer task (no Python) on which the scripted solver passes ``passes`` of the 4 calibration rollouts."""
    for r in range(300):
        draft = FAMILIES["primer-tm"].generate(CASE, random.Random(r))
        if solver_passes(draft.files["instruction.md"], SEED) == passes:
            return draft.files
    raise AssertionError(f"no primer task with {passes}/4 passes")


def test_each_method_gets_a_brief_of_what_its_tools_honour(tmp_path):
    ws = Workspace(tmp_path / "ws").init()
    feedback = brief(CASE, ws, "t", method="feedback", rollouts=5, max_rounds=3, repair_rounds=2)
    agentic = brief(CASE, ws, "t", method="agentic", rollouts=5, max_rounds=3)
    prompt = brief(CASE, ws, "t", method="prompt", rollouts=5)
    for written in (feedback, prompt):  # nothing runs: no command to run, no broker to copy, no validate to call
        assert "autoenv-child" not in written and "tools/" not in written and "`run`" not in written
        assert "copied in for you" in written and "K = 5" in written and 'encoding: "base64"' in written
    assert "2 repair rounds" in feedback and "3 difficulty rounds" in feedback
    assert "does not cost a difficulty round" in feedback and "where it stopped" in feedback
    assert "no round after it" in prompt
    shared = brief(CASE, ws, "t", method="feedback", max_rounds=3, repair_rounds=None)  # the scripted proposer's
    assert "3 judged drafts in all" in shared and "repair rounds" not in shared
    assert "autoenv-child validate tasks/t" in agentic and "Copy `tools/agentcall.py`" in agentic
    assert "3 validation rounds" in agentic and "K = 5" in agentic
    # a proposer's own skill that tells it to run a command is left out where nothing runs
    (ws.skills / "mine.md").write_text("# Mine\n\n- keep data small\n- run `autoenv-child check\n  tasks/x` first\n")
    again = brief(CASE, ws, "t", method="feedback")
    assert "keep data small" in again and "tasks/x` first" not in again
    # the written methods offer exactly the tools they honour, and say so in the system prompt
    policy = AuthorPolicy(model=MODEL, base_url="http://127.0.0.1:9/v1")
    assert [t["function"]["name"] for t in policy.tool_definitions] == ["write_file", "remove_file", "finish"]
    assert "Nothing runs while you write" in policy.system_prompt()


def test_the_skills_teach_every_axis_of_the_ladders_with_an_example(tmp_path):
    ws = Workspace(tmp_path / "ws").init()
    text = (ws.skills / "difficulty-axes.md").read_text()
    for axis in AXES:
        section = text.split(f"## {axis}\n", 1)[1].split("\n## ", 1)[0]
        assert "Example: " in section, axis


def test_write_file_keeps_bytes_and_the_broker_is_copied_in(tmp_path):
    wire = json.dumps({"path": "environment/app/raw.log", "content": CRLF_LOG})  # as the API sends it
    text_call = action_from_tool_call("write_file", wire)
    bytes_call = action_from_tool_call(
        "write_file",
        {"path": "environment/app/latin1.txt", "content": base64.b64encode(LATIN1).decode(), "encoding": "base64"},
    )
    test_sh = "#!/bin/bash\npython3 /tests/agentcall.py -m pytest /tests\n"
    files = {"environment/app/raw.log": text_call.data(), "environment/app/latin1.txt": bytes_call.data()}
    apply_files(tmp_path, {**files, "tests/test.sh": test_sh.encode()}, [], ActionLog())
    assert (tmp_path / "environment/app/raw.log").read_bytes() == CRLF_LOG.encode()
    assert (tmp_path / "environment/app/latin1.txt").read_bytes() == LATIN1
    assert (tmp_path / "tests/agentcall.py").read_text() == AGENTCALL


def test_a_model_cannot_be_calibrated_with_fewer_than_four_rollouts():
    try:
        ProposeOptions(policy="openai", model=MODEL, rollouts=2)
    except ValueError as exc:
        assert "exactly 1/2" in str(exc)
    else:
        raise AssertionError("K=2 was accepted for a model-written task")


def _calls(files: dict[str, str]) -> list[tuple[str, dict]]:
    return [("write_file", {"path": rel, "content": text}) for rel, text in sorted(files.items())]


@needs_sandbox
def test_feedback_budgets_and_what_the_solver_did(dirs):
    """Round 1: too easy (4/4). The model is told each rollout's reward, turns and commands, and the rounds left;
    it writes a harder variant with a flaw (invalid), repairs it, and the repair costs no difficulty round:
    with --max-rounds 2 the third draft is still judged, and accepted."""
    easy, mixed = primer_task(4), primer_task(2)
    docker = mixed["environment/Dockerfile"]
    flawed = {**mixed, "environment/Dockerfile": docker.replace("COPY app/ /app/\n", "")}
    raw = [("write_file", {"path": "environment/app/raw.log", "content": CRLF_LOG})]
    raw.append(
        (
            "write_file",
            {"path": "environment/app/latin1.txt", "content": base64.b64encode(LATIN1).decode(), "encoding": "base64"},
        )
    )
    recording = [
        {
            "expect": {"tools": True, "contains": ["Seed case", "K = 4", "1 repair rounds", "2 difficulty rounds"]},
            "response": completion(1, calls=_calls(easy) + raw + [("finish", {})]),
        },
        {
            "expect": {
                "contains": ["too easy", "rollout 1: reward 1.0", "turns", "did: ", "0 difficulty rounds", "1 repair"]
            },
            "response": completion(2, calls=_calls(flawed) + [("remove_file", {"path": "environment/app/latin1.txt"})]),
        },
        {
            "expect": {"contains": ["[oracle]", "Rounds left: 0 repair rounds", "0 difficulty rounds"]},
            "response": completion(3, calls=[("write_file", {"path": "environment/Dockerfile", "content": docker})]),
        },
    ]
    with ReplayServer(recording) as server:
        summary = propose_served(server, dirs, "feedback", max_rounds=2, repair_rounds=1)
    assert server.problems == [] and server.served == 3, server.problems
    first = server.chat_requests()[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["write_file", "remove_file", "finish"]
    record = summary.records[0]
    assert record.accepted and record.rounds == 3, record.reason
    assert record.calibration and record.calibration.startswith("K=4: 2/4 passed"), record.calibration
    task = Path(record.task_dir)
    assert (task / "environment/app/raw.log").read_bytes() == CRLF_LOG.encode()
    assert not (task / "environment/app/latin1.txt").exists(), "remove_file removed it"
    name = f"{slug(CASE.id, 20)}-s{SEED}-a0"
    solver_notes = (dirs["workspace"] / "memory" / "solver" / f"{name}.md").read_text()
    assert solver_notes.count("rollout 4: reward") == 2 and "stopped: called finish" in solver_notes


def test_first_difference_names_the_offset_and_both_bytes():
    assert first_difference(b"a\nb\n", b"a\r\nb\n") == (
        "first difference at byte 1 (line 1): 0x0a b'\\n' vs expected 0x0d b'\\r'; sizes 4 vs 5 bytes"
    )
    assert first_difference(b"ab", b"ab") is None
    assert "end of file" in first_difference(b"ab", b"abc")


@needs_sandbox
def test_an_oracle_failing_on_a_data_file_says_which_bytes_differ(tmp_path):
    """The task's own test says only "records differs"; the validator adds the offset and the two bytes."""
    task = tmp_path / "records-task"
    files = {
        "instruction.md": "Write /app/out.txt with the number of lines of /app/records.log.\n",
        "task.toml": (
            'schema_version = "1.4"\nartifacts = ["/app"]\n\n[metadata]\ncategory = "data"\n\n'
            '[verifier]\ntimeout_sec = 60.0\nenvironment_mode = "separate"\n\n[agent]\ntimeout_sec = 120.0\n\n'
            '[environment]\nbuild_timeout_sec = 300.0\ncpus = 1\nmemory_mb = 1024\nnetwork_mode = "no-network"\n'
        ),
        "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\nCOPY app/ /app/\n",
        "environment/app/records.log": "GET /a 200\nGET /b 500\n",  # the CRs were lost on the way
        "tests/records.log": "GET /a 200\r\nGET /b 500\r\n",  # what the tests expect the input to be
        "tests/test.sh": (
            "#!/bin/bash\nmkdir -p /logs/verifier; echo 0 > /logs/verifier/reward.txt\n"
            'cmp -s /app/records.log /tests/records.log || { echo "records differs"; exit 0; }\n'
            '[ "$(cat /app/out.txt 2>/dev/null)" = 2 ] && echo 1 > /logs/verifier/reward.txt\n'
        ),
        "solution/solve.sh": "#!/bin/bash\nwc -l < /app/records.log | tr -d ' ' > /app/out.txt\n",
    }
    for rel, text in files.items():
        path = task / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        path.chmod(0o755)
    report = validate_task(task, force=True, record=False, trials_dir=tmp_path / "validate")
    oracle = report.check("oracle")
    assert oracle.passed is False and "records differs" in oracle.feedback
    assert (
        "/app/records.log differs from tests/records.log: first difference at byte 10 (line 1): 0x0a b'\\n' vs "
        "expected 0x0d b'\\r'" in oracle.feedback
    ), oracle.feedback


def test_a_data_file_whose_sha256_pin_does_not_match_is_named(tmp_path):
    want = b"GET /a 200\r\n"
    (tmp_path / "environment/app").mkdir(parents=True)
    (tmp_path / "environment/app/records.log").write_bytes(b"GET /a 200\n")
    (tmp_path / "environment/app/other.txt").write_bytes(b"untouched\n")
    (tmp_path / "tests").mkdir()
    pin = hashlib.sha256(want).hexdigest()
    far = "\n" * 5  # other.txt is named far from the pin: not pinned by it
    test = f'RECORDS = "/app/records.log"\nSHA = "{pin}"\n{far}O = "other.txt"\n'
    (tmp_path / "tests/test_outputs.py").write_text(test)
    lines = data_differences(tmp_path, None)
    assert len(lines) == 1 and lines[0].startswith("environment/app/records.log: its sha256"), lines
