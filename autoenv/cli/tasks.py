"""``autoenv task check``: lint tasks before spending sandboxes on them; ``autoenv task harden``: make a task whose
tests import the agent's code safe to train on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, print_json

task_app = typer.Typer(no_args_is_help=True, help="Inspect Harbor tasks.")


@task_app.command("check")
def check(
    paths: Annotated[list[Path], typer.Argument(help="Task folders, or dataset folders holding tasks.")],
    env: Annotated[
        str, typer.Option(help="Backend the task must run on (local adds Dockerfile-subset checks).")
    ] = "local",
    json_out: Annotated[bool, typer.Option("--json", help="Print problems as JSON.")] = False,
    no_oracle: Annotated[
        bool, typer.Option("--no-oracle", help="A missing reference solution is a note, not an error.")
    ] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings make a task ill formed too.")] = False,
) -> None:
    """Print every finding with its level (error, warning, note); exit 1 when there are errors (or warnings with
    --strict)."""
    from autoenv.taskfmt.check import check_task, errors, find_tasks

    problems = []
    checked = 0
    for path in paths:
        tasks = find_tasks(path) or [path]
        for task in tasks:
            checked += 1
            problems.extend(check_task(task, env=env, oracle=not no_oracle))
    failing = errors(problems, strict=strict)
    if json_out:
        print_json(
            {"checked": checked, "errors": len(failing), "problems": [p.model_dump(mode="json") for p in problems]}
        )
    else:
        for problem in problems:
            typer.echo(str(problem))
        if not failing:
            console.print(
                f"[green]ok[/green]: {checked} task(s) well formed"
                + (f" ({len(problems)} warning(s)/note(s))" if problems else "")
            )
    raise typer.Exit(1 if failing else 0)


@task_app.command("harden")
def harden(
    src: Annotated[Path, typer.Argument(help="The task folder to harden (left as it is).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write the hardened task (default: SRC-hardened).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Rewrite a task so its own tests run the agent's code out of the judge's process: pytest as the grader through
    the broker (tests/agentcall.py), every module of the agent's folders served from a process of nobody's, its
    programs run through run_agent. Tests the broker cannot serve (patching the agent's code, passing it the tests'
    callables, reading its source) fail the command with file and line, and nothing is written (exit 2). The inputs
    the instruction names that the verifier would read from the agent's sandbox are put back as the image ships them
    before the tests run (a task that needs only that, pytest or not, gets only that)."""
    from autoenv.cli.common import fail_with
    from autoenv.errors import TaskError
    from autoenv.taskfmt.harden import harden as harden_task

    try:
        done = harden_task(src, out)
    except TaskError as exc:
        fail_with(exc, task=src, json_out=json_out)
    if json_out:
        print_json(done.model_dump(mode="json"))
        return
    what = [f"the agent's folders: {', '.join(done.roots)}; tests: {', '.join(done.tests)}"] if done.roots else []
    if done.inputs:
        what.append(f"inputs restored from the image before the tests: {', '.join(done.inputs)}")
    console.print(
        f"[green]hardened[/green]: {done.task} ({'; '.join(what)}); validate it with `autoenv validate {done.task}`",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(task_app, name="task")
