"""AutoEnvScaling's agentic proposer: a terminal agent in its own sandbox with its workspace.

The proposer is autoenv's :class:`~autoenv.agents.terminal.TerminalAgent`,
run by Harbor's ``Trial`` on a small "proposer task" whose sandbox holds a
copy of the workspace at ``/workspace`` (skills, tools, memory, tasks, the seed
case and the format spec). It designs a task there with ordinary commands and
file writes, and it builds and tests it in *child* sandboxes through one
extra command, ``autoenv-child``:

    autoenv-child validate tasks/NAME     full validation in separate sandboxes
    autoenv-child solve tasks/NAME        K solver rollouts (the attempt's; -k K for another): pass rate, verdict
    autoenv-child check tasks/NAME        the static format check only

The agent loop runs on the host and reaches the sandbox only through
``environment.exec``; :class:`~autoenv.proposer.child.ServedEnvironment` sits in that path and serves
an ``autoenv-child`` command line itself: it copies the task folder out of
the proposer's sandbox, runs the real validator/calibrator on it (each trial a
fresh sandbox of its own) and returns their report as the command's output.
Inside the sandbox a stub of the same name explains this if it is called
from a pipeline or a script. When the episode ends, the sandbox's skills,
tools, memory and tasks are copied back to the host workspace.

With ``--policy scripted`` the decisions come from
:class:`~autoenv.proposer.scripted_agentic.ScriptedAgenticPolicy`: the template proposer acting
through the same tools (write the files, validate in a child sandbox, read the feedback, repair, run
the solver). The command server is :mod:`autoenv.proposer.child`, the workspace copying
:mod:`autoenv.proposer.sync`; this module is the agent and :func:`run_agentic`.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from pydantic import Field

from autoenv.agents.policies.base import Policy, PolicyError
from autoenv.agents.terminal import TerminalAgent, TerminalAgentOptions
from autoenv.families.base import slug
from autoenv.proposer.actions import classify_tool_call, describe_tool_call
from autoenv.proposer.child import (
    BUG_ERRORS,
    INFRA_ERRORS,
    SANDBOX_ROOT,
    AgenticJob,
    AgenticResult,
    ChildCall,
    ChildServer,
    ServedEnvironment,
)
from autoenv.proposer.models import ProposeOptions, ProposerAction, SeedCase
from autoenv.proposer.scripted import ScriptedProposer
from autoenv.proposer.scripted_agentic import ScriptedAgenticPolicy
from autoenv.proposer.sync import download_workspace, task_hashes, upload_workspace
from autoenv.proposer.workspace import Workspace
from autoenv.sandbox.backends import get_backend
from autoenv.vocab import Method, ProposerPolicy, SolverPolicy

# -- the agent ---------------------------------------------------------------------------


class ProposerAgentOptions(TerminalAgentOptions):
    job: str = Field(description="Path of the AgenticJob JSON on the host.")
    max_turns: int = Field(default=40, ge=1, description="Policy replies per episode.")
    command_timeout_sec: float = Field(default=300.0, gt=0, description="Limit for one action.")


class ProposerAgent(TerminalAgent):
    """The terminal agent, with the workspace uploaded and ``autoenv-child`` served."""

    options_model = ProposerAgentOptions
    options: ProposerAgentOptions

    @staticmethod
    def name() -> str:
        return "autoenv-proposer"

    def _job(self) -> AgenticJob:
        return AgenticJob.model_validate_json(Path(self.options.job).read_text())

    def _make_policy(self) -> Policy:
        job = self._job()
        if self.options.policy == ProposerPolicy.SCRIPTED:
            return ScriptedAgenticPolicy(job)
        return super()._make_policy()

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        job = self._job()
        workspace = Workspace(job.workspace)
        server = ChildServer(job)
        result = AgenticResult()
        await upload_workspace(environment, workspace)
        before = await task_hashes(environment)
        try:
            await super().run(instruction, ServedEnvironment(environment, server), context)  # type: ignore[arg-type]
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            try:
                after = await task_hashes(environment)
                result.changed_tasks = [name for name, h in after.items() if before.get(name) != h]
                await download_workspace(environment, workspace, job.attempt)
            except Exception as exc:  # noqa: BLE001 - the sandbox may be gone after a timeout
                result.error = (result.error or "") + f"; workspace not copied back: {exc}"
            result.child_calls = server.calls
            result.finish_message = (context.metadata or {}).get("finish_message")
            result.final_task = pick_final_task(result, job.task_name)
            Path(job.result_file).write_text(result.model_dump_json(indent=2))


def pick_final_task(result: AgenticResult, expected: str) -> str | None:
    """The task the episode produced: the one its finish message names, else the last one it validated or changed."""
    candidates = list(dict.fromkeys(result.changed_tasks + [c.task for c in result.child_calls if c.task]))
    message = result.finish_message or ""
    for name in sorted(candidates, key=len, reverse=True):
        if name in message:
            return name
    validated = [c.task for c in result.child_calls if c.task and c.verb in ("validate", "solve")]
    if validated:
        return validated[-1]
    if expected in result.changed_tasks:
        return expected
    return result.changed_tasks[-1] if result.changed_tasks else None


# -- running it ---------------------------------------------------------------------------


def proposer_task(
    workspace: Workspace,
    case: SeedCase,
    task_name: str,
    *,
    rollouts: int,
    attempt: int,
    network: str = "no-network",
    max_rounds: int = 3,
) -> Path:
    """The Harbor task whose sandbox the proposer works in (its instruction is the proposer brief)."""
    from autoenv.proposer.llm import brief

    root = workspace.root / ".proposer" / f"task-{attempt}"
    if root.exists():
        shutil.rmtree(root)
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    (root / "instruction.md").write_text(
        brief(case, workspace, task_name, method=Method.AGENTIC, rollouts=rollouts, max_rounds=max_rounds)
    )
    (root / "task.toml").write_text(
        textwrap.dedent(f"""\
        schema_version = "1.4"

        [metadata]
        category = "task-design"
        author_name = "autoenv"

        [verifier]
        timeout_sec = 60.0

        [agent]
        timeout_sec = 3600.0

        [environment]
        build_timeout_sec = 300.0
        cpus = 1
        memory_mb = 2048
        network_mode = "{network}"
        """)
    )
    (root / "environment" / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nRUN pip install --no-cache-dir pytest==8.3.4\nWORKDIR {SANDBOX_ROOT}\n"
    )
    test_sh = root / "tests" / "test.sh"
    test_sh.write_text(
        "#!/bin/bash\n# The proposer's own episode reward is informational; r_P comes from validating its task.\n"
        "mkdir -p /logs/verifier\n"
        f"if ls {SANDBOX_ROOT}/tasks/*/task.toml >/dev/null 2>&1; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    test_sh.chmod(0o755)
    solve = root / "solution" / "solve.sh"
    solve.write_text("#!/bin/bash\necho 'the proposer task has no reference solution' >&2\nexit 1\n")
    solve.chmod(0o755)
    return root


@dataclass
class AgenticOutcome:
    task_dir: Path | None
    actions: list[ProposerAction]
    rounds: int
    child_calls: list[ChildCall]
    trial_dir: str
    error: str | None = None
    finish_message: str | None = None
    repairs: list[str] = field(default_factory=list)


def agentic_task_name(case: SeedCase, *, policy: str, seed: int, attempt: int, proposer: ScriptedProposer) -> str:
    if policy == ProposerPolicy.SCRIPTED:
        return proposer.draft(case, attempt).name
    return f"{slug(case.id, 20)}-s{seed}-a{attempt}"


async def run_agentic(
    case: SeedCase,
    workspace: Workspace,
    *,
    attempt: int,
    options: ProposeOptions,
    trials_dir: Path,
    mask_paths: list[Path] | None = None,
    since: float | None = None,
) -> AgenticOutcome:
    """One agentic attempt: a proposer trial in its own sandbox, child sandboxes served on demand."""
    from autoenv.trials.runner import arun_trial

    policy, env, rollouts, seed, network = (
        options.policy,
        options.env,
        options.rollouts,
        options.seed,
        options.network_mode,
    )
    model, base_url, flaw_rate = options.model, options.base_url, options.flaw_rate
    scripted = ScriptedProposer(seed=seed, flaw_rate=flaw_rate, workspace=workspace)
    task_name = agentic_task_name(case, policy=policy, seed=seed, attempt=attempt, proposer=scripted)
    jobs = workspace.root / ".proposer"
    jobs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    result_file = str(jobs / f"result-{attempt}-{stamp}.json")
    job = AgenticJob(
        case=case,
        workspace=str(workspace.root),
        attempt=attempt,
        task_name=task_name,
        options=options,
        trials_dir=str(trials_dir),
        result_file=result_file,
    )
    job_file = jobs / f"job-{attempt}-{stamp}.json"
    job_file.write_text(job.model_dump_json(indent=2))
    task = proposer_task(
        workspace, case, task_name, rollouts=rollouts, attempt=attempt, network=network, max_rounds=options.max_rounds
    )
    kwargs: dict[str, Any] = {
        "job": str(job_file),
        "policy": str(SolverPolicy.SCRIPTED if policy == ProposerPolicy.SCRIPTED else SolverPolicy.OPENAI),
        "seed": seed,
    }
    masks = get_backend(env).masks_paths
    env_kwargs = {"mask_paths": [str(p) for p in [workspace.root, *(mask_paths or [])]]} if masks else None
    outcome = await arun_trial(
        task,
        "autoenv.proposer.agentic:ProposerAgent",
        env=env,
        model=model if policy != ProposerPolicy.SCRIPTED else None,
        agent_kwargs={**kwargs, **({"base_url": base_url} if base_url and policy != ProposerPolicy.SCRIPTED else {})},
        trials_dir=trials_dir / "proposer",
        env_kwargs=env_kwargs,
    )
    result = (
        AgenticResult.model_validate_json(Path(job.result_file).read_text())
        if Path(job.result_file).is_file()
        else AgenticResult(error=outcome.error_message or outcome.error or "the proposer episode left no result")
    )
    infra = result.error and result.error.split(":", 1)[0] in INFRA_ERRORS
    if infra or (outcome.error and outcome.error.startswith("policy_")):
        raise PolicyError(f"the proposer's model could not be reached: {result.error or outcome.error_message}")
    if result.error and result.error.split(":", 1)[0] in BUG_ERRORS:
        raise RuntimeError(f"the proposer harness failed (a bug in autoenv, not a bad task): {result.error}")
    actions, repairs = trajectory_actions(Path(outcome.trial_dir) / "agent" if outcome.trial_dir else None, since=since)
    final = workspace.tasks / result.final_task if result.final_task else None
    return AgenticOutcome(
        task_dir=final if final is not None and (final / "task.toml").is_file() else None,
        actions=actions,
        rounds=sum(1 for c in result.child_calls if c.verb == "validate" and c.ok is not None),
        child_calls=result.child_calls,
        trial_dir=outcome.trial_dir,
        error=result.error or (f"{outcome.error}: {outcome.error_message}" if outcome.error else None),
        finish_message=result.finish_message,
        repairs=repairs,
    )


def trajectory_actions(agent_dir: Path | None, *, since: float | None = None) -> tuple[list[ProposerAction], list[str]]:
    """Every tool call of the proposer episode, classified Read/Build/Write/Test, and the repairs it noted.

    Times are seconds since ``since`` (wall clock; the attempt's start), else since the first step.
    """
    if agent_dir is None or not (agent_dir / "trajectory.json").is_file():
        return [], []
    steps = json.loads((agent_dir / "trajectory.json").read_text()).get("steps", [])
    t0 = since
    out: list[ProposerAction] = []
    repairs: list[str] = []
    for step in steps:
        stamp = step.get("timestamp")
        try:
            when = datetime.fromisoformat(stamp).timestamp() if stamp else None
        except ValueError:
            when = None
        if t0 is None and when is not None:
            t0 = when
        t = round(max(0.0, when - t0), 3) if when is not None and t0 is not None else 0.0
        note = (step.get("message") or "") if step.get("source") == "agent" else ""
        repairs += [str(r) for r in ((step.get("extra") or {}).get("repairs") or [])]
        for call in step.get("tool_calls") or []:
            name, args = call.get("function_name", ""), call.get("arguments") or {}
            detail = describe_tool_call(name, args)
            if note.lower().startswith("repair"):
                detail = f"repair: {detail}"
            out.append(ProposerAction(t=t, kind=classify_tool_call(name, args), detail=detail[:500]))
    return out, repairs
