"""The terminal agent end to end: Harbor trials in the local sandbox, driven by the
scripted policy or by the real ``openai`` client talking to a replay server on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agent_helpers import bundled, needs_sandbox, trial_files
from chat_server import MODEL, load_recording
from harbor.agents.factory import AgentFactory
from harbor.models.trajectories import Step, Trajectory
from harbor.models.trial.config import AgentConfig
from harbor.utils.traces_utils import extract_conversations_from_trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator

from autoenv.agents.terminal import TerminalAgent
from autoenv.agents.trajectory import load_steps_jsonl, load_trajectory
from autoenv.trials.runner import ERROR_KINDS, run_trial

pytestmark = needs_sandbox


def scripted(task: Path, trials_dir: Path, **kwargs):
    return run_trial(task, "terminal", agent_kwargs={"policy": "scripted", "seed": 0, **kwargs}, trials_dir=trials_dir)


def replayed(task: Path, trials_dir: Path, server, **kwargs):
    kwargs = {"policy": "openai", "base_url": server.url, "retry_base_sec": 0.01, **kwargs}
    return run_trial(task, "terminal", model=MODEL, agent_kwargs=kwargs, trials_dir=trials_dir)


def assert_valid_atif(files: dict) -> Trajectory:
    """Both files validate against Harbor's ATIF models and hold the same steps."""
    validator = TrajectoryValidator()
    assert validator.validate(files["agent_dir"] / "trajectory.json"), validator.errors
    trajectory = load_trajectory(files["agent_dir"])
    steps = load_steps_jsonl(files["agent_dir"] / "trajectory.jsonl")
    assert [s.model_dump() for s in steps] == [s.model_dump() for s in trajectory.steps]
    assert all(isinstance(s, Step) for s in steps)
    assert trajectory.final_metrics.total_steps == len(trajectory.steps)
    return trajectory


def agent_steps(trajectory: Trajectory) -> list[Step]:
    return [s for s in trajectory.steps if s.source == "agent"]


# -- scripted policy ---------------------------------------------------------------------


def test_scripted_policy_solves_hello_and_records_every_step(hello_task, trials_dir):
    outcome = scripted(hello_task, trials_dir)
    assert (outcome.reward, outcome.error) == (1.0, None)
    files = trial_files(outcome.trial_dir)
    trajectory = assert_valid_atif(files)
    assert [s.source for s in trajectory.steps[:2]] == ["system", "user"]
    steps = agent_steps(trajectory)
    assert outcome.n_turns == len(steps) == files["result"]["agent_result"]["metadata"]["n_turns"]
    calls = [tc.function_name for s in steps for tc in s.tool_calls]
    assert calls == ["run", "write_file", "run", "finish"]
    assert all(s.llm_call_count == 0 and s.metrics is None for s in steps)  # ATIF: deterministic dispatch
    assert steps[0].extra["decision"]["attempt"] is True
    assert steps[1].extra["recipe"] == "write_literal"
    assert "hello" in steps[2].observation.results[0].content
    meta = files["result"]["agent_result"]["metadata"]
    assert (meta["stop_reason"], meta["policy"], meta["seed"], meta["workdir"]) == ("finish", "scripted", 0, "/app")


def test_scripted_policy_is_deterministic_under_a_seed(hello_task, trials_dir):
    runs = [scripted(hello_task, trials_dir, seed=11, success_rate=0.5) for _ in range(2)]
    plays = []
    for run in runs:
        steps = agent_steps(load_trajectory(Path(run.trial_dir) / "agent"))
        plays.append([(tc.function_name, tc.arguments) for s in steps for tc in s.tool_calls])
    assert plays[0] == plays[1] and runs[0].reward == runs[1].reward


def test_success_rate_zero_gives_up_on_purpose(hello_task, trials_dir):
    outcome = scripted(hello_task, trials_dir, success_rate=0.0)
    assert (outcome.reward, outcome.error, outcome.n_turns) == (0.0, None, 2)
    last = agent_steps(load_trajectory(Path(outcome.trial_dir) / "agent"))[-1]
    assert last.extra["intent"] == "calibrated_failure"


@pytest.mark.parametrize("task", ["fix-median-bug", "spam-classifier", "shell-backup-rotation"])
def test_scripted_policy_solves_bundled_tasks(task, trials_dir):
    outcome = scripted(bundled(task), trials_dir)
    assert (outcome.reward, outcome.error) == (1.0, None), outcome.error_message
    assert_valid_atif(trial_files(outcome.trial_dir))


@pytest.mark.parametrize(
    "limits, stop_reason, n_turns", [({"max_turns": 1}, "max_turns", 1), ({"max_wall_sec": 0.001}, "wall_time", 0)]
)
def test_limits_end_the_episode_and_say_why(hello_task, trials_dir, limits, stop_reason, n_turns):
    outcome = scripted(hello_task, trials_dir, **limits)
    assert (outcome.reward, outcome.error, outcome.n_turns) == (0.0, None, n_turns)
    files = trial_files(outcome.trial_dir)
    assert files["result"]["agent_result"]["metadata"]["stop_reason"] == stop_reason
    assert assert_valid_atif(files).final_metrics.extra["stop_reason"] == stop_reason


# -- openai policy through the loopback server ---------------------------------------------


def test_replayed_tool_calling_model_solves_hello_through_a_429(hello_task, trials_dir, replay, api_key):
    server = replay("hello_tools.json")
    outcome = replayed(hello_task, trials_dir, server)
    assert server.problems == [] and server.served == len(server.exchanges)
    assert (outcome.reward, outcome.error, outcome.n_turns) == (1.0, None, 3)

    files = trial_files(outcome.trial_dir)
    trajectory = assert_valid_atif(files)
    assert trajectory.agent.model_name == MODEL and [
        t["function"]["name"] for t in trajectory.agent.tool_definitions
    ] == ["run", "read_file", "write_file", "finish"]
    steps = agent_steps(trajectory)
    recorded = [e["response"] for e in server.exchanges if e["response"]["status"] == 200]
    for step, response in zip(steps, recorded):
        choice = response["body"]["choices"][0]
        assert step.llm_call_count == 1 and step.model_name == MODEL
        assert step.metrics.completion_token_ids == choice["token_ids"]
        assert step.metrics.prompt_token_ids == response["body"]["prompt_token_ids"]
        assert step.metrics.logprobs == [t["logprob"] for t in choice["logprobs"]["content"]]
        assert step.extra["policy_version"] == "step-42"
        assert [tc.tool_call_id for tc in step.tool_calls] == [c["id"] for c in choice["message"]["tool_calls"]]
        assert [r.source_call_id for r in step.observation.results] == [tc.tool_call_id for tc in step.tool_calls]
    retries = steps[1].metrics.extra["retries"]
    assert [(r["status"], r["wait_sec"]) for r in retries] == [(429, 0.05)]
    assert "retries" not in steps[0].metrics.extra

    agent_result = files["result"]["agent_result"]
    assert agent_result["n_input_tokens"] == sum(s.metrics.prompt_tokens for s in steps)
    assert agent_result["n_output_tokens"] == sum(s.metrics.completion_tokens for s in steps)
    (detail,) = agent_result["rollout_details"]
    assert detail["completion_token_ids"] == [s.metrics.completion_token_ids for s in steps]
    assert detail["extra"]["policy_version"] == ["step-42"] * 3
    meta = agent_result["metadata"]
    assert (meta["n_retries"], meta["tool_mode"], meta["stop_reason"], meta["finish_message"]) == (
        1,
        "tools",
        "finish",
        "wrote hello",
    )

    # Harbor's own SFT exporter reads it: one conversation per agent turn, tool calls inline
    run_metadata = {
        "agent_name": "terminal",
        "model_name": MODEL,
        "model_provider": "openai",
        "start_time": "t",
        "run_id": "r",
    }
    conversations = extract_conversations_from_trajectory(files["agent_dir"] / "trajectory.json", run_metadata)
    assert len(conversations) == 3
    last = conversations[-1]["conversations"]
    assert [m["role"] for m in last] == ["user", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert '"name": "write_file"' in last[4]["content"] and last[5]["content"] == "Wrote 6 bytes to /app/out.txt."


def test_replayed_text_only_model_with_one_non_action_reply(hello_task, trials_dir, replay, api_key):
    server = replay("hello_text.json")
    outcome = replayed(hello_task, trials_dir, server)
    assert server.problems == [] and server.served == len(server.exchanges)
    assert (outcome.reward, outcome.error, outcome.n_turns) == (1.0, None, 3)

    files = trial_files(outcome.trial_dir)
    trajectory = assert_valid_atif(files)
    assert "```write_file <path>" in trajectory.steps[0].message  # the prompt the model actually got
    assert trajectory.agent.tool_definitions is None
    invalid, write, finish = agent_steps(trajectory)
    assert "contains no action" in invalid.extra["invalid_reply"]
    assert invalid.tool_calls is None
    (feedback,) = invalid.observation.results
    assert feedback.extra == {"error": "invalid_action"} and feedback.content.startswith(
        "ERROR: your last reply could not be executed"
    )
    assert [tc.function_name for tc in write.tool_calls] == ["write_file"]
    assert write.metrics.prompt_token_ids is None  # this server has no token ids; nothing is invented
    meta = files["result"]["agent_result"]["metadata"]
    assert (meta["n_invalid_replies"], meta["tool_mode"]) == (1, "text")
    assert "enable-auto-tool-choice" in meta["tool_mode_fallback"]


def test_replayed_model_solves_a_bundled_task(trials_dir, replay, api_key):
    task = bundled("fix-median-bug")
    server = replay("fix_median_tools.json")
    outcome = replayed(task, trials_dir, server)
    assert server.problems == []
    assert (outcome.reward, outcome.error, outcome.n_turns) == (1.0, None, 4), outcome.error_message
    assert_valid_atif(trial_files(outcome.trial_dir))


def test_replies_that_are_never_actions_end_the_episode_without_a_crash(hello_task, trials_dir, replay, api_key):
    server = replay("invalid_only.json")
    outcome = replayed(hello_task, trials_dir, server)
    assert server.problems == [] and server.served == 3
    assert (outcome.reward, outcome.error, outcome.n_turns) == (0.0, None, 3)  # the verifier ran: a real failure
    files = trial_files(outcome.trial_dir)
    steps = agent_steps(assert_valid_atif(files))
    reasons = [s.extra["invalid_reply"] for s in steps]
    assert (
        "not valid JSON" in reasons[0]
        and "unknown action 'browse'" in reasons[1]
        and "contains no action" in reasons[2]
    )
    assert steps[0].tool_calls[0].extra["error"] and steps[0].tool_calls[0].arguments == {"_raw": '{"command": "ls -la'}
    assert files["result"]["agent_result"]["metadata"]["stop_reason"] == "invalid_actions"


def test_token_budget_stops_an_llm_episode(hello_task, trials_dir, replay, api_key):
    server = replay("hello_tools.json")
    outcome = replayed(hello_task, trials_dir, server, token_budget=100)  # the first turn alone uses 116
    assert (outcome.reward, outcome.error, outcome.n_turns, server.served) == (0.0, None, 1, 1)
    assert trial_files(outcome.trial_dir)["result"]["agent_result"]["metadata"]["stop_reason"] == "token_budget"


def test_harbor_agent_timeout_keeps_the_turns_played_so_far(hello_task, trials_dir, replay, api_key):
    recording = load_recording("hello_tools.json")
    recording[1] = {**recording[1], "delay_sec": 30}  # the model stalls on the second turn
    server = replay(recording)
    outcome = run_trial(
        hello_task,
        "terminal",
        model=MODEL,
        trials_dir=trials_dir,
        agent_timeout_sec=3,
        agent_kwargs={"policy": "openai", "base_url": server.url},
    )
    assert (outcome.error, outcome.reward) == ("agent_timeout", 0.0)  # the verifier still ran
    files = trial_files(outcome.trial_dir)
    steps = agent_steps(assert_valid_atif(files))
    assert len(steps) == 1 and steps[0].tool_calls[0].arguments == {"command": "ls -la /app"}
    meta = files["result"]["agent_result"]["metadata"]
    assert (meta["stop_reason"], meta["n_turns"]) == ("cancelled", 1)


# -- endpoint failures: recorded, then reported as trial errors ---------------------------


def _assert_recorded_error(outcome, kind: str, text: str) -> dict:
    assert outcome.reward is None and outcome.error == kind and text in outcome.error_message
    files = trial_files(outcome.trial_dir)
    trajectory = assert_valid_atif(files)
    last = trajectory.steps[-1]
    # the trajectory keeps the exception's class; the trial summary its kind (runner.ERROR_KINDS)
    assert last.source == "system" and ERROR_KINDS[last.extra["error"]["type"]] == kind and text in last.message
    meta = files["result"]["agent_result"]["metadata"]
    assert (meta["stop_reason"], ERROR_KINDS[meta["error"]["type"]], meta["n_turns"]) == ("policy_error", kind, 0)
    assert ERROR_KINDS[files["result"]["exception_info"]["exception_type"]] == kind
    return files


def test_nothing_listening_at_the_base_url(hello_task, trials_dir, closed_port_url, api_key):
    outcome = run_trial(
        hello_task,
        "terminal",
        model=MODEL,
        trials_dir=trials_dir,
        agent_kwargs={"policy": "openai", "base_url": closed_port_url, "retry_base_sec": 0.01},
    )
    _assert_recorded_error(outcome, "policy_unreachable", "cannot reach an OpenAI-compatible endpoint")


def test_openai_policy_without_a_model(hello_task, trials_dir, api_key):
    outcome = run_trial(
        hello_task,
        "terminal",
        trials_dir=trials_dir,
        agent_kwargs={"policy": "openai", "base_url": "http://127.0.0.1:9/v1"},
    )
    _assert_recorded_error(outcome, "policy_config", "needs a model name")


def test_bad_api_key(hello_task, trials_dir, replay, monkeypatch):
    server = replay("hello_tools.json", api_key="sk-right")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    outcome = replayed(hello_task, trials_dir, server)
    _assert_recorded_error(outcome, "policy_auth", "rejected the API key (HTTP 401")
    assert server.served == 0


# -- Harbor integration ------------------------------------------------------------------


def test_harbor_loads_the_agent_by_import_path(tmp_path):
    config = AgentConfig(
        import_path=TerminalAgent.import_path(),
        model_name="Qwen/Qwen3-8B",
        base_url="http://127.0.0.1:8000/v1",
        kwargs={"policy": "openai", "max_turns": "7", "success_rate": "0.5", "policy_version": 3},
    )
    # skip_model_parsing keeps Harbor's preflight from importing LiteLLM (seconds, and a network fetch)
    config.skip_model_parsing = True
    AgentFactory.run_preflight(config, skip_credential_checks=True)
    agent = AgentFactory.create_agent_from_config(config, logs_dir=tmp_path)
    assert isinstance(agent, TerminalAgent)
    assert (agent.options.max_turns, agent.options.success_rate, agent.options.policy_version) == (7, 0.5, "3")
    assert agent.options.base_url == "http://127.0.0.1:8000/v1"
    assert agent.to_agent_info().model_info.name == "Qwen/Qwen3-8B"
    with pytest.raises(ValueError, match="Unknown option 'temprature'"):
        AgentFactory.create_agent_from_config(
            AgentConfig(import_path=TerminalAgent.import_path(), kwargs={"temprature": 1}), logs_dir=tmp_path
        )


@pytest.mark.slow
def test_harbor_cli_runs_the_agent_as_a_custom_agent(hello_task, trials_dir):
    harbor = Path(sys.executable).with_name("harbor")
    out = subprocess.run(
        [
            str(harbor),
            "trial",
            "start",
            "-p",
            str(hello_task),
            "-a",
            TerminalAgent.import_path(),
            "-e",
            "autoenv.sandbox.local:LocalEnvironment",
            "--agent-kwarg",
            "policy=scripted",
            "--agent-kwarg",
            "seed=2",
            "--trials-dir",
            str(trials_dir),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "'reward': 1.0" in out.stdout
    (trajectory,) = trials_dir.glob("*/agent/trajectory.json")
    assert TrajectoryValidator().validate(trajectory)
