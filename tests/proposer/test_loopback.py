"""A served model as the proposer: a real HTTP server on loopback replays a recorded conversation.

The recording is what a model would do in the agentic method: write a task
with one flaw (its Dockerfile never copies the input data), validate it in a
child sandbox, read the feedback, rewrite the Dockerfile, validate again, run
the solver, finish. Everything after the model's replies is real: the
proposer's sandbox, the child validations and rollouts, the final judgement.
The same kind of recording drives the feedback method, where the model's
first reply is the whole task and the validator's feedback comes back to it.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
from pathlib import Path

import pytest

from proposer_helpers import needs_sandbox  # isort: skip  (puts the agent tests' chat_server on the path)
from chat_server import MODEL, ReplayServer, completion  # isort: skip

from autoenv.agents.policies.base import PolicyError
from autoenv.families.base import slug
from autoenv.families.registry import FAMILIES
from autoenv.proposer.episode import ProposerEpisode
from autoenv.proposer.models import SeedCase
from autoenv.proposer.propose import propose
from autoenv.validate.validation import validate_task
from autoenv.vocab import SCRIPTED_SOLVER

pytestmark = needs_sandbox

CASE = SeedCase(
    id="primer-no-python-replay",
    task="primer melting temperatures",
    family="primer-tm",
    failure_mode="The solver lacks Python and never computed the melting temperatures.",
    target_skill="compute primer melting temperatures with awk",
)
SEED = 5  # the calibration rollouts use seeds SEED..SEED+3
# The recordings play the proposer only; calibration uses the scripted solver (a mixed run, chosen here on purpose).


def solver_passes(instruction: str, seed: int, k: int = 4, success_rate: float = 0.6) -> int:
    """How many of k scripted rollouts attempt the task (the scripted solver's own rule; its awk recipe then
    succeeds)."""
    key = hashlib.sha256(instruction.strip().encode()).hexdigest()[:16]
    return sum(random.Random(f"{seed + i}:{key}").random() < success_rate for i in range(k))


def mixed_primer_task() -> dict[str, str]:
    """A primer task (no Python) on which the scripted solver passes some but not all of the rollouts."""
    for r in range(200):
        draft = FAMILIES["primer-tm"].generate(CASE, random.Random(r))
        if 0 < solver_passes(draft.files["instruction.md"], SEED) < 4:
            return draft.files
    raise AssertionError("no mixed task found")


def propose_served(server: ReplayServer, dirs: dict[str, Path], method: str, **options: object):
    """One attempt on CASE by the model the server replays, calibrated by the scripted solver."""
    return propose(
        CASE,
        method=method,
        policy="openai",
        model=MODEL,
        base_url=server.url,
        out_dir=dirs["out"],
        workspace=dirs["workspace"],
        seed=SEED,
        solver=SCRIPTED_SOLVER,
        **options,
    )


def write_calls(base: str, files: dict[str, str]) -> list[tuple[str, dict]]:
    return [("write_file", {"path": f"{base}/{rel}", "content": text}) for rel, text in sorted(files.items())]


def agentic_recording(task_name: str, files: dict[str, str]) -> list[dict]:
    base = f"tasks/{task_name}"
    docker = files["environment/Dockerfile"]
    flawed = {
        **files,
        "environment/Dockerfile": "".join(line + "\n" for line in docker.splitlines() if not line.startswith("COPY")),
    }
    replies = [
        (
            {"tools": True},
            completion(
                1,
                content="Read the seed case first.",
                calls=[("run", {"command": "cat seed_case.yaml && ls skills tools"})],
            ),
        ),
        (
            {"contains": ["failure_mode"]},
            completion(
                2,
                content="Write the task.",
                calls=[("run", {"command": f"mkdir -p {base}"})] + write_calls(base, flawed),
            ),
        ),
        ({}, completion(3, calls=[("run", {"command": f"autoenv-child validate {base}"})])),
        (
            {"contains": ["INVALID", "[oracle]"]},
            completion(
                4,
                content="The data never reached the image: copy it.",
                calls=[("write_file", {"path": f"{base}/environment/Dockerfile", "content": docker})],
            ),
        ),
        ({}, completion(5, calls=[("run", {"command": f"cd /workspace && autoenv-child validate {base}"})])),
        (
            {"contains": ["VALID: all checks passed"]},
            completion(6, calls=[("run", {"command": f"autoenv-child solve {base} -k 4"})]),
        ),
        ({"contains": ["ACCEPTED"]}, completion(7, calls=[("finish", {"message": f"{base} is valid and calibrated"})])),
    ]
    return [{"expect": expect, "response": response} for expect, response in replies]


@pytest.mark.slow
def test_agentic_with_a_served_model_writes_validates_fixes_and_gets_accepted(dirs):
    files = mixed_primer_task()
    name = f"{slug(CASE.id, 20)}-s{SEED}-a0"
    with ReplayServer(agentic_recording(name, files)) as server:
        summary = propose(
            CASE,
            method="agentic",
            policy="openai",
            model=MODEL,
            base_url=server.url,
            out_dir=dirs["out"],
            workspace=dirs["workspace"],
            attempts=1,
            seed=SEED,
            solver=SCRIPTED_SOLVER,
        )
    assert server.problems == [] and server.served == 7, server.problems
    record = summary.records[0]
    assert record.proposer == f"openai:{MODEL}"
    assert record.accepted, record.reason
    assert record.rounds == 2, "one failed validation, one after the fix"
    assert 0 < record.pass_rate < 1
    accepted = Path(summary.accepted_tasks[0])
    assert (
        accepted.name == name
        and (accepted / "environment" / "Dockerfile").read_text() == files["environment/Dockerfile"]
    )
    tests = [a.detail for a in record.actions if a.kind == "Test"]
    assert sum("autoenv-child validate" in d for d in tests) == 2 and any("autoenv-child solve" in d for d in tests)
    assert {a.kind for a in record.actions} == {"Read", "Write", "Test", "Finish"}
    assert validate_task(accepted, force=True, record=False).valid
    # what the solver did in each calibration rollout came back with `solve` and is kept in the workspace (issue 42)
    solve_output = next(m["content"] for m in server.chat_requests()[-1]["messages"] if "ACCEPTED" in str(m["content"]))
    assert "rollout 4: reward" in solve_output and "did: " in solve_output and "stopped: " in solve_output
    notes = (dirs["workspace"] / "memory" / "solver" / f"{name}.md").read_text()
    assert notes.count("rollout 1: reward") == 1 and "did: " in notes

    # the sample is the agent's own episode: the brief, every call and result, the exact tokens of all 7 calls
    episode = ProposerEpisode.load(record.episode_path)
    assert episode.source == "agent" and episode.trajectory_path
    assert [m["role"] for m in episode.messages[:2]] == ["system", "user"] and "Seed case" in episode.messages[1][
        "content"
    ]
    assert any("VALID: all checks passed" in (m.get("content") or "") for m in episode.messages if m["role"] == "tool")
    assert [t.completion_token_ids for t in episode.turns] == [
        r["response"]["body"]["choices"][0]["token_ids"] for r in server.exchanges
    ]


def test_feedback_with_a_served_model_rewrites_after_the_validators_feedback(dirs):
    files = mixed_primer_task()
    name = f"{slug(CASE.id, 20)}-s{SEED}-a0"
    docker = files["environment/Dockerfile"]
    flawed = {
        **files,
        "environment/Dockerfile": "".join(line + "\n" for line in docker.splitlines() if not line.startswith("COPY")),
    }
    recording = [
        {
            "expect": {"tools": True, "contains": ["Seed case", "write_file"]},
            "response": completion(1, calls=write_calls(".", flawed) + [("finish", {"message": "written"})]),
        },
        {
            "expect": {"contains": ["[oracle]", "Rewrite the files"]},
            "response": completion(
                2, calls=[("write_file", {"path": "environment/Dockerfile", "content": docker}), ("finish", {})]
            ),
        },
    ]
    with ReplayServer(recording) as server:
        summary = propose_served(server, dirs, "feedback")
    assert server.problems == [] and server.served == 2, server.problems
    record = summary.records[0]
    assert record.accepted and record.rounds == 2, record.reason
    assert Path(record.task_dir).name == name

    # the proposer's training sample is the conversation itself: what the endpoint received, then what it sent
    episode = ProposerEpisode.load(record.episode_path)
    last_request = server.chat_requests()[-1]
    sent = recording[-1]["response"]["body"]["choices"][0]["message"]
    assert episode.source == "model"
    assert episode.messages[:-1] == last_request["messages"]
    assert episode.messages[-1] == {"role": "assistant", "content": sent["content"], "tool_calls": sent["tool_calls"]}
    assert "Seed case" in episode.messages[1]["content"] and "[oracle]" in episode.messages[-2]["content"]
    bodies = [r["response"]["body"] for r in recording]
    assert [t.prompt_token_ids for t in episode.turns] == [b["prompt_token_ids"] for b in bodies]
    assert [t.completion_token_ids for t in episode.turns] == [b["choices"][0]["token_ids"] for b in bodies]
    assert [t.logprobs for t in episode.turns] == [
        [c["logprob"] for c in b["choices"][0]["logprobs"]["content"]] for b in bodies
    ]


def test_an_unreachable_model_is_an_error_not_a_rejected_attempt(dirs):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(PolicyError):
        propose(
            CASE,
            method="prompt",
            policy="openai",
            model=MODEL,
            base_url=url,
            out_dir=dirs["out"],
            workspace=dirs["workspace"],
            attempts=1,
        )
    assert not (dirs["workspace"] / "memory" / "attempts.jsonl").exists(), (
        "nothing is recorded as the proposer's failure"
    )


def test_a_model_proposer_is_calibrated_by_the_same_model_by_default(dirs):
    """One shared policy: with no solver given, the model that wrote the task is the one calibration rolls out."""
    files = mixed_primer_task()
    recording = [
        {
            "expect": {"tools": True, "contains": ["Seed case"]},
            "response": completion(1, calls=write_calls(".", files) + [("finish", {"message": "written"})]),
        }
    ]
    recording += [
        {
            "expect": {"contains": ["melting"]},
            "response": completion(10 + i, calls=[("finish", {"message": "I cannot do this"})]),
        }
        for i in range(4)
    ]
    with ReplayServer(recording) as server:
        summary = propose(
            CASE,
            method="prompt",
            policy="openai",
            model=MODEL,
            base_url=server.url,
            out_dir=dirs["out"],
            workspace=dirs["workspace"],
            attempts=1,
            seed=SEED,
        )
    assert server.problems == [] and server.served == 5, server.problems
    record = summary.records[0]
    # the model's solver stopped without a command every time: no attempt, so calibration is inconclusive
    assert record.valid and not record.calibrated and record.pass_rate is None, record.reason
    assert "inconclusive" in record.reason
    solver_requests = server.chat_requests()[1:]
    assert all(r["model"] == MODEL and "Seed case" not in json.dumps(r["messages"]) for r in solver_requests)
