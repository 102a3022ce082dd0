"""Shared CLI plumbing: options read from the config models, consistent error exits and JSON output."""

from __future__ import annotations

import json
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
    """Print one clear line to stderr and exit non-zero (never a traceback)."""
    console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def fail_with(exc: BaseException, *, task: Any = None, env: str | None = None, json_out: bool = False) -> NoReturn:
    """Exit on an exception, said for a user: its kind (the task, the backend, infrastructure, a bug), what it
    means for the task and what to do, as JSON on stdout with ``json_out``; the exit code tells the kinds apart."""
    from autoenv.errors import explain

    explained = explain(exc, task=task, env=env)
    if json_out:
        print_json({"error": explained.model_dump(mode="json")})
    console.print(f"[red]error ({explained.kind}):[/red] {escape(str(explained))}", highlight=False, soft_wrap=True)
    raise typer.Exit(explained.exit_code)


def fields_of(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """The command's arguments that are fields of ``model`` (a command passes ``locals()`` before it binds more)."""
    return {name: value for name, value in values.items() if name in model.model_fields}


def progress_bar(label: str, field: str, *, transient: bool = False) -> Progress:
    """The one progress bar of every long command: ``label``, bar, done/total, elapsed, then ``task.fields[field]``."""
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
