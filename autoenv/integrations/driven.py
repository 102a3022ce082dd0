"""A Harbor agent whose commands come from outside the trial: the seam through which a trainer's own loop acts.

Online RL trainers (TRL's ``GRPOTrainer`` with ``environment_factory``) own the rollout loop: they generate, call
a tool, append its output and generate again. autoenv's grading should still be the one every other trial gets:
Harbor's ``Trial`` with autoenv's environment, the task's tests uploaded afterwards and run in a fresh sandbox
(``environment_mode = "separate"``). So the trainer's tool calls enter a real Harbor trial through this agent:
:func:`open_session` starts the trial, the agent's ``run`` serves the session's commands in the agent's sandbox
until the session is submitted, then Harbor's trial carries on as always (artifacts, verifier, reward).

Sessions live in this process (the bridge, :mod:`autoenv.integrations.bridge`); the agent finds its session by
the id in its kwargs, which are plain data because Harbor writes the trial config to disk.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, override

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from autoenv.errors import TaskError

IMPORT_PATH = "autoenv.integrations.driven:DrivenAgent"

#: What a command's output is cut to (TRL's Harbor environment cuts at the same length).
MAX_OUTPUT = 8000


@dataclass
class Command:
    command: str
    timeout_sec: int | None
    reply: asyncio.Future = field(repr=False)


@dataclass
class Session:
    """One trial driven from outside: its instruction once the agent phase starts, then a queue of commands."""

    id: str
    instruction: asyncio.Future
    commands: asyncio.Queue
    submitted: asyncio.Event
    trial: asyncio.Task | None = None
    n_commands: int = 0


_SESSIONS: dict[str, Session] = {}


def new_session() -> Session:
    loop = asyncio.get_running_loop()
    session = Session(
        id=uuid.uuid4().hex, instruction=loop.create_future(), commands=asyncio.Queue(), submitted=asyncio.Event()
    )
    _SESSIONS[session.id] = session
    return session


def drop_session(session: Session) -> None:
    _SESSIONS.pop(session.id, None)


def find_session(session_id: Any) -> Session | None:
    return _SESSIONS.get(session_id) if isinstance(session_id, str) else None


def open_sessions() -> list[Session]:
    return list(_SESSIONS.values())


class DrivenAgent(BaseAgent):
    """Runs the commands its session receives, in the agent's sandbox, until the session is submitted."""

    SUPPORTS_ATIF = False

    def __init__(self, logs_dir: Path, model_name: str | None = None, *, session: str, **kwargs: Any):
        super().__init__(logs_dir=logs_dir, model_name=model_name, **kwargs)
        if session not in _SESSIONS:
            raise TaskError(f"driven agent: no session {session!r} in this process (it is started by the bridge)")
        self._session = _SESSIONS[session]

    @staticmethod
    @override
    def name() -> str:
        return "autoenv-driven"

    @override
    def version(self) -> str:
        return "1"

    @override
    async def setup(self, environment: BaseEnvironment) -> None:
        pass

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        session = self._session
        if not session.instruction.done():
            session.instruction.set_result(instruction)
        log = Path(self.logs_dir) / "commands.jsonl"
        while True:
            get = asyncio.ensure_future(session.commands.get())
            done = asyncio.ensure_future(session.submitted.wait())
            try:
                await asyncio.wait({get, done}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # also on cancellation (the agent's timeout): never leave the waits behind
                for waiter in (get, done):
                    if not waiter.done():
                        waiter.cancel()
            if not get.done() or get.cancelled():
                break
            item: Command = get.result()
            started = time.monotonic()
            try:
                result = await environment.exec(item.command, timeout_sec=item.timeout_sec)
            except Exception as exc:  # noqa: BLE001 - the caller decides; the trial goes on to its verdict
                if not item.reply.done():
                    item.reply.set_exception(exc)
                continue
            session.n_commands += 1
            with log.open("a", encoding="utf-8") as f:
                f.write(
                    json.dumps(
                        {
                            "command": item.command,
                            "return_code": result.return_code,
                            "seconds": round(time.monotonic() - started, 3),
                        }
                    )
                    + "\n"
                )
            if not item.reply.done():
                item.reply.set_result(result)
        context.metadata = {**(context.metadata or {}), "n_turns": session.n_commands}


def format_output(stdout: str | None, stderr: str | None, return_code: int) -> str:
    """A command's result as a tool message: output, cut to :data:`MAX_OUTPUT`, and the exit status if not 0."""
    out = (stdout or "") + (stderr or "")
    if len(out) > MAX_OUTPUT:
        out = out[:MAX_OUTPUT] + "\n... [truncated]"
    if return_code != 0:
        out += f"\n(exit status {return_code})"
    return out or "(no output)"


__all__ = [
    "IMPORT_PATH",
    "DrivenAgent",
    "Session",
    "Command",
    "new_session",
    "drop_session",
    "find_session",
    "open_sessions",
    "format_output",
]
