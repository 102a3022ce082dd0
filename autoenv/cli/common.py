"""Shared CLI plumbing: consistent error exits and JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

console = Console(stderr=True)


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


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
