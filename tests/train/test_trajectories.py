"""ATIF trajectories -> chat messages and exact token turns, from Harbor's own models and from the JSON on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harbor.models.trajectories import Agent, Metrics, Observation, ObservationResult, Step, ToolCall, Trajectory

from autoenv.agents.trajectory import TrajectoryRecorder
from autoenv.train.batch import TokenTurn, TrainingBatch, TrainingSample
from autoenv.train.trajectories import sample_from_trajectory, trajectory_to_messages, trajectory_token_turns

AGENT = Agent(name="terminal", version="0.1", model_name="policy")


def steps(with_ids: bool = True) -> list[Step]:
    ids = (
        (lambda p, c, lp: Metrics(prompt_token_ids=p, completion_token_ids=c, logprobs=lp))
        if with_ids
        else (lambda *a: None)
    )
    return [
        Step(step_id=1, source="system", message="You are a terminal agent."),
        Step(step_id=2, source="user", message="Create hello.txt containing hi."),
        Step(
            step_id=3,
            source="agent",
            message="Let me look first.",
            reasoning_content="check the dir",
            tool_calls=[ToolCall(tool_call_id="c1", function_name="run", arguments={"command": "ls"})],
            observation=Observation(results=[ObservationResult(source_call_id="c1", content="README.md\n")]),
            metrics=ids([1, 2, 3], [10, 11], [-0.5, -0.25]),
            llm_call_count=1,
        ),
        Step(
            step_id=4,
            source="agent",
            message="```run\necho hi > hello.txt\n```",
            observation=Observation(results=[ObservationResult(content=[{"type": "text", "text": "exit 0"}])]),
            metrics=ids([1, 2, 3, 10, 11, 4], [12], [-1.0]),
            llm_call_count=1,
        ),
        Step(
            step_id=5,
            source="agent",
            message="Done.",
            metrics=ids([1, 2, 3, 10, 11, 4, 12, 5], [13, 14], None),
            llm_call_count=1,
        ),
    ]


EXPECTED = [
    {"role": "system", "content": "You are a terminal agent."},
    {"role": "user", "content": "Create hello.txt containing hi."},
    {
        "role": "assistant",
        "content": "Let me look first.",
        "reasoning_content": "check the dir",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run", "arguments": {"command": "ls"}}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "README.md\n"},
    {"role": "assistant", "content": "```run\necho hi > hello.txt\n```"},
    {"role": "user", "content": "exit 0"},
    {"role": "assistant", "content": "Done."},
]


def test_messages_from_harbor_model_and_from_json_agree(tmp_path: Path) -> None:
    trajectory = Trajectory(session_id="s", agent=AGENT, steps=steps())
    assert trajectory_to_messages(trajectory) == EXPECTED
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(trajectory.to_json_dict()))
    assert trajectory_to_messages(path) == EXPECTED
    assert trajectory_to_messages(str(path)) == EXPECTED
    assert trajectory_to_messages(tmp_path) == EXPECTED  # a logs dir


def test_text_tool_style_folds_calls_into_text() -> None:
    messages = trajectory_to_messages(Trajectory(agent=AGENT, steps=steps()), tools="text")
    assert messages[2] == {
        "role": "assistant",
        "reasoning_content": "check the dir",
        "content": 'Let me look first.\n{"tool": "run", "arguments": {"command": "ls"}}',
    }
    assert messages[3] == {"role": "user", "content": "README.md\n"}
    assert all(m["role"] != "tool" for m in messages)


def test_copied_context_and_non_llm_steps_are_marked_untrainable() -> None:
    raw = steps(with_ids=False)
    raw[2] = raw[2].model_copy(update={"is_copied_context": True})
    raw[4] = Step(step_id=5, source="agent", message="Done.", llm_call_count=0)
    trajectory = Trajectory(agent=AGENT, steps=raw)
    messages = trajectory_to_messages(trajectory)
    assert messages[2]["train"] is False and "train" not in messages[4] and "train" not in messages[6]
    assert trajectory_to_messages(trajectory, train_non_llm_steps=False)[6]["train"] is False


def test_token_turns_are_exact_or_absent() -> None:
    turns = trajectory_token_turns(Trajectory(agent=AGENT, steps=steps()))
    assert turns == [
        TokenTurn(prompt_token_ids=[1, 2, 3], completion_token_ids=[10, 11], logprobs=[-0.5, -0.25]),
        TokenTurn(prompt_token_ids=[1, 2, 3, 10, 11, 4], completion_token_ids=[12], logprobs=[-1.0]),
        TokenTurn(prompt_token_ids=[1, 2, 3, 10, 11, 4, 12, 5], completion_token_ids=[13, 14]),
    ]
    assert trajectory_token_turns(Trajectory(agent=AGENT, steps=steps(with_ids=False))) is None
    partial = steps()
    partial[3] = partial[3].model_copy(update={"metrics": Metrics(prompt_tokens=6, completion_tokens=1)})
    assert trajectory_token_turns(Trajectory(agent=AGENT, steps=partial)) is None  # all or nothing


def test_recorder_output_becomes_a_training_sample_that_exports(tmp_path: Path) -> None:
    """The agent's real recorder writes the file; the sample built from it survives the export format."""
    recorder = TrajectoryRecorder(tmp_path / "agent", agent=AGENT, session_id="s1")
    for step in steps():
        recorder.add(**step.model_dump(exclude={"step_id", "timestamp"}, exclude_none=True))
    recorder.flush()
    path = tmp_path / "agent" / "trajectory.json"
    sample = sample_from_trajectory(
        path, task_hash="h", group_id=1, rollout_id=2, policy_version=0, reward=1.0, advantage=0.7
    )
    assert isinstance(sample, TrainingSample)
    assert sample.messages == EXPECTED and len(sample.turns) == 3
    assert sample.meta["trajectory_path"] == str(path)
    batch = TrainingBatch(run="r", step=0, policy_version=0, samples=[sample])
    assert TrainingBatch.read_jsonl(batch.write_jsonl(tmp_path / "b.jsonl")) == batch


def test_multimodal_content_becomes_placeholder_text() -> None:
    trajectory = {
        "steps": [
            {
                "step_id": 1,
                "source": "user",
                "message": [
                    {"type": "text", "text": "look at"},
                    {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}},
                ],
            }
        ]
    }
    assert trajectory_to_messages(trajectory) == [{"role": "user", "content": "look at\n[image: shot.png]"}]


def test_unknown_source_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown ATIF source"):
        trajectory_to_messages({"steps": [{"step_id": 1, "source": "robot", "message": "x"}]})
