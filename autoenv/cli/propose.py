"""``autoenv propose`` and ``autoenv seed-cases``: from failures to new, validated tasks."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from autoenv.cli.common import (
    console,
    default,
    fail,
    fail_with,
    fields_of,
    option,
    print_json,
    progress_bar,
    require_machine,
)
from autoenv.errors import SandboxFault
from autoenv.proposer.models import ProposeOptions, ProposeSummary, SeedCase
from autoenv.vocab import Method, ProposerNetwork, ProposerPolicy

P = ProposeOptions


def propose(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Accepted tasks are written here (rejected ones under rejected/), with summary.json."
        ),
    ],
    seed_case: Annotated[
        Path | None,
        typer.Option("--seed-case", "-s", help="Seed case file (YAML or JSON); every method but evolve needs one."),
    ] = None,
    method: Annotated[Method, option(P, "method", "--method", "-m")] = default(P, "method"),
    parent: Annotated[Path | None, option(P, "parent", "--from")] = default(P, "parent"),
    compose: Annotated[Path | None, option(P, "compose", "--with")] = default(P, "compose"),
    policy: Annotated[ProposerPolicy, option(P, "policy", "--policy", "-p")] = default(P, "policy"),
    attempts: Annotated[int, option(P, "attempts", "--attempts", "-n", min=1)] = default(P, "attempts"),
    workspace: Annotated[
        Path | None, typer.Option(help="Persistent proposer workspace (default: OUT/../workspace).")
    ] = None,
    env: Annotated[str, option(P, "env", "--env", "-e")] = default(P, "env"),
    solver: Annotated[str | None, option(P, "solver")] = default(P, "solver"),
    rollouts: Annotated[int, option(P, "rollouts", "-k", "--rollouts", min=1)] = default(P, "rollouts"),
    max_rounds: Annotated[int, option(P, "max_rounds", min=1)] = default(P, "max_rounds"),
    repair_rounds: Annotated[int, option(P, "repair_rounds", min=0)] = default(P, "repair_rounds"),
    seed: Annotated[int, option(P, "seed")] = default(P, "seed"),
    flaw_rate: Annotated[float, option(P, "flaw_rate", min=0.0, max=1.0)] = default(P, "flaw_rate"),
    model: Annotated[str | None, option(P, "model")] = default(P, "model"),
    base_url: Annotated[str | None, option(P, "base_url")] = default(P, "base_url"),
    network: Annotated[ProposerNetwork | None, option(P, "network")] = default(P, "network"),
    level: Annotated[str | None, option(P, "level", "--level")] = default(P, "level"),
    db: Annotated[
        str | None,
        typer.Option(
            help="Store (SQLite path or SQLAlchemy URL) that records every attempt and task, an evolved one with "
            "its parent (run 'propose')."
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Generate tasks from a seed case (or, with --method evolve, a harder variant of --from); only tasks that pass
    validation and calibration are accepted."""
    given = fields_of(ProposeOptions, locals())  # every option but the paths and --json is a ProposeOptions field
    from autoenv.proposer.propose import propose_async
    from autoenv.sandbox.backends import UnknownBackend, environment_config
    from autoenv.trials import runner

    try:
        options = ProposeOptions(**given)
    except ValidationError as exc:  # the model's own checks, said as they are
        fail("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors()))
    case = _material(options, seed_case)
    try:
        environment_config(env)
    except UnknownBackend as exc:
        fail(str(exc))
    require_machine(env, json_out=json_out)
    try:
        from autoenv.families.registry import family_for

        if options.policy == ProposerPolicy.SCRIPTED and options.method != Method.EVOLVE:
            family = family_for(case)
            if options.level is not None:
                from autoenv.proposer.scripted import pinned_level

                if not family.levels:
                    raise ValueError(f"--level {options.level}: family {family.name} has one level (no ladder)")
                pinned_level(family, options.level)
    except ValueError as exc:
        fail(f"{seed_case}: {exc}")
    if (warning := options.mismatch_warning()) is not None:
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    runner.quiet_harbor_logs()
    out = out.resolve()
    workspace = (workspace or out.parent / "workspace").resolve()
    summary = _run_with_progress(
        case, options, out=out, workspace=workspace, quiet=json_out, propose_async=propose_async
    )
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "summary.json"
    summary_path.write_text(summary.model_dump_json(indent=2))
    if db is not None:
        _record(db, summary, seed=options.seed)
    if json_out:
        print_json(json.loads(summary.model_dump_json()))
    else:
        _print_summary(summary, summary_path, workspace)
    if not summary.accepted_tasks:
        raise typer.Exit(1)


def _material(options: ProposeOptions, seed_case: Path | None) -> SeedCase:
    """What the proposer starts from: the seed case, or with --method evolve the task --from names (read and, for
    the scripted proposer, checked to have a level above it, before anything runs)."""
    if options.method != Method.EVOLVE:
        if seed_case is None:
            fail(f"--method {options.method} needs --seed-case FILE (--method evolve takes --from TASK_DIR instead)")
        try:
            return SeedCase.load(seed_case)
        except ValueError as exc:
            fail(_one_line(str(exc)))
    if seed_case is not None:
        fail("--method evolve starts from the task --from names: drop --seed-case")
    from autoenv.proposer.evolve import Evolution

    try:
        return Evolution.plan(options).parent.case()
    except ValueError as exc:
        fail(str(exc))


def _record(db: str, summary: ProposeSummary, *, seed: int) -> None:
    """Every attempt of the run into the store ``db`` (run 'propose', step 0), keyed so a rerun adds nothing twice."""
    from autoenv.proposer.stage import record_attempt
    from autoenv.store.db import Store

    store = Store(db)
    try:
        for r in summary.records:
            key = f"{r.seed_case}/{r.method}/s{seed}/a{r.attempt}/{r.task_hash or '-'}"
            record_attempt(store, r, run="propose", step=0, key=key)
    finally:
        store.close()


def _one_line(text: str) -> str:
    """A load error as one line: pydantic's field-by-field report, or the first line of a YAML error."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return text
    head = lines[0]
    if " validation error" not in head:
        where = re.findall(r"line (\d+), column (\d+)", text)
        return head.rstrip(":") + (f" (line {where[-1][0]}, column {where[-1][1]})" if where else "")
    problems = []
    for field, detail in zip(lines[1:], lines[2:]):
        if detail.startswith(
            ("Field required", "Input should", "Value error", "String should")
        ) and not field.startswith("For further"):
            problems.append(f"{field}: {detail.split(' [')[0]}")
    return head.split(" validation error")[0].rsplit(" ", 1)[0] + " " + "; ".join(problems) if problems else head


def _run_with_progress(
    case: SeedCase, options: ProposeOptions, *, out: Path, workspace: Path, quiet: bool, propose_async: Any
) -> ProposeSummary:
    with progress_bar("[bold]propose", "status", transient=quiet) as progress:
        bar = progress.add_task(
            "propose", total=options.attempts, status=f"{case.id} ({options.method}, {options.policy})"
        )

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "attempt":
                progress.update(bar, status=f"attempt {data['attempt'] + 1}: drafting")
            elif kind == "judge":
                progress.update(bar, status=f"{data['task']}: validating (round {data['round']})")
            elif kind == "calibrate":
                progress.update(bar, status=f"{data['task']}: calibrating")
            elif kind == "attempt_done":
                verdict = "accepted" if data["accepted"] else ("valid, not calibrated" if data["valid"] else "rejected")
                progress.update(bar, advance=1, status=f"{data['task'] or '-'}: {verdict}")

        try:
            return asyncio.run(propose_async(case, options, out_dir=out, workspace=workspace, on_event=on_event))
        except SandboxFault as exc:  # the machine, not the proposer: no attempt was recorded for it
            fail_with(exc, env=options.env)
        except ValueError as exc:
            fail(str(exc))


def _print_summary(summary: ProposeSummary, path: Path, workspace: Path) -> None:
    table = Table(title=f"{summary.seed_case}: {summary.method} ({summary.proposer})", title_justify="left")
    for column in ("#", "task", "valid", "calibrated", "pass rate", "r_P", "rounds", "files", "seconds", "reason"):
        table.add_column(column)
    for r in summary.records:
        reason = (r.reason or "").splitlines()[0][:90] if r.reason else ""
        table.add_row(
            str(r.attempt),
            Path(r.task_dir).name if r.task_dir else "-",
            "yes" if r.valid else "[red]no[/red]",
            "yes" if r.calibrated else "no",
            "-" if r.pass_rate is None else f"{r.pass_rate:.2f}",
            f"{r.reward:.2f}",
            str(r.rounds),
            str(r.n_files or "-"),
            f"{r.duration_sec:.1f}",
            escape(reason),
        )
    console.print(table)
    for parent in sorted({(r.parent_name, r.parent_hash) for r in summary.records if r.parent_name}):
        console.print(f"evolved from {parent[0]} (content hash {parent[1]})", highlight=False)
    console.print(
        f"accepted {len(summary.accepted_tasks)}/{summary.attempts} (valid {summary.valid}, calibrated "
        f"{summary.calibrated}) "
        f"in {summary.duration_sec:.1f}s -> {path}; workspace {workspace}",
        highlight=False,
    )


def seed_cases(
    trials: Annotated[
        Path, typer.Argument(help="A Harbor trial directory, or a folder of them (searched recursively).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where the seed-case YAML files are written.")] = Path("runs")
    / "seed_cases",
    agent: Annotated[
        list[str] | None,
        typer.Option("--agent", "-a", help="Only trials of this agent (repeatable), e.g. autoenv-terminal."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the seed cases as JSON.")] = False,
) -> None:
    """Write one seed case per failed trial (reward below 1, no reward, or an exception)."""
    from autoenv.proposer.seeds import extract_seed_cases, trial_dirs, write_seed_cases

    if not trials.exists():
        fail(f"{trials}: no such file or directory")
    if not any(True for _ in trial_dirs(trials)):
        fail(f"{trials}: no Harbor trial directories found (folders with result.json and config.json)")
    cases = extract_seed_cases(trials, agents=set(agent) if agent else None)
    paths = write_seed_cases(cases, out)
    if json_out:
        print_json([json.loads(c.model_dump_json(exclude_none=True)) for c in cases])
        return
    table = Table(title=f"seed cases from {trials}", title_justify="left")
    for column in ("id", "reward", "failure mode"):
        table.add_column(column)
    for case in cases:
        table.add_row(case.id, "-" if case.reward is None else f"{case.reward:g}", escape(case.failure_mode[:100]))
    console.print(table)
    console.print(
        f"{len(cases)} seed case(s) from failed trials -> {out}" + ("" if paths else " (no failed trials)"),
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("propose")(propose)
    app.command("seed-cases")(seed_cases)
