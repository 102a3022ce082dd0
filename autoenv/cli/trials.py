"""``autoenv trial`` and ``autoenv trials``: run Harbor trials on any backend."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from autoenv.cli.common import console, fail, fail_with, print_json, progress_bar
from autoenv.spec import parse_options
from autoenv.trials import DEFAULT_TRIALS_DIR

AgentOpt = Annotated[
    str, typer.Option("--agent", "-a", help="oracle, nop, terminal, any Harbor agent name, or module:Class.")
]
EnvOpt = Annotated[
    str,
    typer.Option(
        "--env", "-e", help="local (no container engine), or a Harbor environment: docker, podman, modal, ..."
    ),
]
PolicyOpt = Annotated[str | None, typer.Option(help="Policy for the terminal agent: scripted (offline) or openai.")]
ModelOpt = Annotated[str | None, typer.Option(help="Model name for LLM agents/policies.")]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for --policy openai.")]
SeedOpt = Annotated[int | None, typer.Option(help="Seed for scripted policies.")]
AgentKwargsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ak", help="Extra agent kwarg KEY=VALUE (repeatable; values read as in a solver spec: numbers, true/false)."
    ),
]
TrialsDirOpt = Annotated[Path, typer.Option(help="Where trial outputs are written.")]


def agent_kwargs(policy: str | None, base_url: str | None, seed: int | None, extra: list[str] | None) -> dict:
    kwargs: dict = {}
    if policy:
        kwargs["policy"] = policy
    if base_url:
        kwargs["base_url"] = base_url
    if seed is not None:
        kwargs["seed"] = seed
    for item in extra or []:
        try:
            kwargs |= parse_options(item, what="--ak")
        except ValueError as exc:
            fail(str(exc).replace("expected key=value", "expects KEY=VALUE"))
    return kwargs


def _check_env(env: str) -> None:
    from autoenv.sandbox.backends import UnknownBackend, environment_config

    try:
        environment_config(env)
    except UnknownBackend as exc:
        fail(str(exc))


def trial(
    path: Annotated[Path, typer.Argument(help="A Harbor task folder.")],
    agent: AgentOpt = "oracle",
    env: EnvOpt = "local",
    policy: PolicyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    seed: SeedOpt = None,
    ak: AgentKwargsOpt = None,
    trials_dir: TrialsDirOpt = DEFAULT_TRIALS_DIR,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run one Harbor trial and report its reward.

    Exit codes: 0 the trial ran (whatever its reward), 2 the task is wrong (task.toml, Dockerfile),
    3 this backend cannot run it, 4 the sandbox failed, 5 the model endpoint failed, 70 a bug.
    """
    from autoenv.taskfmt.check import is_task_dir
    from autoenv.trials import runner

    if not is_task_dir(path):
        fail(f"{path}: not a task folder (no task.toml)", code=2)
    _check_env(env)
    runner.quiet_harbor_logs()
    try:
        outcome = runner.run_trial(
            path,
            agent,
            env=env,
            model=model,
            agent_kwargs=agent_kwargs(policy, base_url, seed, ak),
            trials_dir=trials_dir,
        )
    except Exception as exc:  # noqa: BLE001 - the CLI boundary: said for a user by fail_with
        fail_with(exc, task=path, env=env, json_out=json_out)
    if json_out:
        print_json(outcome.model_dump())
    else:
        colour = "green" if outcome.passed else "red"
        console.print(
            f"[{colour}]reward={outcome.reward}[/{colour}] error={outcome.error} ({outcome.duration_sec:.1f}s) -> "
            f"{outcome.trial_dir}"
        )
        for note in outcome.stand_ins:
            console.print(f"[yellow]base image stand-in:[/yellow] {note}", highlight=False)
        if outcome.error_message:
            console.print(outcome.error_message[-800:], highlight=False)


def trials(
    path: Annotated[Path, typer.Argument(help="A dataset folder of Harbor tasks (or one task).")],
    agent: AgentOpt = "oracle",
    env: EnvOpt = "local",
    n_concurrent: Annotated[int, typer.Option("-n", "--n-concurrent", help="Trials run at once.")] = 2,
    attempts: Annotated[int, typer.Option("-k", "--attempts", help="Trials per task.")] = 1,
    policy: PolicyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    seed: SeedOpt = None,
    ak: AgentKwargsOpt = None,
    trials_dir: TrialsDirOpt = DEFAULT_TRIALS_DIR,
    json_out: Annotated[bool, typer.Option("--json", help="Print all outcomes as JSON.")] = False,
) -> None:
    """Run every task of a folder in parallel with a progress bar and a summary table."""
    from autoenv.taskfmt.check import find_tasks
    from autoenv.trials import runner

    tasks = find_tasks(path)
    if not tasks:
        fail(f"{path}: no Harbor tasks found (folders with task.toml)")
    _check_env(env)
    runner.quiet_harbor_logs()
    # each attempt of a seeded policy gets its own seed, or all attempts would play the same way
    jobs = [(t, agent, {"seed": seed + i} if seed is not None else {}) for t in tasks for i in range(attempts)]
    with progress_bar("[bold]trials", "last", transient=json_out) as progress:
        bar = progress.add_task("trials", total=len(jobs), last="")

        def done(outcome: runner.TrialOutcome) -> None:
            progress.update(bar, advance=1, last=f"{outcome.task}: {outcome.reward}")

        outcomes = asyncio.run(
            runner.arun_many(
                jobs,
                n_concurrent=n_concurrent,
                on_done=done,
                env=env,
                model=model,
                agent_kwargs=agent_kwargs(policy, base_url, None, ak),
                trials_dir=trials_dir,
            )
        )
    if json_out:
        print_json([o.model_dump() for o in outcomes])
        return
    table = Table(title=f"{agent} on {path} ({env})")
    for column in ("task", "reward", "error", "seconds"):
        table.add_column(column)
    for o in outcomes:
        table.add_row(o.task, "-" if o.reward is None else f"{o.reward:g}", o.error or "", f"{o.duration_sec:.1f}")
    console.print(table)
    passed = sum(o.passed for o in outcomes)
    console.print(f"passed {passed}/{len(outcomes)}")


def register(app: typer.Typer) -> None:
    app.command("trial")(trial)
    app.command("trials")(trials)
