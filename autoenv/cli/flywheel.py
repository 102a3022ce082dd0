"""``autoenv flywheel``: run the closed loop with progress and per-step metrics."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from autoenv.cli.common import console, default, fail, fail_with, option, require_machine
from autoenv.cli.logs import LogFormat, setup_logging
from autoenv.cli.tables import Column, ResultTable, TableFormat
from autoenv.errors import MachineError, SandboxFault, TaskError
from autoenv.flywheel.config import FlywheelConfig, RunConfigMismatch
from autoenv.flywheel.events import describe
from autoenv.vocab import Method, ProposerNetwork, ProposerPolicy, ReportTo, ServeKind, Switch

C = FlywheelConfig


def flywheel(
    steps: Annotated[int, option(C, "steps", min=1)] = default(C, "steps"),
    db: Annotated[
        str, typer.Option(help="Store: a SQLite file path or an SQLAlchemy URL (postgresql://...).")
    ] = "runs/flywheel.db",
    run: Annotated[str, option(C, "run")] = default(C, "run"),
    group_size: Annotated[int, option(C, "group_size", "--group-size", "-g", min=1)] = default(C, "group_size"),
    tasks_per_step: Annotated[int, option(C, "tasks_per_step", min=1)] = default(C, "tasks_per_step"),
    solver: Annotated[str | None, option(C, "solver")] = default(C, "solver"),
    policy: Annotated[ProposerPolicy | None, option(C, "proposer_policy", "--policy")] = default(C, "proposer_policy"),
    model: Annotated[str | None, option(C, "model")] = default(C, "model"),
    base_url: Annotated[str | None, option(C, "base_url")] = default(C, "base_url"),
    serve: Annotated[ServeKind, option(C, "serve")] = default(C, "serve"),
    serve_port: Annotated[int, option(C, "serve_port")] = default(C, "serve_port"),
    proposer_network: Annotated[ProposerNetwork | None, option(C, "proposer_network")] = default(C, "proposer_network"),
    method: Annotated[Method, option(C, "method")] = default(C, "method"),
    proposals_per_step: Annotated[int, option(C, "proposals_per_step", min=1)] = default(C, "proposals_per_step"),
    seed_cases: Annotated[Path | None, option(C, "seed_cases_dir", "--seed-cases")] = None,
    benchmark: Annotated[Path | None, option(C, "benchmark_dir", "--benchmark")] = None,
    benchmark_tasks: Annotated[int | None, option(C, "benchmark_tasks", min=1)] = default(C, "benchmark_tasks"),
    benchmark_rollouts: Annotated[int, option(C, "benchmark_rollouts", min=1)] = default(C, "benchmark_rollouts"),
    static: Annotated[Path | None, option(C, "static_dir", "--static")] = default(C, "static_dir"),
    proposer_training: Annotated[Switch, option(C, "proposer_training")] = Switch.ON
    if default(C, "proposer_training")
    else Switch.OFF,
    accept_undetermined: Annotated[bool, option(C, "accept_undetermined", "--accept-undetermined")] = default(
        C, "accept_undetermined"
    ),
    trainer: Annotated[str, option(C, "trainer")] = default(C, "trainer"),
    init_policy: Annotated[Path | None, option(C, "init_policy", "--init-policy")] = default(C, "init_policy"),
    env: Annotated[str, option(C, "env")] = default(C, "env"),
    ray: Annotated[str | None, option(C, "ray", "--ray")] = default(C, "ray"),
    n_concurrent: Annotated[int, option(C, "n_concurrent", "-n", min=1)] = default(C, "n_concurrent"),
    seed: Annotated[int, option(C, "seed", min=0)] = default(C, "seed"),
    report_to: Annotated[ReportTo, option(C, "report_to", "--report-to")] = default(C, "report_to"),
    min_accepted: Annotated[
        int,
        typer.Option(
            "--min-accepted",
            min=0,
            help="Exit 1 when the run accepted fewer proposed tasks than this (the main job uses 1: a run that "
            "accepted nothing did nothing).",
        ),
    ] = 0,
    out: Annotated[Path, option(C, "out_dir", "--out")] = default(C, "out_dir"),
    log_format: Annotated[
        LogFormat,
        typer.Option(
            help="How the run's events reach stderr: text a person reads (one event a line where stderr is not a "
            "terminal) or json, one object a line with the event's fields."
        ),
    ] = LogFormat.TEXT,
    table: Annotated[
        TableFormat, typer.Option(help="The per-step summary: a text table (stderr), or csv or json on stdout.")
    ] = TableFormat.TEXT,
) -> None:
    """Failures -> proposer -> accepted tasks -> grouped rollouts -> training, resumable from the store."""
    from autoenv.flywheel.loop import Flywheel  # the stages, imported when a run starts (not for --help)
    from autoenv.report.trackers import require as require_tracker
    from autoenv.store.db import Store
    from autoenv.trials.runner import quiet_harbor_logs

    setup_logging(log_format, console)
    if static is not None and not static.is_dir():
        fail(f"{static}: --static must be a folder of tasks")
    if init_policy is not None and not trainer.startswith("trl") and serve == ServeKind.NONE:
        fail(f"--init-policy {init_policy}: only the trl trainer and --serve use a policy's weights; this run would "
             "ignore it (add --trainer trl and/or --serve cpu)")  # fmt: skip
    if serve != ServeKind.NONE and (model or base_url):
        fail("--serve serves the run's own checkpoints; it does not go with --model/--base-url")
    given = dict(
        run=run,
        steps=steps,
        group_size=group_size,
        tasks_per_step=tasks_per_step,
        solver=solver,
        proposer_policy=policy,
        model=model,
        base_url=base_url,
        serve=serve,
        serve_port=serve_port,
        proposer_network=proposer_network,
        method=method,
        proposals_per_step=proposals_per_step,
        static_dir=static,
        proposer_training=proposer_training == Switch.ON,
        accept_undetermined=accept_undetermined,
        trainer=trainer,
        init_policy=init_policy,
        env=env,
        ray=ray,
        n_concurrent=n_concurrent,
        seed=seed,
        report_to=report_to,
        out_dir=out,
        benchmark_tasks=benchmark_tasks,
        benchmark_rollouts=benchmark_rollouts,
    )
    if seed_cases is not None:  # otherwise the config's default (the bundled examples)
        given["seed_cases_dir"] = seed_cases
    if benchmark is not None:
        given["benchmark_dir"] = benchmark
    try:
        config = FlywheelConfig(**given)
    except ValidationError as exc:  # the config's own checks (--method evolve is not a flywheel method), as said
        fail("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors()))
    try:
        require_tracker(config.report_to)  # before any step runs: a run must not end up half-tracked
    except MachineError as exc:
        fail(str(exc))
    if config.proposer_policy == ProposerPolicy.OPENAI and "policy=scripted" in config.solver_spec.replace(" ", ""):
        logging.getLogger("autoenv.cli").warning(
            "a model proposes but the scripted solver calibrates: it attempts only tasks of the bundled families, so "
            "calibration of any other task is inconclusive (rewarded by validity alone)",
            extra={"event": "warning"},
        )
    require_machine(env)
    quiet_harbor_logs()
    store = Store(db)
    with _progress(log_format) as progress:
        bar = progress.add_task("flywheel", total=steps, note="") if progress is not None else None

        def on_event(event: str, data: dict) -> None:
            # the events themselves are logged by the flywheel (autoenv.flywheel.events); the bar shows the latest
            if progress is None or bar is None:
                return
            if event == "step_done":  # the full sentence is in the log line above the bar
                progress.update(bar, advance=1, note=f"step {data['step']} done")
            elif event != "warning":
                progress.update(bar, note=describe(event, data))

        try:
            reports = asyncio.run(Flywheel(config, store, progress=on_event).run())
        except SandboxFault as exc:  # the machine, not the tasks: nothing was recorded as invalid
            fail_with(exc, env=env)
        except TaskError as exc:  # an input of the run is wrong (e.g. --init-policy is not a model folder)
            fail_with(exc)
        except (RuntimeError, RunConfigMismatch, FileNotFoundError) as exc:
            fail(str(exc), code=2 if isinstance(exc, RunConfigMismatch | FileNotFoundError) else 1)
    summary_table(reports, f"flywheel run {run} ({config.baseline}; {config.policies} policy)").show(table, console)
    log = logging.getLogger("autoenv.cli")
    log.info(f"store: {store.url}", extra={"event": "store", "fields": {"url": store.url}})
    accepted = sum(r.accepted for r in reports)
    if accepted < min_accepted:
        fail(
            f"the run accepted {accepted} proposed task(s), fewer than --min-accepted {min_accepted}: the proposals' "
            f"reasons are in the store ({store.url}); `autoenv doctor` checks the machine"
        )


STEP_COLUMNS = (
    Column("step"),
    Column("policy", justify="left"),
    Column("proposed"),
    Column("accepted"),
    Column("groups"),
    Column("useful", text=lambda v: f"{v:.2f}"),
    Column("collect s", text=lambda v: f"{v:.1f}"),
    Column("train s", text=lambda v: f"{v:.1f}"),
    Column("bench"),
)


def summary_table(reports: list, title: str) -> ResultTable:
    """One row per step: proposals and accepted tasks, solver groups and the useful share, seconds, benchmark."""
    rows = [
        (
            r.step,
            f"v{r.policy_version_in}->v{r.policy_version_out}",
            r.proposals,
            r.accepted,
            r.groups,
            r.useful_group_rate,
            r.collect_sec,
            r.train_sec,
            r.benchmark_score,
        )
        for r in reports
    ]
    return ResultTable(title, STEP_COLUMNS, rows)


@contextmanager
def _progress(log_format: LogFormat) -> Iterator[Progress | None]:
    """A live bar only in a terminal with text logs; elsewhere the log lines are the progress."""
    if log_format != LogFormat.TEXT or not console.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
        console=console,
    ) as progress:
        yield progress


def register(app: typer.Typer) -> None:
    app.command("flywheel")(flywheel)
