"""The bridge: autoenv's trials, driven one command at a time by a process that cannot import Harbor.

``python -m autoenv.integrations.bridge`` (the main interpreter: Python 3.12, Harbor, autoenv) reads requests as
JSON lines on stdin and answers on stdout, one line per request, matched by ``id``; requests are served
concurrently, so one bridge serves every environment of a trainer. Trainers run where their torch is (autoenv's
training env is Python 3.11, Harbor needs 3.12), which is why the trainer side
(:mod:`autoenv.integrations.trl`) talks to this process instead of importing Harbor.

Requests (``op`` and its fields) and what ``result`` holds:

- ``start`` ``task_dir``, ``env`` (autoenv backend, default ``local``), ``trials_dir``, ``agent_timeout_sec``:
  a Harbor trial of the task with :class:`~autoenv.integrations.driven.DrivenAgent` is started (environment
  built and started, agent phase entered); ``{"session", "instruction"}``.
- ``exec`` ``session``, ``command``, ``timeout_sec``: the command in the agent's sandbox, as the task's agent
  user; ``{"return_code", "output"}`` (``output``: the tool message, cut to 8,000 characters).
- ``submit`` ``session``: the agent phase ends and the trial finishes as every autoenv trial does (outputs
  collected, tests in a fresh sandbox); ``{"reward", "error", "error_message", "trial_dir", "n_commands"}``.
  ``reward`` is None when the trial could not reach a verdict (a sandbox fault: not a training signal).
- ``close`` ``session``: the trial is cancelled without a verdict (its sandboxes are removed).

Errors come back as ``{"id", "error": {"kind", "message"}}`` with ``kind`` a :class:`~autoenv.errors.Fault`.

Only tasks that grade in a fresh sandbox are accepted (``environment_mode = "separate"``): in shared mode the
tests run where the policy was root, which is how the red team forged rewards (issue 13). Nor are tasks whose
tests import the agent's code into pytest or start its programs as the tests' user (the in-judge check of
:func:`autoenv.taskfmt.check.agent_code_in_judge`): there the policy's code decides its reward (issue 39).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from autoenv.errors import Fault, TaskError, explain
from autoenv.integrations.driven import (
    IMPORT_PATH,
    Command,
    Session,
    drop_session,
    find_session,
    format_output,
    new_session,
    open_sessions,
)
from autoenv.taskfmt.check import agent_code_in_judge, grades_apart
from autoenv.trials.attribution import Party, party
from autoenv.trials.runner import arun_trial, quiet_harbor_logs

SHARED_MODE_ADVICE = (
    "grades in the agent's own sandbox (Harbor's shared verifier mode): a policy that is root there can forge "
    'its reward. Set environment_mode = "separate" under [verifier] and artifacts = ["/app"] (the folders the '
    "tests read) at the top of task.toml, as autoenv's tasks do."
)


IN_JUDGE_REFUSAL = (
    "the tests run the agent's code in the process that decides the reward, or as its user, so a policy's module "
    "or program can decide its own reward (end pytest with status 0, rewrite its reports, read the expected "
    "values) without doing the task: validation's in-judge check (autoenv task check) refuses the same"
)


def check_gradable(task_dir: Path) -> None:
    """Nothing if the task grades in a fresh sandbox and its tests keep the agent's code out of the judge (the
    in-judge check that ``autoenv task check`` and validation make); else a :class:`TaskError` that says why and
    how to fix it."""
    if not (task_dir / "task.toml").is_file():
        raise TaskError(f"{task_dir}: not a Harbor task (no task.toml)")
    if not grades_apart(task_dir):
        raise TaskError(f"{task_dir / 'task.toml'}: unreadable, or it {SHARED_MODE_ADVICE}")
    if found := agent_code_in_judge(task_dir):
        where = "; ".join(f"{p.path}:{p.line}: {p.message}" for p in found[:5])
        raise TaskError(f"{task_dir.name}: {IN_JUDGE_REFUSAL}. {where}. Fix: {found[0].advice}")


class Bridge:
    """Serves requests on the event loop; one instance per process."""

    def __init__(self, write: Any):
        self._write = write

    def session(self, request: dict[str, Any]) -> Session:
        session = find_session(request.get("session"))
        if session is None:
            raise TaskError(f"no open session {request.get('session')!r} (it was submitted, closed, or never started)")
        return session

    async def start(self, request: dict[str, Any]) -> dict[str, Any]:
        task_dir = Path(request["task_dir"]).resolve()
        check_gradable(task_dir)
        session = new_session()
        session.trial = asyncio.ensure_future(
            arun_trial(
                task_dir,
                IMPORT_PATH,
                env=request.get("env") or "local",
                agent_kwargs={"session": session.id},
                trials_dir=request.get("trials_dir"),
                agent_timeout_sec=request.get("agent_timeout_sec"),
            )
        )
        await asyncio.wait({session.instruction, session.trial}, return_when=asyncio.FIRST_COMPLETED)
        if not session.instruction.done():  # the trial ended before its agent phase: build or sandbox failure
            drop_session(session)
            outcome = session.trial.result()
            kind = Fault.SANDBOX if party(outcome.error) is Party.MACHINE else Fault.TASK
            raise _Failure(
                kind,
                f"{task_dir.name}: the trial ended before the agent phase ({outcome.error}): "
                f"{(outcome.error_message or '').strip()[-1500:]}",
            )
        return {"session": session.id, "instruction": session.instruction.result()}

    async def exec(self, request: dict[str, Any]) -> dict[str, Any]:
        session = self.session(request)
        if session.trial is not None and session.trial.done():
            raise TaskError("the trial's agent phase has ended (its time ran out); submit it for the verdict")
        reply = asyncio.get_running_loop().create_future()
        timeout = request.get("timeout_sec")
        await session.commands.put(Command(str(request["command"]), int(timeout) if timeout else None, reply))
        await asyncio.wait({reply, session.trial}, return_when=asyncio.FIRST_COMPLETED)
        if not reply.done():
            reply.cancel()
            raise TaskError("the trial's agent phase ended before the command ran (its time ran out)")
        result = reply.result()
        output = format_output(result.stdout, result.stderr, result.return_code)
        return {"return_code": result.return_code, "output": output}

    async def submit(self, request: dict[str, Any]) -> dict[str, Any]:
        session = self.session(request)
        session.submitted.set()
        try:
            outcome = await session.trial
        finally:
            drop_session(session)
        who = party(outcome.error)
        return {
            "reward": outcome.reward,
            # whose fault a missing verdict is (autoenv.trials.attribution): the trainer trains only on the agent's
            "party": who.value if who is not None else "bug",
            "error": outcome.error,
            "error_message": outcome.error_message,
            "trial_dir": outcome.trial_dir,
            "n_commands": session.n_commands,
        }

    async def close(self, request: dict[str, Any]) -> dict[str, Any]:
        session = find_session(request.get("session"))
        if session is None:
            return {"closed": False}
        drop_session(session)
        if session.trial is not None and not session.trial.done():
            session.trial.cancel()
            await asyncio.gather(session.trial, return_exceptions=True)
        return {"closed": True}

    async def handle(self, line: str) -> None:
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            op = request.get("op")
            if op not in {"start", "exec", "submit", "close"}:
                raise TaskError(f"unknown op {op!r} (start, exec, submit, close)")
            result = await getattr(self, op)(request)
            self._write({"id": request.get("id"), "result": result})
        except _Failure as failure:
            self._write({"id": request.get("id"), "error": {"kind": failure.kind.value, "message": str(failure)}})
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller, classified
            explanation = explain(exc)
            error = {"kind": explanation.kind.value, "message": str(explanation)}
            self._write({"id": request.get("id"), "error": error})


class _Failure(Exception):
    def __init__(self, kind: Fault, message: str):
        super().__init__(message)
        self.kind = kind


async def serve(reader: asyncio.StreamReader, write: Any) -> None:
    bridge = Bridge(write)
    pending: set[asyncio.Task] = set()
    while line := await reader.readline():
        if line.strip():
            task = asyncio.ensure_future(bridge.handle(line.decode()))
            pending.add(task)
            task.add_done_callback(pending.discard)
    for session in open_sessions():  # the trainer went away: remove what it left running
        await bridge.close({"session": session.id})
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def main() -> int:
    # the protocol gets the real stdout to itself; anything a library prints goes to stderr
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    quiet_harbor_logs()

    def write(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message, default=str) + "\n")

    async def run() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        write({"id": None, "result": {"ready": True, "pid": os.getpid()}})
        await serve(reader, write)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
