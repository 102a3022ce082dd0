"""Shared CLI plumbing: options read from the config models, consistent error exits and JSON output."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, NoReturn

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


def option(model: type[BaseModel], name: str, *flags: str, **extra: Any) -> Any:
    """A ``typer.Option`` for a config model's field: its help is the field's description.

    Commands take their defaults from :func:`default` of the same field, so a default is written once, on the
    model the library reads too.
    """
    return typer.Option(*flags, help=model.model_fields[name].description, **extra)


def default(model: type[BaseModel], name: str) -> Any:
    """The config model's default of field ``name``."""
    return model.model_fields[name].get_default(call_default_factory=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one clear line to stderr and exit non-zero (never a traceback); a JSON line under ``--log-format
    json``."""
    from autoenv.cli.logs import json_logging

    if json_logging():
        logging.getLogger("autoenv.cli").error(message, extra={"event": "error", "fields": {"exit_code": code}})
    else:
        console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def fail_with(exc: BaseException, *, task: Any = None, env: str | None = None, json_out: bool = False) -> NoReturn:
    """Exit on an exception, said for a user: its kind (the task, the backend, infrastructure, a bug), what it
    means for the task and what to do, as JSON on stdout with ``json_out``; the exit code tells the kinds apart."""
    from autoenv.errors import explain

    explained = explain(exc, task=task, env=env)
    if json_out:
        print_json({"error": explained.model_dump(mode="json")})
    from autoenv.cli.logs import json_logging

    if json_logging():
        fields = {"exit_code": explained.exit_code, "kind": explained.kind}
        logging.getLogger("autoenv.cli").error(str(explained), extra={"event": "error", "fields": fields})
    else:
        console.print(f"[red]error ({explained.kind}):[/red] {escape(str(explained))}", highlight=False, soft_wrap=True)
    raise typer.Exit(explained.exit_code)


def require_machine(env: str, *, json_out: bool = False) -> None:
    """Stop with ``autoenv doctor``'s advice (exit 4) when this machine cannot run the ``env`` backend."""
    from autoenv.errors import MachineError
    from autoenv.trials.doctor import require_machine as check

    try:
        check(env)
    except MachineError as exc:
        fail_with(exc, env=env, json_out=json_out)


def fields_of(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """The command's arguments that are fields of ``model`` (a command passes ``locals()`` before it binds more)."""
    return {name: value for name, value in values.items() if name in model.model_fields}


class LineProgress:
    """The progress bar's stand-in where stderr is not a terminal (a log, CI, a pipe): one line per event.

    Rich draws nothing live there, so a long command would be silent until it ends; this prints
    ``label done/total: note`` each time the note changes, and nothing else.
    """

    def __init__(self, label: str, field: str):
        self.label, self.field = label, field
        self.tasks: dict[int, dict[str, Any]] = {}

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        self.tasks[len(self.tasks)] = {"description": description, "total": total, "completed": 0, **fields}
        return len(self.tasks) - 1

    def update(self, task_id: int, *, advance: float = 0, **fields: Any) -> None:
        task = self.tasks[task_id]
        task["completed"] += advance
        before = task.get(self.field)
        task.update(fields)
        if advance or task.get(self.field) != before:
            label = self.label.replace("[bold]", "").replace("{task.description}", task["description"])
            total = f"/{task['total']:g}" if task["total"] is not None else ""
            print(f"{label} {task['completed']:g}{total}: {task.get(self.field, '')}", file=sys.stderr, flush=True)


def progress_bar(label: str, field: str, *, transient: bool = False) -> Progress | LineProgress:
    """The one progress bar of every long command: ``label``, bar, done/total, elapsed, then ``task.fields[field]``;
    one line per event where stderr is not a terminal."""
    if not console.is_terminal:
        return LineProgress(label, field)
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn(f"{{task.fields[{field}]}}"),
        console=console,
        transient=transient,
    )


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
