"""Shared CLI plumbing: consistent error exits and JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

console = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one clear line to stderr and exit non-zero (never a traceback)."""
    console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
