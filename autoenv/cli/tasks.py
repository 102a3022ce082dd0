"""``autoenv task check``: lint tasks before spending sandboxes on them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, print_json
from autoenv.taskfmt.check import check_task, find_tasks

task_app = typer.Typer(no_args_is_help=True, help="Inspect Harbor tasks.")


@task_app.command("check")
def check(
    paths: Annotated[list[Path], typer.Argument(help="Task folders, or dataset folders holding tasks.")],
    env: Annotated[str, typer.Option(help="Backend the task must run on (local adds Dockerfile-subset checks).")] = "local",
    json_out: Annotated[bool, typer.Option("--json", help="Print problems as JSON.")] = False,
) -> None:
    """Exit 0 when every task is well formed; otherwise print one line per problem and exit 1."""
    problems = []
    checked = 0
    for path in paths:
        tasks = find_tasks(path) or [path]
        for task in tasks:
            checked += 1
            problems.extend(check_task(task, env=env))
    if json_out:
        print_json({"checked": checked, "problems": [p.model_dump() for p in problems]})
    else:
        for problem in problems:
            typer.echo(str(problem))
        if not problems:
            console.print(f"[green]ok[/green]: {checked} task(s) well formed")
    raise typer.Exit(1 if problems else 0)


def register(app: typer.Typer) -> None:
    app.add_typer(task_app, name="task")
