"""``autoenv validate`` and ``autoenv calibrate``: is a task fair, and is it learnable?"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from autoenv.cli.common import console, fail, fail_with, print_json, progress_bar, require_machine

if TYPE_CHECKING:  # the library is imported by the commands that run, not by `autoenv --help`
    from autoenv.validate.calibration import CalibrationReport
    from autoenv.validate.validation import ValidationReport

EnvOpt = Annotated[
    str,
    typer.Option(
        "--env", "-e", help="local (no container engine), or a Harbor environment: docker, podman, modal, ..."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the full report(s) as JSON.")]
ForceOpt = Annotated[
    bool, typer.Option("--force", help="Run again even if this exact task content has a recorded verdict.")
]
ConcurrencyOpt = Annotated[
    int, typer.Option("-n", "--n-concurrent", min=1, help="Trials run at once (a dataset: tasks validated at once).")
]
#: Trials each validation of a dataset audit runs at once (``-n`` counts the tasks then, 2 by default).
AUDIT_TRIALS = 2
AUDIT_JOBS = 2
ValidateConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "-n",
        "--n-concurrent",
        min=1,
        help="Trials of the task run at once (default: one more than the cores, at most 5); for a dataset, tasks "
        "validated at once (default 2).",
    ),
]
ThresholdOpt = Annotated[float, typer.Option(help="Reward that counts as a pass (below 1 for graded rewards).")]

COLOURS = {"pass": "green", "FAIL": "red", "skip": "yellow"}


def _check_env(env: str, json_out: bool = False) -> None:
    from autoenv.sandbox.backends import UnknownBackend, environment_config

    try:
        environment_config(env)
    except UnknownBackend as exc:
        fail(str(exc))
    require_machine(env, json_out=json_out)


def _print_validation(report: ValidationReport) -> None:
    from autoenv.taskfmt.check import Level
    from autoenv.validate import cache

    title = f"{report.task_name} ({report.settings.env})" + (" (recorded verdict)" if report.cached else "")
    table = Table(title=title, title_justify="left")
    for column in ("check", "verdict", "evidence"):
        table.add_column(column)
    for check in report.checks:
        colour = COLOURS[check.status]
        table.add_row(check.name, f"[{colour}]{check.status}[/{colour}]", escape(check.summary))
    console.print(table)
    for check in report.failed:
        console.print(f"[red]{check.name}[/red] error: {escape(check.feedback)}", highlight=False, soft_wrap=True)
        console.print()
    for level, colour in ((Level.WARNING, "yellow"), (Level.NOTE, "cyan")):
        for finding in report.findings(level):
            console.print(f"[{colour}]{escape(str(finding))}[/{colour}]", highlight=False, soft_wrap=True)
    for reason in report.undetermined:
        console.print(f"[magenta]undetermined: {escape(str(reason))}[/magenta]", highlight=False, soft_wrap=True)
    verdict = {"valid": "[green]valid[/green]", "undetermined": "[magenta]undetermined[/magenta]"}.get(
        report.verdict, "[red]not valid[/red]"
    )
    console.print(
        f"{report.task_name}: {verdict} ({report.duration_sec:.1f}s) -> {cache.record_path(report.task, 'validation')}"
    )


def validate(
    path: Annotated[Path, typer.Argument(help="A Harbor task folder, or a dataset folder of tasks.")],
    env: EnvOpt = "local",
    repeats: Annotated[
        int, typer.Option("-r", "--repeats", min=1, help="Oracle runs; all must pass with the same verdict.")
    ] = 2,
    threshold: ThresholdOpt = 1.0,
    margin: Annotated[
        float, typer.Option(help="Share of the agent/verifier time limits the reference run may use.")
    ] = 0.5,
    n_concurrent: ValidateConcurrencyOpt = None,
    force: ForceOpt = False,
    trials_dir: Annotated[Path, typer.Option(help="Where validation trials are written.")] = Path("runs") / "validate",
    json_out: JsonOpt = False,
    no_oracle: Annotated[
        bool,
        typer.Option(
            "--no-oracle",
            help="Validate without the reference solution (datasets that ship none): "
            "oracle, determinism, partial-solution and timing checks are reported as not run, and a task that "
            "passes every other check is 'undetermined' (no flaw found, solvability unknown), never 'valid'.",
        ),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Warnings (lint style, unpinned versions, unknown fields, tests reading agent-editable inputs) "
            "make a task invalid too, and so does an undetermined verdict.",
        ),
    ] = False,
    oracle_agent: Annotated[
        str | None,
        typer.Option(
            "--oracle-agent",
            help="Without a reference solution (--no-oracle, or no solution/): k attempts by this agent "
            "(a solver spec, e.g. terminal:policy=openai,model=M, or terminal:policy=scripted,success_rate=1 for the "
            "families' tasks); a passing attempt shows the task solvable (it can be valid) and, replayed as a script, "
            "is the reference the checks that rerun a solution use; none is 'unsolved in k tries' (undetermined).",
        ),
    ] = None,
    oracle_attempts: Annotated[
        int, typer.Option("--oracle-attempts", min=1, help="Attempts of --oracle-agent (k).")
    ] = 3,
    all_checks: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Run every check even after one failed (by default validation stops once the cheaper checks "
            "find an error: structure, build, then the reference solution and doing nothing, then the rest).",
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray", help="A dataset: validate each task as a Ray task at this address (auto, ray://head:10001, local)."
        ),
    ] = None,
    db: Annotated[
        str, typer.Option(help="A dataset: the store that gets every verdict (`autoenv report --db` shows the audit).")
    ] = "runs/audit.db",
    harden: Annotated[
        Path | None,
        typer.Option(
            "--harden",
            help="Harden each task whose tests import the agent's code, or whose verifier would read the agent's "
            "copy of a named input, into this folder first (`autoenv task harden`) and validate the hardened copy; a "
            "task that cannot be hardened is validated as it is, the reason printed.",
        ),
    ] = None,
) -> None:
    """Run every validation check that can run; exit 0 if the task(s) are valid, 1 if not (invalid or undetermined).

    The verdict is valid, invalid, or undetermined: no flaw found but no solution ran (--no-oracle, no
    solution/), or this machine cannot judge the task (a stand-in base lacks a program the run called, the
    network the task uses is off here, a package the build needs is unreachable); each undetermined verdict
    says why and what would decide it.

    A dataset folder is audited: -n tasks at once (or on Ray with --ray), each verdict recorded as it
    comes (a killed audit resumes without running finished tasks again), then a summary: how many are
    sound, which checks fail how often, the worst offenders; every verdict also goes into --db for
    `autoenv report`.

    When validation cannot run at all the exit code says why: 2 the task is wrong beyond checking
    (task.toml), 3 this backend cannot run it, 4 the sandbox failed, 5 a model endpoint failed, 70 a bug.

    Only errors make a task invalid; warnings (and, with --strict, errors too) and notes on how the
    task is run are printed after the table and carried in the JSON report with their level.
    """
    from autoenv.taskfmt.check import find_tasks, is_task_dir
    from autoenv.trials import runner
    from autoenv.validate.validation import TRIALS_AT_ONCE, avalidate_task

    tasks = find_tasks(path)
    if not tasks:
        if path.exists() and not is_task_dir(path) and path.is_dir():
            fail(f"{path}: no Harbor tasks found (folders with task.toml)")
        tasks = [path]  # let the structure check say what is wrong with it
    _check_env(env)
    if harden is not None:
        tasks = _harden(tasks, harden, json_out=json_out)
    if not 0 < margin <= 1:
        fail(f"--margin must be in (0, 1], got {margin}")
    if oracle_agent is not None:
        from autoenv.spec import SolverSpec

        try:
            SolverSpec.parse(oracle_agent)
        except ValueError as exc:
            fail(f"--oracle-agent {oracle_agent}: {exc}")
    runner.quiet_harbor_logs()
    settings = dict(
        env=env,
        repeats=repeats,
        threshold=threshold,
        timeout_margin=margin,
        force=force,
        trials_dir=trials_dir,
        oracle=not no_oracle,
        strict=strict,
        all_checks=all_checks,
        oracle_agent=oracle_agent,
        oracle_attempts=oracle_attempts,
    )
    if path.is_dir() and not is_task_dir(path):  # a dataset folder: an audit
        _audit(
            path, tasks, jobs=n_concurrent or AUDIT_JOBS, ray_address=ray_address, db=db, json_out=json_out, **settings
        )
    task = tasks[0]
    try:
        report = asyncio.run(avalidate_task(task, n_concurrent=n_concurrent or TRIALS_AT_ONCE, **settings))
    except Exception as exc:  # noqa: BLE001 - the backend, the infrastructure or a bug, not a verdict on the task
        fail_with(exc, task=task, env=env, json_out=json_out)
    if json_out:
        print_json(report.model_dump(mode="json"))
    else:
        _print_validation(report)
    raise typer.Exit(0 if report.valid else 1)


def _harden(tasks: list[Path], out: Path, *, json_out: bool) -> list[Path]:
    """``--harden``: the tasks to validate, each hardened where it needs it and can be (what happened printed)."""
    from autoenv.errors import TaskError
    from autoenv.taskfmt.harden import harden_tasks

    try:
        outcomes = harden_tasks(tasks, out)
    except TaskError as exc:
        fail_with(exc, task=out, json_out=json_out)
    for o in outcomes:
        if o.hardened:
            console.print(f"hardened: {o.task.name} -> {o.validated}", highlight=False, soft_wrap=True)
        elif o.reason != "nothing to harden":
            console.print(
                f"[yellow]not hardened[/yellow]: {o.task.name}: {escape(o.reason)} (validated as it is)",
                highlight=False,
                soft_wrap=True,
            )
    hardened = sum(o.hardened for o in outcomes)
    failed = sum(not o.hardened and o.reason != "nothing to harden" for o in outcomes)
    console.print(
        f"harden: {hardened} hardened, {failed} could not be, {len(outcomes) - hardened - failed} as they were"
    )
    return [o.validated for o in outcomes]


def _audit(path: Path, tasks: list[Path], *, jobs: int, ray_address: str | None, db: str, json_out: bool, **kw) -> None:
    """Audit a dataset (see :mod:`autoenv.validate.audit`); exits 0 if every task is valid, else 1."""
    from autoenv.store.db import Store
    from autoenv.validate.audit import aaudit
    from autoenv.validate.store_sync import store_hook

    store = Store(db)
    hook = store_hook(store)  # every verdict, fresh, recorded before or from a Ray worker, as it comes
    progress = progress_bar("audit", "last", transient=False)

    def done(entry, report) -> None:
        mark = "not validated" if entry.not_validated else str(entry.verdict)
        detail = ", ".join(entry.failed) if entry.failed else (entry.not_validated or "")
        progress.update(bar, advance=1, last=f"{entry.task_name}: {mark}{': ' + detail if detail else ''}")
        if report is not None:
            hook("validation", Path(report.task), report)

    try:
        with progress:
            bar = progress.add_task("audit", total=len(tasks), last="")
            audit = asyncio.run(
                aaudit(
                    tasks,
                    dataset=path,
                    jobs=jobs,
                    ray_address=ray_address,
                    on_done=done,
                    n_concurrent=AUDIT_TRIALS,
                    **kw,
                )
            )
    except Exception as exc:  # noqa: BLE001 - a fault that is not one task's: the sandbox, the backend, a bug
        fail_with(exc, task=path, env=kw.get("env"), json_out=json_out)
    finally:
        store.close()
    if json_out:
        print_json({"summary": audit.summary(), **audit.model_dump(mode="json")})
    else:
        _print_audit(audit, db)
    raise typer.Exit(0 if audit.n_valid == len(audit.entries) else 1)


def _print_audit(audit, db: str) -> None:
    s = audit.summary()
    console.print(
        f"[bold]{escape(audit.dataset)}[/bold]: {s['tasks']} tasks, [green]{s['valid']} valid[/green], "
        f"[red]{s['invalid']} invalid[/red], [magenta]{s['undetermined']} undetermined[/magenta]"
        + "".join(f" ({n} {why})" for why, n in s["undetermined_by_reason"].items())
        + f", {s['not_validated']} could not be validated "
        f"({s['recorded_before']} verdicts recorded before, {audit.duration_sec:.0f}s)"
    )
    if s["failures_by_check"]:
        table = Table(title="failures by check", title_justify="left")
        table.add_column("check")
        table.add_column("tasks", justify="right")
        table.add_column("share", justify="right")
        for check, n in s["failures_by_check"].items():
            table.add_row(check, str(n), f"{n / s['tasks']:.0%}")
        console.print(table)
    worst = audit.worst()
    if worst:
        table = Table(title="worst offenders", title_justify="left")
        for column in ("task", "failed", "first finding"):
            table.add_column(column)
        for e in worst:
            first = e.not_validated or (e.errors[0] if e.errors else "")
            table.add_row(e.task_name, ", ".join(e.failed) or "-", escape(first[:160]))
        console.print(table)
    console.print(f"verdicts: each task's .autoenv/validation.json; store: {db} (`autoenv report --db {db}`)")


def _print_calibration(report: CalibrationReport, r_p: float | None) -> None:
    s = report.settings
    colour = "green" if report.accepted else "red"
    rate = "n/a" if report.pass_rate is None else f"{report.pass_rate:.3f}"
    lines = [
        f"{report.task_name}: solver {s.solver}, {s.rollouts} rollouts on {s.env}"
        + (" (recorded verdict)" if report.cached else ""),
        f"  passed      {report.passes}/{report.n}"
        + (f" ({report.n_excluded} left out: infrastructure errors)" if report.n_excluded else ""),
        f"  pass rate   {rate}  95% Wilson CI [{report.ci_low:.3f}, {report.ci_high:.3f}]",
        f"  mean turns  {'n/a' if report.mean_turns is None else f'{report.mean_turns:.1f}'}",
        f"  band        {s.band_text()}",
        f"  verdict     [{colour}]{'accepted' if report.accepted else 'rejected'}[/{colour}]: {escape(report.verdict)}",
    ]
    if r_p is not None:
        lines.append(f"  r_P         {r_p:.3f} (with the recorded validation)")
    console.print("\n".join(lines), highlight=False)


def calibrate(
    path: Annotated[Path, typer.Argument(help="A Harbor task folder.")],
    solver: Annotated[
        str,
        typer.Option(
            "--solver",
            "-s",
            help="oracle, nop, coin:p=0.5, terminal:policy=scripted,success_rate=0.5, or module:Class[:k=v,...].",
        ),
    ],
    rollouts: Annotated[int, typer.Option("--rollouts", "-k", min=1, help="Number of solver rollouts (K).")],
    band: Annotated[
        str | None,
        typer.Option(help="Accept when LO <= pass rate <= HI, e.g. 0.2,0.8 (default: at least one pass and one fail)."),
    ] = None,
    env: EnvOpt = "local",
    threshold: ThresholdOpt = 1.0,
    seed: Annotated[int, typer.Option(help="Base seed; rollout i gets seed+i.")] = 0,
    n_concurrent: ConcurrencyOpt = 2,
    force: ForceOpt = False,
    trials_dir: Annotated[Path, typer.Option(help="Where calibration trials are written.")] = Path("runs")
    / "calibrate",
    json_out: JsonOpt = False,
) -> None:
    """Run K solver rollouts; report pass rate, 95% Wilson interval, mean turns and the verdict (exit 0 accepted, 1
    rejected)."""
    from autoenv.spec import SolverSpec
    from autoenv.taskfmt.check import is_task_dir
    from autoenv.trials import runner
    from autoenv.validate.calibration import acalibrate, parse_band
    from autoenv.validate.reward import proposer_reward
    from autoenv.validate.validation import cached_validation

    if not is_task_dir(path):
        fail(f"{path}: not a task folder (no task.toml)")
    try:
        SolverSpec.parse(solver)
        band_range = parse_band(band)
    except ValueError as exc:
        fail(str(exc))
    _check_env(env)
    runner.quiet_harbor_logs()
    with progress_bar("[bold]rollouts", "last", transient=True) as progress:
        bar = progress.add_task("rollouts", total=rollouts, last="")

        def done(outcome: runner.TrialOutcome) -> None:
            progress.update(
                bar, advance=1, last=f"reward {outcome.reward}" + (f" ({outcome.error})" if outcome.error else "")
            )

        try:
            report = asyncio.run(
                acalibrate(
                    path,
                    solver=solver,
                    rollouts=rollouts,
                    band=band_range,
                    threshold=threshold,
                    env=env,
                    seed=seed,
                    n_concurrent=n_concurrent,
                    force=force,
                    trials_dir=trials_dir,
                    on_done=done,
                )
            )
        except Exception as exc:  # noqa: BLE001 - the CLI boundary: said for a user by fail_with
            fail_with(exc, task=path, env=env, json_out=json_out)
    validation = cached_validation(path)
    r_p = proposer_reward(validation, report) if validation is not None else None
    if json_out:
        print_json(report.model_dump(mode="json") | {"proposer_reward": r_p})
    else:
        _print_calibration(report, r_p)
    raise typer.Exit(0 if report.accepted else 1)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("calibrate")(calibrate)
