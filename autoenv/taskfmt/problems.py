"""A finding about a task (:class:`Problem`) and how bad it is (:class:`Level`): what every static check of a task
returns, and what validation's checks report beside their verdicts."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Problem(BaseModel):
    """One finding about a task: where, what, how bad, and what to do."""

    path: str
    message: str
    rule: str
    line: int | None = None
    level: Level = Level.ERROR
    advice: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def __str__(self) -> str:
        text = f"{self.where}: {self.level}: {self.message} [{self.rule}]"
        return f"{text}\n  -> {self.advice}" if self.advice else text


def errors(problems: list[Problem], *, strict: bool = False) -> list[Problem]:
    """The problems that make a task invalid: errors, and warnings too when ``strict``."""
    counted = {Level.ERROR, Level.WARNING} if strict else {Level.ERROR}
    return [p for p in problems if p.level in counted]
