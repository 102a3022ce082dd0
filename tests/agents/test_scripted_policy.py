"""The scripted policy's calibration dial and its recipe matching (no sandbox needed)."""

from __future__ import annotations

import asyncio

import pytest
from agent_helpers import bundled

from autoenv.agents.policies import PolicyConfigError, make_policy
from autoenv.agents.policies.base import ActionResult, Conversation, Turn
from autoenv.agents.policies.recipes import match_recipe
from autoenv.agents.policies.scripted import ScriptedPolicy
from autoenv.shared.actions import FinishAction, RunAction

INSTRUCTION = 'Write "hello" to /app/out.txt\n'


def test_same_seed_same_decision_and_rate_matches_success_rate():
    assert ScriptedPolicy(seed=7, success_rate=0.5).decide(INSTRUCTION) == ScriptedPolicy(
        seed=7, success_rate=0.5
    ).decide(INSTRUCTION)
    attempts = [ScriptedPolicy(seed=s, success_rate=0.3).decide(INSTRUCTION)["attempt"] for s in range(1000)]
    assert abs(sum(attempts) / len(attempts) - 0.3) < 0.05
    assert all(ScriptedPolicy(seed=s, success_rate=1.0).decide(INSTRUCTION)["attempt"] for s in range(50))
    assert not any(ScriptedPolicy(seed=s, success_rate=0.0).decide(INSTRUCTION)["attempt"] for s in range(50))


def test_decision_depends_on_the_task_too():
    draws = {ScriptedPolicy(seed=1).decide(f"task {i}")["draw"] for i in range(20)}
    assert len(draws) == 20


def test_without_a_seed_one_is_drawn_and_reported():
    policy = ScriptedPolicy()
    assert isinstance(policy.seed, int) and not policy.seed_was_given


def test_bad_settings_are_config_errors():
    with pytest.raises(PolicyConfigError, match="success_rate"):
        ScriptedPolicy(success_rate=1.5)
    with pytest.raises(PolicyConfigError, match="does not take: model"):
        make_policy("scripted", model="gpt")


def _play(policy: ScriptedPolicy, instruction: str, outputs: list[str]) -> list[list]:
    """Drive the policy with canned outputs; returns the actions of each turn."""

    async def go():
        conversation = Conversation(instruction=instruction, workdir="/app")
        turns = []
        for i in range(20):
            reply = await policy.act(conversation)
            turns.append(reply.actions)
            if any(isinstance(a, FinishAction) for a in reply.actions):
                return turns
            out = outputs[i] if i < len(outputs) else ""
            results = [ActionResult(call_id=c.id, action=c.action, output=out, exit_code=0) for c in reply.calls]
            conversation.turns.append(Turn(reply=reply, results=results))
        return turns

    return asyncio.run(go())


def test_give_up_draw_finishes_after_looking_around():
    turns = _play(ScriptedPolicy(seed=0, success_rate=0.0), INSTRUCTION, [])
    assert turns == [[RunAction(command="pwd && ls -la")], [FinishAction(message="Stopping without a solution.")]]


def test_write_literal_episode_reacts_to_what_it_reads_back():
    ok = _play(ScriptedPolicy(seed=0), INSTRUCTION, ["", "", "hello\n[exit code 0]"])
    assert ok[-1][0].message == "Wrote 'hello' to /app/out.txt."
    wrong = _play(ScriptedPolicy(seed=0), INSTRUCTION, ["", "", "something else"])
    assert "does not read back" in wrong[-1][0].message


@pytest.mark.parametrize(
    "instruction, recipe, found",
    [
        ('Write "hello" to /app/out.txt', "write_literal", {"text": "hello", "path": "/app/out.txt"}),
        (
            "Write the word hello (and nothing else) to /app/out.txt.\n",
            "write_literal",
            {"text": "hello", "path": "/app/out.txt"},
        ),
        ("Create a file /tmp/x.txt containing 'done'", "write_literal", {"text": "done", "path": "/tmp/x.txt"}),
        (
            "Fix `mean` in `/srv/lib/stats.py` so that it works.",
            "fix_function",
            {"func": "mean", "path": "/srv/lib/stats.py", "commands": []},
        ),
        ("Compute the weighted mean of the readings.", None, None),
        ("Fix `frobnicate` in `/app/x.py`.", None, None),  # no known-good implementation
    ],
)
def test_recipes_are_keyed_on_the_instruction(instruction, recipe, found):
    matched = match_recipe(instruction)
    if recipe is None:
        assert matched is None
    else:
        assert matched is not None and matched[0].name == recipe and matched[1] == found


@pytest.mark.parametrize(
    "task, recipe",
    [
        ("fix-median-bug", "fix_function"),
        ("spam-classifier", "text_classifier"),
        ("shell-backup-rotation", "backup_rotation"),
        ("csv-statistic", None),
    ],
)
def test_bundled_instructions_pick_their_recipe(task, recipe):
    matched = match_recipe((bundled(task) / "instruction.md").read_text())
    assert (matched[0].name if matched else None) == recipe
