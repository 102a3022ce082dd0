"""``autoenv task check``: lint tasks before spending sandboxes on them."""

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


def register(app: typer.Typer) -> None:
    app.add_typer(task_app, name="task")
