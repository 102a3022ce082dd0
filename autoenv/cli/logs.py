"""The CLI's one logging setup: what the library logs under ``autoenv`` reaches stderr as text a person reads
or as JSON lines a machine reads (``--log-format``).

- text in a terminal: Rich's handler on the CLI's console, so log lines scroll above the progress bar;
- text elsewhere (a CI log, a pipe): one event a line, ``HH:MM:SS message`` (``warning:`` before warnings);
- json: one object a line, ``{"time", "level", "event", "message", ...the event's fields}``, every event
  (rollouts included), whether or not stderr is a terminal.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from enum import StrEnum

from rich.console import Console
from rich.logging import RichHandler

LOGGER = "autoenv"
_MARK = "_autoenv_cli_handler"


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class LineFormatter(logging.Formatter):
    """``12:30:01 collect 2 tasks x 4 rollouts``: one line per record, its time and its message."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        level = "" if record.levelno < logging.WARNING else f"{record.levelname.lower()}: "
        text = record.getMessage().replace("\n", " ")
        return f"{when} {level}{text}"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: its time (UTC, ISO 8601), level, event, message and the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        obj = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": getattr(record, "event", None) or "log",
            "message": record.getMessage(),
        }
        for key, value in (getattr(record, "fields", None) or {}).items():
            obj.setdefault(key, value)
        if record.exc_info:
            obj["exception"] = self.formatException(record.exc_info)
        return json.dumps(obj, default=str)


def json_logging() -> bool:
    """Whether the CLI writes its log as JSON lines (then its errors are JSON lines too)."""
    return any(
        getattr(h, _MARK, False) and isinstance(h.formatter, JsonFormatter) for h in logging.getLogger(LOGGER).handlers
    )


def setup_logging(fmt: LogFormat | str, console: Console) -> logging.Logger:
    """Route the ``autoenv`` loggers to stderr in ``fmt``; called again, it replaces its own handler."""
    fmt = LogFormat(fmt)
    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if getattr(h, _MARK, False)]:
        logger.removeHandler(handler)
    handler: logging.Handler
    if fmt == LogFormat.JSON:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        logger.setLevel(logging.DEBUG)
    elif console.is_terminal:
        handler = RichHandler(console=console, show_path=False, markup=False, log_time_format="[%X]")
        logger.setLevel(logging.INFO)
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(LineFormatter())
        logger.setLevel(logging.INFO)
    setattr(handler, _MARK, True)
    logger.addHandler(handler)
    logger.propagate = False
    return logger
