"""``autoenv flywheel``: run the closed loop with progress and per-step metrics."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoenv.cli.common import console, fail
from autoenv.flywheel.loop import Flywheel, FlywheelConfig, RunConfigMismatch
from autoenv.store.db import Store
from autoenv.trials.runner import quiet_harbor_logs


def flywheel(
    steps: Annotated[int, typer.Option(help="Training steps to run (a resumed run skips finished steps).")] = 3,
    db: Annotated[str, typer.Option(help="Store: a SQLite file path or an SQLAlchemy URL (postgresql://...).")] = "runs/flywheel.db",
    run: Annotated[str, typer.Option(help="Run name inside the store; rerun the same name to resume.")] = "main",
    group_size: Annotated[int, typer.Option("--group-size", "-g", help="Rollouts per task (GRPO group size).")] = 4,
    tasks_per_step: Annotated[int, typer.Option(help="Tasks rolled out per step.")] = 3,
    solver: Annotated[Optional[str], typer.Option(help="Solver spec: agent[:k=v,...]. Default: the shared policy (the model given or served, else terminal:policy=scripted,success_rate=0.6). A policy=openai spec without base_url samples from the shared model.")] = None,
    policy: Annotated[Optional[str], typer.Option(help="Proposer policy: scripted (offline) or openai. Default: openai when --model or --serve is given.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model at the endpoint: the proposer and, by default, the solver (one shared policy).")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint of --model.")] = None,
    serve: Annotated[str, typer.Option(help="Serve each trained version to the next step's rollouts: none, cpu (training env; the tiny policy) or vllm (GPU).")] = "none",
    serve_port: Annotated[int, typer.Option(help="Port of the served policy (127.0.0.1).")] = 8011,
    proposer_network: Annotated[Optional[str], typer.Option(help="Agentic proposer's sandbox network: public or no-network (default: public with a model, no-network offline).")] = None,
    method: Annotated[str, typer.Option(help="Proposer method: prompt, feedback or agentic.")] = "feedback",
    proposals_per_step: Annotated[int, typer.Option(help="Seed cases proposed from per step (the proposer's GRPO group).")] = 2,
    seed_cases: Annotated[Optional[Path], typer.Option(help="Folder of seed cases (YAML/JSON).")] = None,
    benchmark: Annotated[Optional[Path], typer.Option(help="Benchmark task folder scored after each step.")] = None,
    benchmark_tasks: Annotated[Optional[int], typer.Option(min=1, help="Score only the first N benchmark tasks (default: all).")] = None,
    benchmark_rollouts: Annotated[int, typer.Option(min=1, help="Solver rollouts per benchmark task.")] = 1,
    static: Annotated[Optional[Path], typer.Option(help="Static baseline: train only on this task folder, no proposer.")] = None,
    proposer_training: Annotated[str, typer.Option(help="on: train the policy on proposer episodes too; off: baseline without.")] = "on",
    trainer: Annotated[str, typer.Option(help="Training backend: export (batches for external trainers) or trl.")] = "export",
    env: Annotated[str, typer.Option(help="Sandbox backend for every trial.")] = "local",
    ray: Annotated[Optional[str], typer.Option("--ray", help="Ray address for rollouts (or 'local').")] = None,
    n_concurrent: Annotated[int, typer.Option("-n", help="Trials at once on this machine.")] = 2,
    out: Annotated[Path, typer.Option(help="Where tasks, trials and training batches go.")] = Path("runs") / "flywheel",
) -> None:
    """Failures -> proposer -> accepted tasks -> grouped rollouts -> training, resumable from the store."""
    if proposer_training not in ("on", "off"):
        fail("--proposer-training must be on or off")
    if method not in ("prompt", "feedback", "agentic"):
        fail(f"--method must be prompt, feedback or agentic, not {method!r}")
    if static is not None and not static.is_dir():
        fail(f"{static}: --static must be a folder of tasks")
    if serve not in ("none", "cpu", "vllm"):
        fail(f"--serve must be none, cpu or vllm, not {serve!r}")
    if policy not in (None, "scripted", "openai"):
        fail(f"--policy must be scripted or openai, not {policy!r}")
    if proposer_network not in (None, "public", "no-network"):
        fail(f"--proposer-network must be public or no-network, not {proposer_network!r}")
    if serve != "none" and (model or base_url):
        fail("--serve serves the run's own checkpoints; it does not go with --model/--base-url")
    config = FlywheelConfig(run=run, steps=steps, group_size=group_size, tasks_per_step=tasks_per_step, solver=solver,
                            proposer_policy=policy, model=model, base_url=base_url, serve=serve, serve_port=serve_port,
                            proposer_network=proposer_network, method=method, proposals_per_step=proposals_per_step, static_dir=static,
                            proposer_training=proposer_training == "on", trainer=trainer, env=env, ray=ray,
                            n_concurrent=n_concurrent, out_dir=out, benchmark_tasks=benchmark_tasks, benchmark_rollouts=benchmark_rollouts)
    if seed_cases is not None:
        config.seed_cases_dir = seed_cases
    if benchmark is not None:
        config.benchmark_dir = benchmark
    quiet_harbor_logs()
    store = Store(db)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[note]}"), console=console) as progress:
        bar = progress.add_task("flywheel", total=steps, note="")

        def on_event(event: str, data: dict) -> None:
            if event == "step_done":
                progress.update(bar, advance=1, note=f"step {data['step']}: useful {data['useful_group_rate']:.2f}")
            elif event == "rollout":
                progress.update(bar, note=f"{data['task']}: {data['reward']}")
            elif event in ("propose", "collect", "train"):
                progress.update(bar, note=f"{event} {data}")
            elif event == "warning":
                console.print(f"[yellow]{data['message']}[/yellow]")

        try:
            reports = asyncio.run(Flywheel(config, store, progress=on_event).run())
        except (RuntimeError, RunConfigMismatch, FileNotFoundError) as exc:
            fail(str(exc), code=2 if isinstance(exc, RunConfigMismatch | FileNotFoundError) else 1)
    table = Table(title=f"flywheel run {run!r} ({config.baseline}; {config.policies} policy)")
    for column in ("step", "policy", "proposals", "accepted", "groups", "useful", "collect s", "train s", "benchmark"):
        table.add_column(column)
    for r in reports:
        table.add_row(str(r.step), f"v{r.policy_version_in}->v{r.policy_version_out}", str(r.proposals), str(r.accepted), str(r.groups),
                      f"{r.useful_group_rate:.2f}", f"{r.collect_sec:.1f}", f"{r.train_sec:.1f}",
                      "-" if r.benchmark_score is None else f"{r.benchmark_score:.2f}")
    console.print(table)
    console.print(f"store: {store.url}")


def register(app: typer.Typer) -> None:
    app.command("flywheel")(flywheel)
